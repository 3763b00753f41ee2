"""What the query asks for: disclosure levels, the query analyzer, and ingest enrichment."""

from analyzers.analyzer import QueryComplexityAnalyzer
from analyzers.config import AnalyzerConfig
from analyzers.enrich import Enrichment, enrich, enrich_many
from analyzers.facets import facets_many
from analyzers.levels import DisclosureLevel, QueryAnalysis, TemporalReference

__all__ = [
    "AnalyzerConfig",
    "DisclosureLevel",
    "Enrichment",
    "QueryAnalysis",
    "QueryComplexityAnalyzer",
    "TemporalReference",
    "enrich",
    "enrich_many",
    "facets_many",
]

"""What the query asks for: disclosure levels and the query analysis."""

from analyzers.levels import DisclosureLevel, QueryAnalysis, TemporalReference

__all__ = ["DisclosureLevel", "QueryAnalysis", "TemporalReference"]

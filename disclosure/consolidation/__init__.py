"""Consolidation of memories that left the working set into long-term summaries, each at three
detail levels (index line, paragraph, full text) and linked to its untouched sources."""

from disclosure.consolidation.config import ConsolidationConfig
from disclosure.consolidation.consolidator import ConsolidationReport, Consolidator
from disclosure.consolidation.search import SummaryHit, SummaryIndex
from disclosure.consolidation.store import Summary, SummaryStore
from disclosure.consolidation.summarize import OpenAISummarizer, SummarizerFn, SummaryText

__all__ = [
    "ConsolidationConfig",
    "ConsolidationReport",
    "Consolidator",
    "OpenAISummarizer",
    "SummarizerFn",
    "Summary",
    "SummaryHit",
    "SummaryIndex",
    "SummaryStore",
    "SummaryText",
]

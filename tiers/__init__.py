"""Where memories live: the Memory record, the Tier protocol, and the hot / warm / cold tiers."""

from tiers.citations import citation_code
from tiers.cold import ColdArchive
from tiers.errors import (
    CorruptDataError,
    DisclosureError,
    IncompatibleDataError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    StorageError,
    TierClosedError,
    TierUnavailableError,
)
from tiers.history import history_line
from tiers.hot import HotTier
from tiers.memory import Memory, MemoryKind, ScoredMemory
from tiers.reports import ForgetReport, IngestReport, StoreStats
from tiers.store import TieredStore
from tiers.text import Tokenizer, tokenize

__all__ = [
    "ColdArchive",
    "CorruptDataError",
    "DisclosureError",
    "ForgetReport",
    "HotTier",
    "IncompatibleDataError",
    "IngestReport",
    "InvalidInputError",
    "Memory",
    "MemoryKind",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "ScoredMemory",
    "StorageError",
    "StoreStats",
    "TierClosedError",
    "TierUnavailableError",
    "TieredStore",
    "Tokenizer",
    "citation_code",
    "history_line",
    "tokenize",
]

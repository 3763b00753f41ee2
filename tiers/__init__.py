"""Where memories live: the Memory record, the Tier protocol, and the hot / warm / cold tiers."""

from tiers.errors import (
    CorruptDataError,
    DisclosureError,
    IncompatibleDataError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    StorageError,
    TierUnavailableError,
)
from tiers.memory import Memory, MemoryKind, ScoredMemory

__all__ = [
    "CorruptDataError",
    "DisclosureError",
    "IncompatibleDataError",
    "InvalidInputError",
    "Memory",
    "MemoryKind",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "ScoredMemory",
    "StorageError",
    "TierUnavailableError",
]

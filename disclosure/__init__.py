"""tiered-disclosure: how much past memory an LLM sees for each query, in the cheapest form.

The public surface; everything else lives in modules and may change.
"""

from analyzers import DisclosureLevel, QueryAnalysis, TemporalReference
from disclosure._version import __version__
from disclosure.errors import (
    CorruptDataError,
    DatasetError,
    DisclosureError,
    ExperimentError,
    IncompatibleDataError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    ProfileError,
    RegistryError,
    StorageError,
    TierUnavailableError,
    TokenizerError,
)
from disclosure.profiles import Profile, builtin_profiles, load_profile
from disclosure.result import DisclosedItem, DisclosureResult
from formatters.base import Layer
from formatters.tokens import TokenCounter, get_token_counter
from tiers.memory import Memory, MemoryKind, ScoredMemory

__all__ = [
    "CorruptDataError",
    "DatasetError",
    "DisclosedItem",
    "DisclosureError",
    "DisclosureLevel",
    "DisclosureResult",
    "ExperimentError",
    "IncompatibleDataError",
    "InvalidInputError",
    "Layer",
    "Memory",
    "MemoryKind",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "Profile",
    "ProfileError",
    "QueryAnalysis",
    "RegistryError",
    "ScoredMemory",
    "StorageError",
    "TemporalReference",
    "TierUnavailableError",
    "TokenCounter",
    "TokenizerError",
    "__version__",
    "builtin_profiles",
    "get_token_counter",
    "load_profile",
]

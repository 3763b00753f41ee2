"""tiered-disclosure: how much past memory an LLM sees for each query, in the cheapest form.

The public surface; everything else lives in modules and may change.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

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
    MissingDependencyError,
    NamespaceError,
    ProfileError,
    RegistryError,
    StorageError,
    TierClosedError,
    TierUnavailableError,
    TokenizerError,
)
from disclosure.middleware.chat import CallOptions, DisclosureMiddleware, TurnRecord
from disclosure.namespaces import Namespace, default_home
from disclosure.pool import ControllerPool
from disclosure.profiles import Profile, builtin_profiles, load_profile
from disclosure.result import DisclosedItem, DisclosureResult
from disclosure.service_config import ContextPlacement
from formatters.base import Layer
from formatters.tokens import TokenCounter, get_token_counter
from tiers.memory import Memory, MemoryKind, ScoredMemory

if _TYPE_CHECKING:
    from disclosure.controller import DisclosureController


def __getattr__(name: str) -> _Any:
    # The controller pulls in the tiers' engines; load it on first use so `import disclosure`
    # (and the CLI's --help) stays quick.
    if name == "DisclosureController":
        from disclosure.controller import DisclosureController

        return DisclosureController
    raise AttributeError(f"module 'disclosure' has no attribute {name!r}")


__all__ = [
    "CallOptions",
    "ContextPlacement",
    "ControllerPool",
    "CorruptDataError",
    "DatasetError",
    "DisclosedItem",
    "DisclosureController",
    "DisclosureError",
    "DisclosureLevel",
    "DisclosureMiddleware",
    "DisclosureResult",
    "ExperimentError",
    "IncompatibleDataError",
    "InvalidInputError",
    "Layer",
    "Memory",
    "MemoryKind",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "MissingDependencyError",
    "Namespace",
    "NamespaceError",
    "Profile",
    "ProfileError",
    "QueryAnalysis",
    "RegistryError",
    "ScoredMemory",
    "StorageError",
    "TemporalReference",
    "TierClosedError",
    "TierUnavailableError",
    "TokenCounter",
    "TokenizerError",
    "TurnRecord",
    "__version__",
    "builtin_profiles",
    "default_home",
    "get_token_counter",
    "load_profile",
]

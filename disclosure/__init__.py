"""tiered-disclosure: how much past memory an LLM sees for each query, in the cheapest form.

The public surface; everything else lives in modules and may change.

The package is built in rooms. A module imports modules of its own room and of the rooms below
it, never of a room above (``tests/test_layout.py`` holds this, and that no imports go round in
a circle)::

    faces/          how people and programs reach it: api/, cli/, mcp/, middleware/, viewer/,
                    memories.py (the mem0-style facade), extras.py, limits.py
    service/        the local service (its file, lock and discovery), its host, the controller
                    pool, the HTTP API's clients
    evaluation/     A/B runs over the benchmark sets (beside service/: neither imports the other)
    core/           the controller, its pipeline/, the profile, the results, transfer
    consolidation/  summaries of what left the working set (the controller runs them)
    storage/        a namespace's directory and the stores kept beside its tiers
    (the root)      errors.py, safe_yaml.py, sample.py: small modules any room may use

Bottom to top: root < storage < consolidation < core < service, evaluation < faces. This
``__init__`` and ``__main__`` stand above them all. Below :mod:`disclosure` are the packages it
builds on: :mod:`formatters` (over :mod:`safeguards`), :mod:`tiers` and :mod:`analyzers`.

Modules that moved keep their old paths: :mod:`disclosure._moved` holds the table of old and
new paths and the import hook that makes an old path the very module at the new one.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from disclosure._moved import install as _install_moved
from disclosure._version import __version__

_install_moved()

if _TYPE_CHECKING:
    from analyzers import DisclosureLevel, QueryAnalysis, TemporalReference
    from disclosure.core.controller import DisclosureController
    from disclosure.core.profile_sections import ContextPlacement
    from disclosure.core.profiles import Profile, builtin_profiles, load_profile
    from disclosure.core.result import DisclosedItem, DisclosureResult
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
        ServiceError,
        StorageError,
        TierClosedError,
        TierUnavailableError,
        TokenizerError,
    )
    from disclosure.faces.middleware.chat import CallOptions, DisclosureMiddleware, TurnRecord
    from disclosure.service.client import AsyncMemoryClient, MemoryClient
    from disclosure.service.pool import ControllerPool
    from disclosure.storage.namespaces import Namespace, default_home
    from formatters.base import Layer
    from formatters.tokens import TokenCounter, get_token_counter
    from tiers.memory import Memory, MemoryKind, ScoredMemory

# Every public name is loaded on first use, so that `import disclosure` (and a command line
# served by a running service) does not pay for the analyzer, the tiers and the formatters.
_WHERE = {
    "disclosure.errors": (
        "CorruptDataError DatasetError DisclosureError ExperimentError IncompatibleDataError "
        "InvalidInputError MemoryNotFoundError MemoryValidationError MissingDependencyError "
        "NamespaceError ProfileError RegistryError ServiceError StorageError TierClosedError "
        "TierUnavailableError TokenizerError"
    ),
    "analyzers": "DisclosureLevel QueryAnalysis TemporalReference",
    "disclosure.service.client": "AsyncMemoryClient MemoryClient",
    "disclosure.core.controller": "DisclosureController",
    "disclosure.faces.middleware.chat": "CallOptions DisclosureMiddleware TurnRecord",
    "disclosure.storage.namespaces": "Namespace default_home",
    "disclosure.service.pool": "ControllerPool",
    "disclosure.core.profiles": "Profile builtin_profiles load_profile",
    "disclosure.core.result": "DisclosedItem DisclosureResult",
    "disclosure.core.profile_sections": "ContextPlacement",
    "formatters.base": "Layer",
    "formatters.tokens": "TokenCounter get_token_counter",
    "tiers.memory": "Memory MemoryKind ScoredMemory",
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names.split()}


def __getattr__(name: str) -> _Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'disclosure' has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AsyncMemoryClient",
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
    "MemoryClient",
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
    "ServiceError",
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

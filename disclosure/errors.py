"""The library's errors, for users: ``from disclosure.errors import ProfileError``.

They are defined in :mod:`tiers.errors`, at the bottom of the import graph so every package can
raise them; that module's docstring draws the hierarchy.
"""

from tiers.errors import (
    CorruptDataError,
    DatasetError,
    DisclosureError,
    DiskFullError,
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

__all__ = [
    "CorruptDataError",
    "DatasetError",
    "DisclosureError",
    "DiskFullError",
    "ExperimentError",
    "IncompatibleDataError",
    "InvalidInputError",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "MissingDependencyError",
    "NamespaceError",
    "ProfileError",
    "RegistryError",
    "ServiceError",
    "StorageError",
    "TierClosedError",
    "TierUnavailableError",
    "TokenizerError",
]

"""Every error this library raises on purpose, in one hierarchy.

The module sits at the bottom of the import graph (``tiers`` imports nothing of ours), so every
package can raise these; ``disclosure.errors`` re-exports them for users. Each class also
subclasses the closest builtin, so ``except ValueError`` keeps working for callers who do not know
this library::

    DisclosureError                        root: catch this to catch everything below
    +-- InvalidInputError (ValueError)     bad input at a boundary: empty or oversized content
    |   +-- MemoryValidationError          a Memory field failed validation (names the field)
    |   +-- NamespaceError                 a namespace part that is missing, unknown or unsafe
    +-- ProfileError (ValueError)          a profile failed to load: file, path inside it, reason
    |   +-- ExperimentError                an A/B experiment file (or its flags) that cannot be used
    +-- RegistryError (LookupError)        an unknown plug-in name, or one registered twice
    +-- TokenizerError (RuntimeError)      a token encoding that cannot be loaded offline
    +-- MemoryNotFoundError (KeyError)     an id or citation that matches no stored memory
    +-- StorageError (OSError)             the data directory cannot be used as asked
    |   +-- IncompatibleDataError          written by an incompatible version of this library
    |   +-- CorruptDataError               a damaged database or index file
    |   +-- DiskFullError                  no space left: nothing was written, retry once there is
    +-- TierUnavailableError (RuntimeError) a tier's backend (embedder, Chroma server) failed
    |   +-- TierClosedError                a tier or store used after close()
    +-- DatasetError (ValueError)          evaluation data that cannot be read or repaired
    +-- MissingDependencyError (ImportError) an optional extra that is not installed
    +-- ServiceError (ConnectionError)     the memory service is unreachable or refused a request

Messages say what was wrong, where, and what is valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class DisclosureError(Exception):
    """Root of the library's errors."""


class InvalidInputError(DisclosureError, ValueError):
    """Bad input at a boundary."""


class MemoryValidationError(InvalidInputError):
    """A Memory field failed validation; ``errors`` keeps pydantic's structured list."""

    def __init__(self, message: str, errors: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.errors = list(errors)


class NamespaceError(InvalidInputError):
    """A namespace (tenant / user / conversation) part that is missing, unknown or unsafe."""


class ProfileError(DisclosureError, ValueError):
    """A profile failed to load or validate."""


class ExperimentError(ProfileError):
    """An A/B experiment file, or the command-line flags standing in for one, is unusable."""


class RegistryError(DisclosureError, LookupError):
    """An unknown plug-in name, or a name registered twice to different objects."""

    def __str__(self) -> str:  # LookupError subclasses of KeyError quote; keep plain text
        return str(self.args[0]) if self.args else ""


class TokenizerError(DisclosureError, RuntimeError):
    """A token encoding that cannot be loaded."""


class MemoryNotFoundError(DisclosureError, KeyError):
    """An id or citation that matches no stored memory."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


class StorageError(DisclosureError, OSError):
    """The data directory cannot be used as asked."""


class IncompatibleDataError(StorageError):
    """The data directory was written by an incompatible version."""


class CorruptDataError(StorageError):
    """A database or index file is damaged."""


class DiskFullError(StorageError):
    """No space left on the data directory's disk; the write was not made."""


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (an OSError or an SQLite error) says the disk is full."""
    import errno

    if isinstance(exc, DiskFullError):
        return True
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "disk is full" in text or "no space left" in text


class TierUnavailableError(DisclosureError, RuntimeError):
    """A tier's backend failed (the embedder, a Chroma server)."""


class TierClosedError(TierUnavailableError):
    """A tier or store used after ``close()``."""


class DatasetError(DisclosureError, ValueError):
    """Evaluation data that cannot be read or repaired."""


class MissingDependencyError(DisclosureError, ImportError):
    """An optional part (an extra such as ``[server]``) whose packages are not installed."""


class ServiceError(DisclosureError, ConnectionError):
    """The local memory service could not be reached, started or stopped, or refused a request
    (a wrong access token). ``code`` is the API's error code when the service answered."""

    def __init__(self, message: str, *, code: str = "unavailable", status: int | None = None):
        super().__init__(message)
        self.code = code
        self.status = status


def describe_validation_error(exc: ValidationError, *, sep: str = " -> ") -> str:
    """pydantic's errors as one line: ``levels -> detailed -> max_tokens: ... (got 0)``."""
    parts = []
    for err in exc.errors():
        where = sep.join(str(p) for p in err["loc"] if p != "[key]") or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        elif err["type"] not in ("missing", "value_error") and err.get("input") is not None:
            shown = repr(err["input"])
            message += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
        parts.append(f"{where}: {message}")
    return "; ".join(parts)

"""The HTTP API's stable error codes, shared by the server (code and status of each library
exception) and the clients (the library exception each code is raised as again).

Kept free of the web stack, so a client imports it without FastAPI.
"""

from __future__ import annotations

from tiers.errors import (
    CorruptDataError,
    DisclosureError,
    DiskFullError,
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

__all__ = ["ERROR_CODES", "REQUEST_CODES", "exception_for"]

#: (library error, HTTP status, code) for every error the API answers with, most specific first:
#: the first class an error is an instance of decides its status and code.
ERROR_CODES: tuple[tuple[type[DisclosureError], int, str], ...] = (
    (NamespaceError, 422, "invalid_namespace"),
    (MemoryValidationError, 422, "invalid_memory"),
    (InvalidInputError, 422, "invalid_input"),
    (MemoryNotFoundError, 404, "not_found"),
    (RegistryError, 422, "unknown_name"),
    (ProfileError, 500, "profile_error"),
    (TokenizerError, 500, "tokenizer_error"),
    (IncompatibleDataError, 409, "incompatible_data"),
    (CorruptDataError, 500, "corrupt_data"),
    (DiskFullError, 507, "disk_full"),
    (StorageError, 503, "storage_unavailable"),
    (TierClosedError, 503, "unavailable"),
    (TierUnavailableError, 503, "tier_unavailable"),
    (MissingDependencyError, 500, "missing_dependency"),
    (DisclosureError, 500, "internal_error"),
)

# Codes the API gives to requests it refuses before the library sees them.
REQUEST_CODES: dict[str, type[DisclosureError]] = {
    "validation_error": InvalidInputError,
    "query_too_long": InvalidInputError,
    "history_too_long": InvalidInputError,
    "too_many_memories": InvalidInputError,
    "payload_too_large": InvalidInputError,
    "bad_request": InvalidInputError,
    "unknown_disclosure": MemoryNotFoundError,
    "unknown_namespace": InvalidInputError,  # older services: a read of an empty namespace
}

_BY_CODE: dict[str, type[DisclosureError]] = {
    **{code: kind for kind, _status, code in ERROR_CODES if code != "internal_error"},
    **REQUEST_CODES,
}


def exception_for(code: str) -> type[DisclosureError] | None:
    """The library exception an API error ``code`` stands for; None for an unexpected failure
    (``internal_error``) or a code this version does not know."""
    return _BY_CODE.get(code)

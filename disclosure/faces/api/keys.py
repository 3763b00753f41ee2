"""API keys and what each may do: full access, or one tenant's memories, optionally read-only.

A key file has one entry a line (``#`` starts a comment line)::

    KEY                                   full access to every namespace
    KEY tenant=acme                       reads and writes tenant "acme" only
    KEY tenant=acme read-only             reads tenant "acme" only
    sha256:HEX tenant=acme label=ci       the key stored as its SHA-256 (64 hex digits)

``label=NAME`` names the key in the log (default: ``key-`` and 8 hex digits of its hash); the
key itself is never logged or echoed. ``$TIERED_DISCLOSURE_API_KEYS`` takes the same entries
separated by commas (``KEY1,KEY2 tenant=acme read-only``), so a tenant named there cannot
contain a comma (use the file for such names). Keys are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tiers.errors import InvalidInputError

API_KEYS_VARIABLE = "TIERED_DISCLOSURE_API_KEYS"
API_KEY_FILE_VARIABLE = "TIERED_DISCLOSURE_API_KEY_FILE"
MIN_KEY_CHARS = 16
HASH_PREFIX = "sha256:"
MAX_KEY_FILE_BYTES = 1_048_576


@dataclass(frozen=True, slots=True)
class Grant:
    """What an accepted key may do. ``tenant`` None: every namespace."""

    label: str
    tenant: str | None = None
    read_only: bool = False

    def allows(self, tenant: str | None, *, write: bool) -> bool:
        """May this key act on a namespace of ``tenant`` (None: the namespace has no tenant)?"""
        if write and self.read_only:
            return False
        return self.tenant is None or (
            tenant is not None
            and hmac.compare_digest(
                tenant.encode("utf-8", "surrogatepass"), self.tenant.encode("utf-8")
            )
        )


def _digest(key: str | bytes) -> bytes:
    raw = key if isinstance(key, bytes) else key.encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).digest()


class ApiKeys:
    """The accepted keys, each with its :class:`Grant`; ``bool(keys)``: authentication is on."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        parsed: dict[bytes, Grant] = {}
        for entry in entries:
            if entry.strip():
                digest, grant = parse_entry(entry)
                parsed[digest] = grant
        self._grants = tuple(parsed.items())

    def __bool__(self) -> bool:
        return bool(self._grants)

    def __len__(self) -> int:
        return len(self._grants)

    def __repr__(self) -> str:  # never the keys themselves
        return f"ApiKeys({len(self._grants)} keys)"

    def grant(self, given: str | None) -> Grant | None:
        """The grant of ``given``, or None; compares against every key (no early exit)."""
        if not given:
            return None
        candidate = _digest(given)
        found: Grant | None = None
        for digest, grant in self._grants:
            if hmac.compare_digest(candidate, digest):
                found = grant
        return found

    def accepts(self, given: str | None) -> bool:
        return self.grant(given) is not None


def parse_entry(entry: str) -> tuple[bytes, Grant]:
    """``KEY [tenant=NAME] [read-only] [label=NAME]`` as (the key's SHA-256, its grant)."""
    key, *options = entry.split()
    digest = _key_digest(key)
    tenant: str | None = None
    label = f"key-{digest.hex()[:8]}"
    read_only = False
    for option in options:
        name, sep, value = option.partition("=")
        if option in ("read-only", "readonly", "ro"):
            read_only = True
        elif sep and name == "tenant" and value:
            tenant = value
        elif sep and name == "label" and value:
            label = value
        else:
            raise InvalidInputError(
                f"API key entry (label {label}): unknown option {option[:40]!r}; an entry is "
                f"'KEY [tenant=NAME] [read-only] [label=NAME]'"
            )
    return digest, Grant(label, tenant, read_only)


def _key_digest(key: str) -> bytes:
    if key.startswith(HASH_PREFIX):
        hexdigits = key[len(HASH_PREFIX) :].lower()
        if len(hexdigits) != 64 or not set(hexdigits) <= set(string.hexdigits.lower()):
            raise InvalidInputError("a hashed API key is 'sha256:' and 64 hex digits")
        return bytes.fromhex(hexdigits)
    if len(key) < MIN_KEY_CHARS:
        raise InvalidInputError(
            f"an API key is shorter than {MIN_KEY_CHARS} characters; use long random keys "
            f"(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return _digest(key)


def hash_key(key: str) -> str:
    """The form to store in a key file instead of ``key``: ``sha256:HEX``."""
    return HASH_PREFIX + _digest(key).hex()


def load_api_keys(
    file: Path | str | None = None, *, environ: Mapping[str, str] | None = None
) -> ApiKeys:
    """Keys from ``file`` (else ``$TIERED_DISCLOSURE_API_KEY_FILE``), plus those in
    ``$TIERED_DISCLOSURE_API_KEYS``."""
    env = os.environ if environ is None else environ
    entries = [k for k in env.get(API_KEYS_VARIABLE, "").split(",") if k.strip()]
    path = file or env.get(API_KEY_FILE_VARIABLE)
    if path:
        entries += _file_entries(Path(path).expanduser())
    return ApiKeys(entries)


def _file_entries(path: Path) -> list[str]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_KEY_FILE_BYTES + 1)
        if len(data) > MAX_KEY_FILE_BYTES:
            raise InvalidInputError(f"the API key file {path} is over {MAX_KEY_FILE_BYTES} bytes")
        text = data.decode("utf-8")
    except OSError as exc:
        reason = exc.strerror or exc
        raise InvalidInputError(f"cannot read the API key file {path}: {reason}") from None
    except UnicodeDecodeError:
        raise InvalidInputError(f"the API key file {path} is not UTF-8 text") from None
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


__all__ = [
    "API_KEYS_VARIABLE",
    "API_KEY_FILE_VARIABLE",
    "ApiKeys",
    "Grant",
    "hash_key",
    "load_api_keys",
]

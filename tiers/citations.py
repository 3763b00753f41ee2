"""Short citation codes for memories: ``[mem:a7Bc3x]`` cites memory ``a7Bc3x``.

A code is the first ``length`` characters of the unpadded base64url SHA-256 of the memory's
id. Two ids whose codes collide are told apart by the archive: the first keeps the short code,
the second gets the next longer prefix of its own hash that no other memory holds (7, 8, ...
characters), so every code stays a prefix of its id's digest and resolving one is an exact
lookup. Codes are persisted, so a collision never renames a memory that was cited before.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator

MAX_CODE_LENGTH = 43  # a SHA-256 digest is 43 base64url characters without padding


def citation_digest(memory_id: str) -> str:
    """The full base64url SHA-256 of ``memory_id``; every code is a prefix of it."""
    digest = hashlib.sha256(memory_id.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def citation_code(memory_id: str, length: int = 6) -> str:
    """The ``length``-character code of ``memory_id`` before any collision."""
    if not 1 <= length <= MAX_CODE_LENGTH:
        raise ValueError(f"citation length must lie in 1..{MAX_CODE_LENGTH}, not {length}")
    return citation_digest(memory_id)[:length]


def candidate_codes(memory_id: str, length: int = 6) -> Iterator[str]:
    """The codes ``memory_id`` may take, shortest first: its digest's prefixes from ``length``."""
    citation_code(memory_id, length)  # validates length
    digest = citation_digest(memory_id)
    for size in range(length, MAX_CODE_LENGTH + 1):
        yield digest[:size]


def assign_citation(memory_id: str, length: int, holder_of: Callable[[str], str | None]) -> str:
    """The shortest candidate code not held by another id (``holder_of(code)`` -> id or None)."""
    for code in candidate_codes(memory_id, length):
        holder = holder_of(code)
        if holder is None or holder == memory_id:
            return code
    raise ValueError(f"no free citation code for {memory_id!r} (a SHA-256 collision)")

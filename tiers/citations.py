"""Short citation codes for memories: ``[mem:483920]`` cites the memory whose code is
``483920``.

A code is a prefix of the memory id's SHA-256 digest written in one of two alphabets:

- ``digits`` (the default): the digest as decimal digits. A six-digit code is two tokens for
  GPT-style tokenizers (digits go in runs of three), where six base64url characters take about
  four, and a model cannot get its case wrong. Over a whole context that is about two tokens a
  line given back to the memories.
- ``base64url``: the unpadded base64url digest (``a7Bc3x``), as codes were made before digits.

Two ids whose codes collide are told apart by the archive: the first keeps the short code, the
second gets the next longer prefix of its own digest that no other memory holds (7, 8, ...
characters), so every code stays a prefix of its id's digest and resolving one is an exact
lookup. Codes are persisted, so a collision never renames a memory that was cited before, and a
memory keeps the code it was given when the alphabet of the profile changes later: only new
memories get codes in the new alphabet.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator

from tiers.errors import InvalidInputError

ALPHABETS = ("digits", "base64url")
DEFAULT_ALPHABET = "digits"
MAX_CODE_LENGTH = 43  # the longest digest: 43 base64url characters without padding
_DIGITS = 64  # decimal digits of a digest; each is uniform (the lowest 64 of a 256-bit number)


def _check_alphabet(alphabet: str) -> None:
    if alphabet not in ALPHABETS:
        raise InvalidInputError(
            f"citation alphabet must be one of {', '.join(ALPHABETS)}, not {alphabet!r}"
        )


def _check_length(length: int) -> None:
    if not 1 <= length <= MAX_CODE_LENGTH:
        raise InvalidInputError(f"citation length must lie in 1..{MAX_CODE_LENGTH}, not {length}")


def check_citation_settings(length: int, alphabet: str) -> None:
    """Refuse a code length outside 1..:data:`MAX_CODE_LENGTH` or an unknown alphabet
    (:class:`~tiers.errors.InvalidInputError`, a ``ValueError``)."""
    _check_length(length)
    _check_alphabet(alphabet)


def citation_digest(memory_id: str, alphabet: str = DEFAULT_ALPHABET) -> str:
    """The SHA-256 of ``memory_id`` in ``alphabet``; every code is a prefix of it."""
    _check_alphabet(alphabet)
    digest = hashlib.sha256(memory_id.encode("utf-8")).digest()
    if alphabet == "base64url":
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
    number = int.from_bytes(digest, "big")
    # least significant first: every digit is uniform, so short codes spread evenly
    return str(number % 10**_DIGITS).zfill(_DIGITS)[::-1]


def citation_code(memory_id: str, length: int = 6, alphabet: str = DEFAULT_ALPHABET) -> str:
    """The ``length``-character code of ``memory_id`` before any collision."""
    _check_length(length)
    return citation_digest(memory_id, alphabet)[:length]


def candidate_codes(
    memory_id: str, length: int = 6, alphabet: str = DEFAULT_ALPHABET
) -> Iterator[str]:
    """The codes ``memory_id`` may take, shortest first: its digest's prefixes from ``length``."""
    _check_length(length)
    digest = citation_digest(memory_id, alphabet)  # validates the alphabet
    for size in range(length, len(digest) + 1):
        yield digest[:size]


def assign_citation(
    memory_id: str,
    length: int,
    holder_of: Callable[[str], str | None],
    alphabet: str = DEFAULT_ALPHABET,
) -> str:
    """The shortest candidate code not held by another id (``holder_of(code)`` -> id or None)."""
    for code in candidate_codes(memory_id, length, alphabet):
        holder = holder_of(code)
        if holder is None or holder == memory_id:
            return code
    raise ValueError(f"no free citation code for {memory_id!r} (a SHA-256 collision)")

"""Citations as they read in a context and in a model's reply: ``[mem:a7Bc3x]``.

The code itself (a prefix of the memory id's sha256 in decimal digits, or base64url as codes
were made before, lengthened on collision) is computed where memories are stored
(``tiers.citations``); this module only formats and finds them.

The shared pattern, :data:`CITATION_PATTERN`, is the contract between the formatters (which write
citations), the feedback loop (which finds the ones a reply quotes) and the query analyzer (which
spots an explicit ``show mem:a7Bc3x``). The analyzer keeps its own copy of this exact string,
because ``analyzers`` imports nothing of ours; change both together::

    (?<![A-Za-z0-9_-])(?i:mem):([A-Za-z0-9_-]{4,16})(?![A-Za-z0-9_-])

Group 1 is the code. The prefix matches in any case (a model may write ``MEM:``), the code is
case-sensitive (a base64url code's case is part of it). Brackets are optional:
``[mem:a7Bc3x]``, ``mem:a7Bc3x`` and ``(see mem:a7Bc3x)`` all match; ``mem:a7`` (too short) and
``xmem:a7Bc3x`` do not.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tiers.errors import InvalidInputError

__all__ = [
    "CITATION_PATTERN",
    "CODE_PATTERN",
    "citation_pattern",
    "format_citation",
    "parse_citations",
]

#: A citation code: 4 to 16 digits or base64url characters (the profile's ``citations.length``).
CODE_PATTERN = r"[A-Za-z0-9_-]{4,16}"
_PREFIX = re.compile(r"^[a-z][a-z0-9_-]{0,15}$")


def _check_prefix(prefix: str) -> None:
    if not _PREFIX.match(prefix):
        raise InvalidInputError(
            f"invalid citation prefix {prefix!r}; a prefix is a lower-case letter followed by up "
            f"to 15 of a-z, 0-9, '-', '_'"
        )


def citation_pattern(prefix: str = "mem") -> str:
    """The regular expression source that finds ``prefix:code`` citations; group 1 is the code."""
    _check_prefix(prefix)
    return rf"(?<![A-Za-z0-9_-])(?i:{re.escape(prefix)}):({CODE_PATTERN})(?![A-Za-z0-9_-])"


#: The pattern for the default ``mem`` prefix (see the module docstring).
CITATION_PATTERN = citation_pattern("mem")


def format_citation(code: str, prefix: str = "mem") -> str:
    """``a7Bc3x`` -> ``mem:a7Bc3x`` (formatters add the brackets where their layout wants them)."""
    _check_prefix(prefix)
    if not re.fullmatch(CODE_PATTERN, code):
        raise InvalidInputError(
            f"invalid citation code {code!r}; a code is 4-16 characters of A-Z, a-z, 0-9, '-', '_'"
        )
    return f"{prefix}:{code}"


def parse_citations(text: str, prefix: str = "mem") -> list[str]:
    """Every distinct citation in ``text`` as ``prefix:code``, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in _compiled(prefix).finditer(text):
        seen.setdefault(f"{prefix}:{match.group(1)}")
    return list(seen)


@lru_cache(maxsize=16)
def _compiled(prefix: str) -> re.Pattern[str]:
    return re.compile(citation_pattern(prefix))

"""Regular expressions for what the tokenizer would split: ids, URLs, paths and code names.

spaCy's English tokenizer splits ``src/auth/login.py`` at the slashes, ``#123`` after the hash
and ``mem:a7Bc3x`` at the colon, so these are found on the raw text in one left-to-right pass
(one alternation, first alternative wins at each position) and the word-level matchers never see
them as separate words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Found:
    """One match: its text as written, a label, and its character span in the analysed text."""

    text: str
    label: str
    start: int
    end: int


_SEGMENT = r"[\w.@+-]"
_TRAILING = ".,;:!?)]}'\""


def id_regex(prefixes: Sequence[str]) -> re.Pattern[str]:
    """Memory ids and citations: ``mem_12``, ``mem-12``, ``mem:a7Bc3x``, ``[mem:a7Bc3x]``."""
    names = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(
        rf"(?<![\w:/])\[?(?P<prefix>(?i:{names}))(?P<sep>[:_-])(?P<code>[A-Za-z0-9]+)\b\]?",
        re.ASCII,
    )


def find_ids(pattern: re.Pattern[str], text: str) -> list[Found]:
    """Ids in ``text``, normalised: a lowercase prefix, no brackets.

    With ``_`` or ``-`` the code must hold a digit (``mem_12``; ``mem_cache`` is an identifier);
    with ``:`` (a citation) any letters and digits will do, since citation codes are random.
    """
    found = []
    for m in pattern.finditer(text):
        sep, code = m.group("sep"), m.group("code")
        if sep != ":" and not any(ch.isdigit() for ch in code):
            continue
        norm = f"{m.group('prefix').lower()}{sep}{code}"
        found.append(Found(norm, "ID", m.start(), m.end()))
    return found


def entity_regex(extensions: Sequence[str], not_tickets: Sequence[str]) -> re.Pattern[str]:
    """One alternation for URLs, paths, files, tickets and code identifiers (in that order)."""
    ext = "|".join(re.escape(e) for e in sorted(extensions, key=len, reverse=True))
    skip = "|".join(re.escape(t) for t in not_tickets) or r"(?!x)x"
    # Possessive quantifiers (*+, ++) where giving characters back can never help: the runs stop
    # at a character the rest of the pattern cannot start with, so backtracking only costs time.
    alternatives = {
        "URL": r"\b(?:https?://|www\.)[^\s<>\"'`\x80-\U0010ffff]++",
        "TICKET": r"\b(?i:issue|ticket|pr|pull request)\s*+#?\d++\b|\b(?i:bug)\s*+#\d++\b"
        r"|(?<![\w&#])#\d++\b"
        rf"|\b(?!(?:{skip})-)[A-Z][A-Z0-9]{{1,9}}+-\d++\b",
        "PATH": rf"(?<![\w/])(?:~|\.{{1,2}})?/{_SEGMENT}++(?:/{_SEGMENT}++)*+"
        rf"|(?<![\w/]){_SEGMENT}++(?:/{_SEGMENT}++){{2,}}+"
        rf"|(?<![\w/]){_SEGMENT}++/{_SEGMENT}*\.(?:{ext})\b",
        "FILE": rf"(?<![\w/.])[\w-]++(?:\.[\w-]++)*\.(?:{ext})\b(?!\.\w)",
        "CODE": r"\b[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++(?:\([^()\s]{0,40}\))?"
        r"|\b[A-Za-z_]\w*+\([^()\s]{0,40}\)"
        r"|\b[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]*+)++\b"
        r"|\b[a-z][a-z0-9]*+(?:[A-Z][a-z0-9]*+)++\b"
        r"|\b[A-Z]{2,}+[a-z][A-Za-z0-9]*+\b"
        r"|\b[A-Z]++[0-9]++[A-Za-z0-9]*+\b"
        r"|\b_{0,2}[A-Za-z][A-Za-z0-9]*+(?:_++[A-Za-z0-9]++)++_{0,2}"
        r"|\b__[A-Za-z][A-Za-z0-9]*+__",
    }
    # ASCII: \w and \b ignore Hangul, so "auth.py에서" still ends the file name at "py"
    joined = "|".join(f"(?P<{name}>{rx})" for name, rx in alternatives.items())
    return re.compile(joined, re.ASCII)


def find_entities(pattern: re.Pattern[str], text: str, masked: Sequence[Found]) -> list[Found]:
    """Code-like entities in ``text``, skipping anything inside a ``masked`` span (the ids)."""
    found = []
    for m in pattern.finditer(text):
        label = m.lastgroup or "CODE"
        value = m.group().rstrip(_TRAILING) if label in ("URL", "PATH") else m.group()
        start, end = m.start(), m.start() + len(value)
        if not value or overlapping(start, end, masked) or not _plausible(label, value):
            continue
        found.append(Found(value, label, start, end))
    return found


def _plausible(label: str, value: str) -> bool:
    if label == "PATH":
        return any(ch.isalpha() for ch in value) and value.strip("/.~") != ""
    if label == "CODE" and "." in value and "(" not in value:
        parts = value.split(".")
        return max(len(p) for p in parts) > 1 and not value.lower().startswith(("e.g", "i.e"))
    return True


def overlapping(start: int, end: int, spans: Sequence[Found]) -> bool:
    """True when ``[start, end)`` overlaps any of ``spans``."""
    return any(start < s.end and s.start < end for s in spans)


def iter_unique(items: Sequence[Found]) -> Iterator[Found]:
    """``items`` without repeats of the same text (case-insensitive), first one kept."""
    seen: set[str] = set()
    for item in items:
        key = item.text.casefold()
        if key not in seen:
            seen.add(key)
            yield item

"""The two sides of a question that weighs one thing against another.

"Which happened first, my cousin's wedding or Michael's engagement party?" needs evidence of
both: when one side's memories outnumber the other's, the ranking fills the context with the
first side and the comparison cannot be made. :func:`sides` finds the alternatives of such a
question (an ``A or B`` after a word that compares: first, last, earlier, before, more, most
...), and :func:`lift_sides` raises the best candidate of each side, by the archive's BM25 for
that side's words, to the leader's chance, so both are packed (``fusion.cover_alternatives``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from disclosure.core.pipeline.fusion import Candidate
from tiers import ScoredMemory

_COMPARES = re.compile(
    r"\b(?:first|last|earlier|earliest|later|latest|before|after|sooner|recently|recent|"
    r"more|most|less|least|fewer|longer|shorter|older|newer|bigger|smaller|better|worse|"
    r"prefer|preferred|which|whom?)\b",
    re.IGNORECASE,
)
# the alternatives: the clause after the last comma, colon or compared word, split at " or "
_CLAUSE = re.compile(r"[,:;]|\b(?:first|last|earlier|later|recently|more|most)\b", re.IGNORECASE)
_LEADING = re.compile(
    r"^(?:(?:the|a|an|my|our|his|her|their|your|i|we|did|do|was|were|is|it|that|this|to)\s+)+",
    re.IGNORECASE,
)
_QUOTES = " '\"\u201c\u201d\u2018\u2019"  # spaces and straight or curly quotes
_MIN_WORDS = 1
_MAX_WORDS = 12


def sides(query: str) -> tuple[str, str] | None:
    """The two alternatives ``query`` weighs, or None when it weighs none."""
    text = query.strip().rstrip("?.! ")
    if " or " not in text.casefold() or not _COMPARES.search(text):
        return None
    head, _, tail = text.rpartition(" or ")
    cuts = list(_CLAUSE.finditer(head))
    if not cuts:
        return None
    left = head[cuts[-1].end() :]
    right = re.split(r"[,;:]", tail, maxsplit=1)[0]
    out = tuple(_LEADING.sub("", s.strip(_QUOTES)).strip(_QUOTES) for s in (left, right))
    if not all(_MIN_WORDS <= len(s.split()) <= _MAX_WORDS for s in out):
        return None
    return out[0], out[1]


Search = Callable[[str], Sequence[ScoredMemory]]


def lift_sides(
    candidates: Sequence[Candidate], alternatives: Sequence[str], search: Search
) -> list[Candidate]:
    """``candidates`` (best first) with each side's best match raised to the leader's chance,
    best first again; a side whose search finds no candidate is left as it is."""
    if not candidates:
        return list(candidates)
    leader = max(c.fused for c in candidates)
    position = {c.id: n for n, c in enumerate(candidates)}
    out = list(candidates)
    for side in alternatives:
        for hit in search(side):
            n = position.get(hit.memory.id)
            if n is not None:
                if out[n].fused < leader:
                    out[n] = replace(out[n], fused=leader)
                break
    return sorted(out, key=lambda c: c.fused, reverse=True)

"""What a model's reply used of a disclosure: citations it quotes, and content it echoes.

An item counts as used when the reply cites it (``[mem:a7Bc3x]`` or ``mem:a7Bc3x``) or when the
reply carries enough of its words: at least ``min_shared_words`` of the item's informative words
(stopwords dropped, the lexical tiers' tokenisation) and at least ``min_overlap`` of them.

The *depth* of a reply is where, in packing order, its deepest used item ends: the tokens of every
disclosed item up to and including it, plus the context's frame (header, separators) that no item
pays for. The adaptive budget learns from depths (``budget``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from disclosure.core.result import DisclosureResult
from formatters.citations import parse_citations
from tiers.memory import Memory
from tiers.text import Tokenizer


@dataclass(frozen=True)
class FeedbackReport:
    """Which disclosed items a reply used, how, and how deep the deepest sat."""

    used: tuple[str, ...]
    cited: tuple[str, ...]
    overlap: Mapping[str, float]
    depth: int
    tokens_used: int
    budget: int


def measure(
    result: DisclosureResult,
    reply: str,
    memories: Mapping[str, Memory],
    *,
    tokenizer: Tokenizer,
    min_overlap: float,
    min_shared_words: int,
) -> FeedbackReport:
    """Measure what ``reply`` used of ``result`` (``memories``: the disclosed ones, by id)."""
    by_citation = {_code(item.citation): item.id for item in result.items if item.citation}
    cited = {by_citation[c] for c in map(_code, parse_citations(reply)) if c in by_citation}
    reply_words = set(tokenizer.query(reply))
    overlap: dict[str, float] = {}
    for item in result.items:
        memory = memories.get(item.id)
        if memory is None:
            continue
        words = set(tokenizer.query(memory.content))
        shared = len(words & reply_words)
        if words and shared >= min_shared_words:
            overlap[item.id] = shared / len(words)
    used = [
        item.id
        for item in result.items
        if item.id in cited or overlap.get(item.id, 0.0) >= min_overlap
    ]
    return FeedbackReport(
        used=tuple(dict.fromkeys(used)),
        cited=tuple(i for i in dict.fromkeys(item.id for item in result.items) if i in cited),
        overlap=overlap,
        depth=_depth(result, set(used)),
        tokens_used=result.tokens_used,
        budget=result.budget,
    )


def _depth(result: DisclosureResult, used: set[str]) -> int:
    """Where the deepest used item ends, in packing order, the context's frame included (the
    header and separators no item pays for): the budget it takes to show that item again."""
    position = deepest = 0
    for item in result.items:  # packing (priority) order
        position += item.tokens
        if item.id in used:
            deepest = position
    if not deepest:
        return 0
    return deepest + max(result.tokens_used - position, 0)


def _code(citation: str) -> str:
    """``mem:a7Bc3x`` and ``a7Bc3x`` both read as ``a7Bc3x``."""
    return citation.rsplit(":", 1)[-1]

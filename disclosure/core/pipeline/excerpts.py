"""Excerpts: the part of a long memory that the query is about, within a token cap.

An assistant's answer or a pasted log can run to a thousand tokens while the query needs one
paragraph of it. A memory whose line costs more than ``formatting.excerpt_tokens`` is shown, at
the index layer, as its best window of whole sentences: the window that holds the most of the
query's (stemmed, stopword-free) terms, rarer terms weighing more, at most the cap in tokens.
The excerpt reads ``… window …`` and the result says what was cut
(``DisclosedItem.excerpt``, ``omitted_tokens``); ``show`` and the detail layer give it whole.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from formatters import TokenCounter
from tiers.text import Tokenizer

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The text to show and how many tokens of the memory's content it leaves out."""

    text: str
    omitted_tokens: int


def excerpt(
    content: str,
    terms: Collection[str],
    *,
    tokenizer: Tokenizer,
    counter: TokenCounter,
    limit: int,
) -> Excerpt | None:
    """The best window of ``content`` for a query of ``terms`` (None: it fits whole)."""
    whole = counter(content)
    if whole <= limit:
        return None
    sentences = [s for s in _SENTENCE_END.split(content) if s.strip()]
    costs = [counter(s) + 1 for s in sentences]
    weights = _term_weights(sentences, terms, tokenizer)
    scores = [sum(weights.get(t, 0.0) for t in set(tokenizer.document(s))) for s in sentences]
    start, end = _best_window(scores, costs, limit - 2)  # room for the ellipses
    truncated = start == end  # one sentence is longer than the cap: its head
    if truncated:
        text = counter.truncate(sentences[start], limit - 2)
        end = start + 1
    else:
        text = " ".join(s.strip() for s in sentences[start:end])
    lead = f"{ELLIPSIS} " if start > 0 else ""
    trail = f" {ELLIPSIS}" if truncated or end < len(sentences) else ""
    return Excerpt(f"{lead}{text}{trail}", max(whole - counter(text), 0))


def _term_weights(
    sentences: Sequence[str], terms: Collection[str], tokenizer: Tokenizer
) -> dict[str, float]:
    """Each query term's weight: rarer across the memory's sentences weighs more."""
    wanted = set(terms)
    seen: Counter[str] = Counter()
    for sentence in sentences:
        seen.update(set(tokenizer.document(sentence)) & wanted)
    n = len(sentences)
    return {t: math.log(1 + n / seen[t]) for t in seen}


def _best_window(scores: Sequence[float], costs: Sequence[int], limit: int) -> tuple[int, int]:
    """[start, end) of consecutive sentences within ``limit`` with the highest score (the
    earliest on ties); (i, i) when even the best sentence alone is over the limit."""
    best = (-1.0, 0, 0)
    left, total, value = 0, 0, 0.0
    for right, cost in enumerate(costs):
        total += cost
        value += scores[right]
        while total > limit and left <= right:
            total -= costs[left]
            value -= scores[left]
            left += 1
        if left <= right and value > best[0]:
            best = (value, left, right + 1)
    if best[0] < 0:
        top = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return top, top
    return best[1], best[2]

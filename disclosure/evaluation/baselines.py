"""Baselines as built-in pseudo-profiles, so every report places the real profiles among them.

Each baseline ranks the conversation's turns its own way and fills them, in rank order, into a
fixed token budget, rendered plainly one turn a line (``[8 May 2023] Ana: text``, in
time order), with exact token counts and never over the budget:

* ``baseline:full``: every turn, unbudgeted (its tokens are the full conversation);
* ``baseline:recency``: the latest turns that fit, a contiguous window;
* ``baseline:bm25``: rank_bm25's BM25Okapi over ``speaker: text``, lowercase ``\\w+`` tokens;
* ``baseline:dense``: cosine similarity of all-MiniLM-L6-v2 embeddings;
* ``baseline:hybrid``: reciprocal rank fusion of the BM25 and dense rankings (k = 60).

The ranked ones take whole turns best first, skipping any turn that no longer fits and going
on down the ranking (first fit). Ties keep time order. Baselines implement the
:class:`~disclosure.evaluation.runner.Discloser` calls, so the runner drives them exactly like a
``DisclosureController``; ``feedback`` does nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from analyzers import DisclosureLevel, QueryAnalysis
from disclosure.core.result import DisclosedItem, DisclosureResult
from formatters.base import Layer
from formatters.tokens import TokenCounter, get_token_counter
from tiers.base import Embedder
from tiers.memory import Memory
from tiers.registry import Registry

BASELINE_PREFIX = "baseline:"
BASELINES = ("full", "recency", "bm25", "dense", "hybrid")  # the order reports list them in
RRF_K = 60
BASELINE_LEVEL = DisclosureLevel.DETAILED  # what a result must name; baselines choose no level
_WORD = re.compile(r"\w+")


def render_turn(memory: Memory) -> str:
    """One turn as the baselines render it: ``[8 May 2023] Speaker: text``.

    The day only: LoCoMo's times within a session are made up (one minute a turn) to keep the
    order, so rendering them would disclose invented detail and cost ~5 tokens a line.
    """
    who = memory.speaker or memory.kind.value
    stamp = memory.timestamp
    return f"[{stamp.day} {stamp:%B %Y}] {who}: {memory.content}"


def render_conversation(memories: Sequence[Memory]) -> str:
    """The whole conversation in time order, as ``baseline:full`` discloses it."""
    return "\n".join(render_turn(m) for m in _chronological(memories))


def _chronological(memories: Sequence[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: m.timestamp)  # stable: equal times keep ingest order


def tokenize(text: str) -> list[str]:
    """The BM25 baseline's tokens: lowercase runs of word characters."""
    return _WORD.findall(text.lower())


def baseline_name(name: str) -> str:
    """``bm25`` or ``baseline:bm25`` -> ``bm25``; a miss lists the baselines."""
    short = name.removeprefix(BASELINE_PREFIX).strip().lower()
    BASELINE_TYPES.get(short)
    return short


class Baseline:
    """A ranking filled into a budget. Subclasses say how to rank (:meth:`rank`)."""

    name = "baseline"
    contiguous = False  # True: stop at the first turn that does not fit (a window)

    def __init__(self, *, counter: TokenCounter | None = None) -> None:
        self.counter = counter or get_token_counter("cl100k_base")
        self.memories: list[Memory] = []
        self._lines: list[str] = []
        self._line_tokens: list[int] = []
        self._line_costs: list[int] = []
        self._full_tokens = 0

    @property
    def label(self) -> str:
        return BASELINE_PREFIX + self.name

    def ingest(self, memories: Sequence[Memory]) -> int:
        self.memories = _chronological([*self.memories, *memories])
        self._lines = [render_turn(m) for m in self.memories]
        self._line_tokens = [self.counter(line) for line in self._lines]
        self._line_costs = [self.counter(line + "\n") for line in self._lines]
        self._full_tokens = self.counter("\n".join(self._lines))
        self._index()
        return len(memories)

    def _index(self) -> None:
        """Build whatever :meth:`rank` needs over ``self.memories``."""

    def rank(self, query: str) -> list[tuple[int, float]]:
        """(position in ``self.memories``, score), best first."""
        raise NotImplementedError

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[Any] = (),
        now: datetime | None = None,
        level: DisclosureLevel | None = None,
        budget: int | None = None,
    ) -> DisclosureResult:
        if budget is None:
            raise ValueError(f"{self.label} needs a token budget")
        started = time.perf_counter()
        ranking = self.rank(query) if self.memories else []
        ranked = time.perf_counter()
        chosen = self._pack(ranking, budget)
        return self._result(query, chosen, budget, ranked - started, time.perf_counter() - ranked)

    def _pack(self, ranking: list[tuple[int, float]], budget: int) -> list[tuple[int, float]]:
        """Whole turns in rank order while they fit, without re-counting the text each time.

        A line costs the count of the line plus its newline (punctuation and a newline merge
        into one token, as may a newline and the next ``[``); on LoCoMo the sum matched the
        exact count of the joined text in 3,000 random selections out of 3,000. A candidate
        that would land one token over is counted in full, and a final exact count guards the
        budget whatever the encoding.
        """
        chosen: list[tuple[int, float]] = []
        spent = 0
        for position, score in ranking:
            cost = self._line_costs[position]
            fits = spent + cost <= budget
            if not fits and spent + cost == budget + 1:
                fits = self.counter(self._text([*chosen, (position, score)])) <= budget
            if fits:
                chosen.append((position, score))
                spent += cost
            elif self.contiguous:
                break
        while chosen and self.counter(self._text(chosen)) > budget:
            chosen.pop()  # a safety net: no encoding may break the budget
        return chosen

    def _text(self, chosen: Sequence[tuple[int, float]]) -> str:
        return "\n".join(self._lines[p] for p, _ in sorted(chosen))

    def _result(
        self, query: str, chosen: list[tuple[int, float]], budget: int, rank_s: float, pack_s: float
    ) -> DisclosureResult:
        text = self._text(chosen)
        items = tuple(
            DisclosedItem(
                id=self.memories[p].id,
                citation=self.memories[p].id,
                tier=self.label,
                layer=Layer.DETAIL,
                score=score,
                tokens=self._line_tokens[p],
            )
            for p, score in chosen
        )
        return DisclosureResult(
            text=text,
            items=items,
            level=BASELINE_LEVEL,
            analysis=QueryAnalysis(query=query, level=BASELINE_LEVEL),
            budget=budget,
            tokens_used=self.counter(text),
            full_history_tokens=self._full_tokens,
            expansion_reason=None,
            timings_ms={"rank": rank_s * 1000, "pack": pack_s * 1000},
            tokens_exact=self.counter.exact,
            budget_reason=f"fixed budget of the {self.label} experiment",
            profile=self.label,
        )

    def feedback(self, result: DisclosureResult, reply: str) -> None:
        """Baselines do not learn."""

    def close(self) -> None:
        self.memories = []


class FullContext(Baseline):
    """Every turn, whatever the budget: the cost of disclosing nothing selectively."""

    name = "full"

    def rank(self, query: str) -> list[tuple[int, float]]:
        return [(p, 1.0) for p in range(len(self.memories))]

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[Any] = (),
        now: datetime | None = None,
        level: DisclosureLevel | None = None,
        budget: int | None = None,
    ) -> DisclosureResult:
        started = time.perf_counter()
        chosen = self.rank(query)
        return self._result(query, chosen, self._full_tokens, 0.0, time.perf_counter() - started)


class Recency(Baseline):
    """The latest turns that fit the budget."""

    name = "recency"
    contiguous = True

    def rank(self, query: str) -> list[tuple[int, float]]:
        n = len(self.memories)
        return [(p, (p + 1) / n) for p in reversed(range(n))]


class BM25(Baseline):
    """BM25Okapi (rank_bm25) over ``speaker: text``."""

    name = "bm25"

    def _index(self) -> None:
        self._bm25 = _bm25_index(self.memories)

    def rank(self, query: str) -> list[tuple[int, float]]:
        return _bm25_rank(self._bm25, query)


class Dense(Baseline):
    """Cosine similarity of MiniLM embeddings of ``speaker: text`` and the query."""

    name = "dense"

    def __init__(self, *, counter: TokenCounter | None = None, embedder: Embedder | None = None):
        super().__init__(counter=counter)
        self._embedder = embedder
        self._vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from disclosure.evaluation.embedding import default_embedder

            self._embedder = default_embedder()
        return self._embedder

    def _index(self) -> None:
        self._vectors = self.embedder.embed([_searchable(m) for m in self.memories])

    def rank(self, query: str) -> list[tuple[int, float]]:
        assert self._vectors is not None
        query_embedder: Embedder = getattr(self.embedder, "inner", self.embedder)
        scores = self._vectors @ query_embedder.embed([query])[0]
        return _by_score(scores.astype(float))


class Hybrid(Dense):
    """Reciprocal rank fusion of BM25 and dense: sum of 1 / (60 + rank), ranks from 1."""

    name = "hybrid"

    def _index(self) -> None:
        super()._index()
        self._bm25 = _bm25_index(self.memories)

    def rank(self, query: str) -> list[tuple[int, float]]:
        fused = np.zeros(len(self.memories))
        for ranking in (_bm25_rank(self._bm25, query), super().rank(query)):
            for rank, (position, _) in enumerate(ranking, start=1):
                fused[position] += 1.0 / (RRF_K + rank)
        return _by_score(fused)


def _bm25_index(memories: Sequence[Memory]) -> Any:
    from rank_bm25 import BM25Okapi

    return BM25Okapi([tokenize(_searchable(m)) for m in memories]) if memories else None


def _bm25_rank(index: Any, query: str) -> list[tuple[int, float]]:
    if index is None:
        return []
    return _by_score(np.asarray(index.get_scores(tokenize(query)), dtype=float))


def _searchable(memory: Memory) -> str:
    return f"{memory.speaker}: {memory.content}" if memory.speaker else memory.content


def _by_score(scores: np.ndarray[Any, np.dtype[np.float64]]) -> list[tuple[int, float]]:
    order = np.argsort(-scores, kind="stable")  # ties keep time order
    return [(int(p), float(scores[p])) for p in order]


#: The baseline classes by short name (``bm25``).
BASELINE_TYPES: Registry[type[Baseline]] = Registry("baseline")
for _type in (FullContext, Recency, BM25, Dense, Hybrid):
    BASELINE_TYPES.register(_type.name, _type)


def make_baseline(
    name: str, *, counter: TokenCounter | None = None, embedder: Embedder | None = None
) -> Baseline:
    """A fresh baseline by name (``hybrid`` or ``baseline:hybrid``)."""
    kind = BASELINE_TYPES.get(baseline_name(name))
    if issubclass(kind, Dense):
        return kind(counter=counter, embedder=embedder)
    return kind(counter=counter)

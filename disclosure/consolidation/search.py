"""Searching summaries: BM25 over their three levels with the store's tokenizer.

Summaries are few (one per topic of a session), so the index is rebuilt in memory whenever the
summary store changes. Scores are on the lexical tiers' scale: the share of the query's
IDF-weighted terms a summary holds, in [0, 1].
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass

from disclosure.consolidation.store import Summary, SummaryKind, SummaryStore
from tiers.text import Tokenizer


@dataclass(frozen=True, slots=True)
class SummaryHit:
    summary: Summary
    score: float


class SummaryIndex:
    """Query-time search over a :class:`SummaryStore`. Thread-safe."""

    def __init__(self, summaries: SummaryStore, tokenizer: Tokenizer) -> None:
        self.summaries = summaries
        self.tokenizer = tokenizer
        self._lock = threading.Lock()
        self._version = -1
        self._docs: list[tuple[Summary, Counter[str]]] = []
        self._df: Counter[str] = Counter()

    def search(
        self, query: str, k: int = 10, *, kind: SummaryKind | None = "topic"
    ) -> list[SummaryHit]:
        """The ``k`` best summaries for ``query`` (of ``kind``; None: both kinds)."""
        docs, df = self._load()
        terms = self.tokenizer.query(query)
        if not terms or not docs:
            return []
        n = len(docs)
        idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        total = sum(idf.values()) or 1.0
        hits = []
        for summary, counts in docs:
            if kind is not None and summary.kind != kind:
                continue
            present = [t for t in terms if counts[t]]
            if not present:
                continue
            share = sum(idf[t] for t in present) / total
            tf = sum(idf[t] * counts[t] / (counts[t] + 1.2) for t in present) / total
            hits.append(SummaryHit(summary, round(share * 0.8 + tf * 0.2, 6)))
        hits.sort(key=lambda h: (-h.score, h.summary.session_id, h.summary.position))
        return hits[:k]

    def _load(self) -> tuple[list[tuple[Summary, Counter[str]]], Counter[str]]:
        with self._lock:
            if self._version != self.summaries.version:
                self._version = self.summaries.version
                docs = []
                df: Counter[str] = Counter()
                for summary in self.summaries.all():
                    text = f"{summary.index_line}\n{summary.paragraph}\n{summary.full_text}"
                    counts = Counter(self.tokenizer.document(text))
                    docs.append((summary, counts))
                    df.update(counts.keys())
                self._docs, self._df = docs, df
            return self._docs, self._df

"""BM25 as both engines compute it, and how raw scores become [0, 1].

The in-memory index is rank_bm25's ``BM25Okapi`` with SQLite FTS5's constants (k1 = 1.2,
b = 0.75) and FTS5's IDF, ``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 where FTS5 floors
it, so on the same tokens the two engines give the same scores (a test checks it). rank_bm25
scores with its own ``get_scores``; this module only keeps its statistics up to date:

* adding a document appends its term counts, length and document frequencies (O(its length));
  IDF is computed on demand for the query's terms, so nothing is rebuilt on the write path;
* removing one empties its slot (a tombstone); once tombstones outnumber live documents the
  slots are compacted at the next query, from the term counts already held (no re-tokenising).

Normalisation (:func:`normalise`): ``min(1, raw / sum of the query terms' IDF)``. The
denominator is what an average-length document containing each query term once would score
(with b = 0.75 and tf = 1 the saturation term is exactly 1), so 1.0 reads "carries every
informative word of the query, as densely as a typical memory", and 0.5 "about half of the
query's IDF-weighted evidence". A threshold such as 0.92 therefore means the same thing in
every tier and for every query length, which dividing by the top score would not (the top hit
would always be 1.0). The denominator is at least 1.0 (:data:`MIN_IDF_MASS`, the IDF of a
term found in about a quarter of the documents): a query made only of words that most memories
contain carries no evidence, and its matches must not look confident.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's floor for terms in more than half of the documents
MIN_IDF_MASS = 1.0  # a query this uninformative never looks like a confident match

K = TypeVar("K", bound=Hashable)


def idf(n_docs: int, doc_freq: int) -> float:
    """FTS5's IDF of a term found in ``doc_freq`` of ``n_docs`` documents."""
    value = math.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def idf_mass(n_docs: int, doc_freqs: Sequence[int]) -> float:
    """The normalising denominator: the IDF of every (distinct) query term, summed."""
    return sum(idf(n_docs, n) for n in doc_freqs)


def normalise(raw: float, mass: float) -> float:
    """A raw BM25 score as a share of the query's IDF mass (at least 1.0), capped at 1."""
    if raw <= 0.0:
        return 0.0
    return min(1.0, raw / max(mass, MIN_IDF_MASS))


class _IdfView:
    """``BM25Okapi.idf`` computed on demand from live document frequencies."""

    def __init__(self, okapi: Any) -> None:
        self._okapi = okapi

    def get(self, term: str) -> float | None:
        n = self._okapi.doc_freq.get(term)
        return None if n is None else idf(self._okapi.live, n)


@functools.cache
def _okapi_type() -> type[Any]:
    """BM25Okapi whose statistics follow appends and removals (rank_bm25 imported lazily)."""
    from rank_bm25 import BM25Okapi

    class _Okapi(BM25Okapi):  # type: ignore[misc]  # rank_bm25 ships no type hints
        def __init__(self) -> None:  # no corpus: documents arrive through append()
            self.k1, self.b, self.epsilon = K1, B, 0.0
            self.tokenizer = None
            self.corpus_size = 0  # slots, tombstones included (get_scores sizes arrays by it)
            self.avgdl = 0.0
            self.doc_freqs: list[dict[str, int]] = []
            self.doc_len: list[int] = []
            self.doc_freq: Counter[str] = Counter()  # term -> live documents containing it
            self.live = 0
            self.total_len = 0
            self.idf = _IdfView(self)

        def append(self, counts: dict[str, int]) -> int:
            length = sum(counts.values())
            self.doc_freqs.append(counts)
            self.doc_len.append(length)
            self.doc_freq.update(counts.keys())
            self.corpus_size += 1
            self.live += 1
            self.total_len += length
            self.avgdl = self.total_len / self.live
            return self.corpus_size - 1

        def tombstone(self, slot: int) -> None:
            counts = self.doc_freqs[slot]
            self.doc_freq.subtract(counts.keys())
            for term in counts:
                if self.doc_freq[term] <= 0:
                    del self.doc_freq[term]
            self.total_len -= self.doc_len[slot]
            self.doc_freqs[slot], self.doc_len[slot] = {}, 0
            self.live -= 1
            self.avgdl = self.total_len / self.live if self.live else 0.0

    return _Okapi


class Bm25Index(Generic[K]):
    """An incremental BM25 index over tokenised documents, keyed by ``K``. Not thread-safe."""

    def __init__(self) -> None:
        self._okapi: Any = _okapi_type()()
        self._keys: list[K | None] = []
        self._slots: dict[K, int] = {}

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def add(self, key: K, tokens: Sequence[str]) -> None:
        """Index ``tokens`` under ``key``, replacing what ``key`` held before."""
        self.remove(key)
        self._slots[key] = self._okapi.append(dict(Counter(tokens)))
        self._keys.append(key)

    def remove(self, key: K) -> bool:
        slot = self._slots.pop(key, None)
        if slot is None:
            return False
        self._okapi.tombstone(slot)
        self._keys[slot] = None
        return True

    def doc_freqs(self, terms: Sequence[str]) -> list[int]:
        return [self._okapi.doc_freq.get(term, 0) for term in terms]

    def mass(self, terms: Sequence[str]) -> float:
        """:func:`idf_mass` of ``terms`` over the live documents."""
        return idf_mass(len(self._slots), self.doc_freqs(terms))

    def top(self, terms: Sequence[str], k: int | None = None) -> list[tuple[K, float]]:
        """Documents matching any of ``terms``, best raw score first, at most ``k``.

        Ties keep insertion order. ``terms`` should be distinct (see ``Tokenizer.query``).
        """
        if not terms or not self._slots or self._okapi.total_len == 0 or k == 0:
            return []
        if len(self._keys) > 2 * max(len(self._slots), 16):
            self._compact()
        scores = np.asarray(self._okapi.get_scores(list(terms)), dtype=np.float64)
        matched = np.flatnonzero(scores > 0.0)
        if k is not None and len(matched) > k:
            matched = matched[np.argpartition(-scores[matched], k - 1)[:k]]
        order = sorted(matched.tolist(), key=lambda slot: (-scores[slot], slot))
        return [(self._key(slot), float(scores[slot])) for slot in order]

    def _key(self, slot: int) -> K:
        key = self._keys[slot]
        assert key is not None  # a matched slot is live: tombstones have no terms
        return key

    def _compact(self) -> None:
        live = [(key, self._okapi.doc_freqs[slot]) for key, slot in self._slots.items()]
        live.sort(key=lambda pair: self._slots[pair[0]])
        self._okapi, self._keys, self._slots = _okapi_type()(), [], {}
        for key, counts in live:
            self._slots[key] = self._okapi.append(counts)
            self._keys.append(key)

"""An exact in-memory copy of a small vector collection, searched by comparing every vector.

Below some tens of thousands of vectors, comparing the query with each one costs less than a
query of Chroma's HNSW index, most of whose cost is fixed per query (measured at 10k vectors
of 384 dimensions: ~0.7 ms for the whole comparison and selection here against ~1.4 ms for
Chroma's top 100), and it finds the true nearest vectors instead of approximately nearest.
:class:`~tiers.warm.WarmTier` keeps one when it is the only writer of its collection, so that
every change goes through it and the copy cannot fall behind.

The product is computed with ``numpy.einsum``, not the ``@`` operator: ``@`` hands the
product to the BLAS library, whose worker threads keep spinning after it returns and take the
second core from the query's other work (measured: a whole ``disclose`` was ~1 ms slower with
``@``, ~1.3 ms faster with ``einsum``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["ExactCopy", "ExactIndex"]

_MIN_CAPACITY = 1024


class ExactIndex:
    """Unit vectors by id; :meth:`search` gives the ``k`` with the highest cosine similarity.

    Thread-safe: one lock guards the rows, held by a search for its comparison (under a
    millisecond at the sizes it is meant for) and by a write for its change.
    """

    def __init__(self, dimension: int) -> None:
        if dimension <= 0:
            raise ValueError(f"dimension must be positive (got {dimension})")
        self.dimension = dimension
        self._rows = np.zeros((0, dimension), dtype=np.float32)
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def nbytes(self) -> int:
        """The memory the vectors take (the allocated rows, spare capacity included)."""
        return int(self._rows.nbytes)

    def upsert(self, ids: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Add ``ids`` with their ``vectors`` (one row each), replacing the vectors of ids held."""
        rows = _unit_rows(vectors, self.dimension)
        if len(rows) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(rows)} vectors")
        with self._lock:
            for memory_id, row in zip(ids, rows, strict=True):
                at = self._row_of.get(memory_id)
                if at is None:
                    at = len(self._ids)
                    self._grow(at + 1)
                    self._ids.append(memory_id)
                    self._row_of[memory_id] = at
                self._rows[at] = row

    def remove(self, ids: Sequence[str]) -> None:
        """Drop ``ids``; unknown ones are ignored. The last row fills each hole (O(1) each)
        and is zeroed where it was."""
        with self._lock:
            for memory_id in ids:
                at = self._row_of.pop(memory_id, None)
                if at is None:
                    continue
                last = len(self._ids) - 1
                if at != last:
                    moved = self._ids[last]
                    self._rows[at] = self._rows[last]
                    self._ids[at] = moved
                    self._row_of[moved] = at
                self._rows[last] = 0  # nothing of a forgotten memory stays in the spare rows
                self._ids.pop()

    def search(self, vector: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
        """The ``k`` ids nearest to ``vector`` by cosine similarity, best first, with that
        similarity (equal scores in the order of their rows)."""
        query = _unit_rows(vector, self.dimension)[0]
        with self._lock:
            n = len(self._ids)
            k = min(k, n)
            if k <= 0:
                return []
            scores = np.einsum("ij,j->i", self._rows[:n], query)
            if k < n:
                top = np.argpartition(-scores, k - 1)[:k]
                top = top[np.lexsort((top, -scores[top]))]
            else:
                top = np.lexsort((np.arange(n), -scores))
            return [(self._ids[i], float(scores[i])) for i in top]

    def reserve(self, capacity: int) -> None:
        """Allocate rows for ``capacity`` vectors now (a fill of known size grows once)."""
        with self._lock:
            self._grow(capacity, exact=True)

    def _grow(self, needed: int, *, exact: bool = False) -> None:
        if needed <= len(self._rows):
            return
        capacity = needed if exact else max(_MIN_CAPACITY, needed, 2 * len(self._rows))
        grown = np.zeros((capacity, self.dimension), dtype=np.float32)
        grown[: len(self._ids)] = self._rows[: len(self._ids)]
        self._rows = grown


def _unit_rows(vectors: npt.ArrayLike, dimension: int) -> npt.NDArray[np.float32]:
    """``vectors`` as float32 rows of length one (a zero vector stays zero)."""
    rows = np.asarray(vectors, dtype=np.float32)
    rows = rows.reshape(1, -1) if rows.ndim == 1 else rows
    if rows.ndim != 2 or rows.shape[1] != dimension:
        raise ValueError(f"expected vectors of {dimension} values, got shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return unit


class ExactCopy:
    """The :class:`ExactIndex` of one collection: empty until :meth:`fill` has read the whole
    collection, then kept in step by :meth:`upsert` and :meth:`remove`; dropped for good once
    it would hold more than ``limit`` vectors (the collection's own index is faster then).

    The caller keeps it consistent: it fills it and writes to it while holding the lock that
    orders the collection's writes, so no write falls between the reading and the copy.
    """

    def __init__(self, dimension: int, limit: int) -> None:
        self.dimension = dimension
        self.limit = limit
        self.state = "empty"  # -> "ready", or "too large" / "stopped" / "failed" for good
        self._index: ExactIndex | None = None

    def __len__(self) -> int:
        index = self._index
        return len(index) if index is not None else 0

    @property
    def ready(self) -> bool:
        return self._index is not None

    def fill(
        self,
        pages: Iterable[tuple[Sequence[str], npt.ArrayLike]],
        stop: threading.Event,
        *,
        expected: int = 0,
    ) -> None:
        """Read the collection, page by page; ready when every page is in (and it fits).
        ``expected``: how many vectors the pages hold, so that the rows are allocated once and
        a collection already too large is not read at all."""
        if self.state != "empty":
            return
        if expected > self.limit:
            self.state = "too large"
            return
        index = ExactIndex(self.dimension)
        index.reserve(expected)
        for ids, vectors in pages:
            if stop.is_set():
                self.state = "stopped"
                return
            if ids:
                index.upsert(ids, vectors)
            if len(index) > self.limit:
                self.state = "too large"
                return
        self._index = index
        self.state = "ready"

    def fail(self) -> None:
        self._index = None
        self.state = "failed"

    def upsert(self, ids: Sequence[str], vectors: npt.ArrayLike) -> None:
        index = self._index
        if index is None:
            return
        index.upsert(ids, vectors)
        if len(index) > self.limit:
            self._index = None
            self.state = "too large"

    def remove(self, ids: Sequence[str]) -> None:
        index = self._index
        if index is not None:
            index.remove(ids)

    def search(self, vector: npt.ArrayLike, k: int) -> list[tuple[str, float]] | None:
        """The exact top ``k`` (see :meth:`ExactIndex.search`), or None when not ready."""
        index = self._index
        return None if index is None else index.search(vector, k)

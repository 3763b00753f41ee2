"""The embedder the dense and hybrid baselines use (the warm tier's own, memoised), and a
persistent cache of document vectors that makes repeated evaluation runs fast.

Baselines embed with exactly what the warm tier uses (``tiers.get_embedder("auto")``:
all-MiniLM-L6-v2 through the verified ONNX export, or sentence-transformers where no export can
be made), so a profile and a baseline compare retrieval, not embedders. Any object with the
:class:`~tiers.base.Embedder` shape can be handed to the baselines instead.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tiers.base import Embedder

if TYPE_CHECKING:
    import numpy.typing as npt


class MemoisedEmbedder:
    """Wraps an embedder and remembers every text's vector (runs embed each turn many times).

    ``inner`` is the embedder itself: the baselines embed queries with it, so a query's latency
    always includes embedding it, whichever system asked it first.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for text, vector in zip(missing, self.inner.embed(missing), strict=True):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


@lru_cache(maxsize=1)
def default_embedder() -> Embedder:
    """The process-wide memoised embedder of the warm tier (loaded on first use)."""
    from tiers.embedders import get_embedder

    return MemoisedEmbedder(get_embedder("auto"))


class DocumentVectorCache:
    """An embedder that keeps the vectors of the *documents* a run ingests in a SQLite file.

    Every system of an evaluation ingests the same turns, and a second run of an experiment
    ingests them again; embedding a LongMemEval haystack takes minutes. Inside
    :meth:`documents` (the runner wraps each ingest in it) vectors are looked up by the
    embedder's name and the text's hash, and only the missing ones are embedded and stored.
    Outside it every call goes to the embedder itself, so a query is always embedded afresh and
    its latency is real. The file holds vectors and hashes, no text.

    It keeps the memories' facets too (:meth:`facets`, what the gathering index is built from):
    the trained pipeline reads a LongMemEval haystack in about as long as embedding it takes.
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
        self._db.execute("CREATE TABLE IF NOT EXISTS facets (key TEXT PRIMARY KEY, v TEXT)")
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def documents(self) -> Iterator[None]:
        """Within the block, this thread's embeddings are cached."""
        self._local.active = True
        try:
            yield
        finally:
            self._local.active = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not getattr(self._local, "active", False):
            return self.inner.embed(texts)
        keys = [self._key(t) for t in texts]
        found = self._lookup(keys)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if missing:
            vectors = np.asarray(self.inner.embed(missing), dtype=np.float32)
            rows = [(self._key(t), v.tobytes()) for t, v in zip(missing, vectors, strict=True)]
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            found.update((k, v) for k, v in zip((r[0] for r in rows), vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def facets(self, texts: Sequence[str], *, config: Any = None) -> list[tuple[str, ...]]:
        """:func:`analyzers.facets_many`, remembered: kept under the text, the analyzer's
        configuration and the pipeline that read it (the pinned trained one or the rules), so
        only texts no run has read yet are read (memories only: facets are never a query's)."""
        from analyzers import AnalyzerConfig, facets_many
        from analyzers.pipeline import get_pipeline

        config = config or AnalyzerConfig()
        scope = f"facets\n{get_pipeline(config).trained_name}\n{config.model_dump_json()}"
        keys = [hashlib.sha256(f"{scope}\n{t}".encode()).hexdigest() for t in texts]
        found: dict[str, tuple[str, ...]] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                query = f"SELECT key, v FROM facets WHERE key IN ({','.join('?' * len(chunk))})"
                found.update((k, tuple(json.loads(v))) for k, v in self._db.execute(query, chunk))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            read = facets_many(list(missing.values()), config=config)
            rows = [(k, json.dumps(f)) for k, f in zip(missing, read, strict=True)]
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO facets VALUES (?, ?)", rows)
            found.update(zip(missing, read, strict=True))
        return [found[k] for k in keys]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\n{text}".encode()).hexdigest()

    def _lookup(self, keys: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        found: dict[str, npt.NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT key, v FROM vectors WHERE key IN ({marks})"
                for key, blob in self._db.execute(query, chunk):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

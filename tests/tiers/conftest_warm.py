"""Session fixtures for the embedders and the warm tier: each real model loads once per session.

The ONNX export is made once per session into a temporary cache directory (about 3 s once torch
is loaded), so the tests never touch the user's cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from tiers.minilm import SentenceTransformerEmbedder, shared_sentence_transformer
from tiers.onnx_embedder import OnnxEmbedder

if TYPE_CHECKING:
    import numpy.typing as npt


@pytest.fixture(scope="session")
def st_embedder() -> SentenceTransformerEmbedder:
    """The real sentence-transformers MiniLM, loaded once."""
    embedder = shared_sentence_transformer()
    embedder.load()
    return embedder


@pytest.fixture(scope="session")
def onnx_cache_dir(tmp_path_factory: pytest.TempPathFactory, st_embedder: object) -> Path:
    """A cache directory holding a fresh, verified ONNX export."""
    cache = tmp_path_factory.mktemp("embedder-cache")
    OnnxEmbedder.from_cache(cache)
    return cache


@pytest.fixture(scope="session")
def onnx_embedder(onnx_cache_dir: Path) -> OnnxEmbedder:
    """The real ONNX MiniLM over the session's export."""
    return OnnxEmbedder.from_cache(onnx_cache_dir, export=False)


class FailingEmbedder:
    """An embedder that raises on every call: simulates a broken model or runtime."""

    def __init__(self, like: object) -> None:
        self.name: str = like.name  # type: ignore[attr-defined]
        self.dimension: int = like.dimension  # type: ignore[attr-defined]
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        raise RuntimeError("simulated embedder failure")


class RenamedEmbedder:
    """The real embedder presented as another vector space (another model's name)."""

    def __init__(self, inner: OnnxEmbedder, name: str) -> None:
        self.inner = inner
        self.name = name
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed(texts)

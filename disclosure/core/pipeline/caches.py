"""The disclose pipeline's three caches on diskcache, invalidated by generation counters.

Each holds what one disclosure layer is built from: ``index`` the fused candidates of a query
(the gather stage), ``timeline`` the neighbours of a hit, ``detail`` one memory rendered in full
(``show``). Each has its own TTL and item bound (the profile's ``caches``); past the bound the
oldest stored entries go first.

Writes never leave a stale entry reachable. Keys embed generation counters kept in the same
cache directory (so several processes sharing a data directory agree):

- the global generation moves on every ingest or forget: index entries depend on the whole corpus;
- a session's generation moves when a memory of that session changes: timelines and details
  (which name the memory's neighbours) depend on it;
- a memory's rendered detail is deleted when the memory is replaced or forgotten.

A disclose stores its index and timeline entries through a writer thread (``later=True``), so
the answer does not wait for the SQLite writes; until an entry is written, ``get`` finds it in
memory. The writer waits until no answer is being computed (:meth:`DisclosureCaches.answering`),
at most :data:`WRITE_DELAY` seconds or :data:`WRITE_BATCH` entries, then writes what is queued
in one transaction per cache: run beside an answer, its Python and SQLite work took the GIL
from every call of the answering thread that had released it (token counts, SQLite, ONNX), and
a disclose at 10k memories took ~2.5 ms longer. A forget, ``clear`` and ``close`` write the
queued entries at once and wait for them.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import diskcache

from disclosure.core.profiles import CacheConfig, CacheLimits
from disclosure.storage.sidefiles import open_or_rebuild

log = logging.getLogger(__name__)

CACHES = ("index", "timeline", "detail")
WRITE_DELAY = 0.25  # seconds a queued write may wait for no answer to be in progress
WRITE_BATCH = 64  # ... or until this many are queued
_MISS = object()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0


class BoundedCache:
    """One cache: TTL per entry, a bound on the number of entries, hit/miss counts. ``tagged``:
    entries may carry a tag, and :meth:`evict` deletes them by it."""

    def __init__(self, directory: Path, config: CacheLimits, *, tagged: bool = False) -> None:
        # secure_delete: what a forget removes is zeroed in the file, not only unlinked
        self._cache = diskcache.Cache(str(directory), tag_index=tagged, sqlite_secure_delete=1)
        self._config = config
        self.stats = CacheStats()

    def get(self, key: str) -> Any:
        value = self._cache.get(key, default=_MISS)
        if value is _MISS:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return value

    def set(self, key: str, value: Any, *, tag: str | None = None) -> None:
        self.set_many([(key, value, tag)])

    def set_many(self, entries: Sequence[tuple[str, Any, str | None]]) -> None:
        """Store ``(key, value, tag)`` entries in one transaction, then keep to the bound."""
        with self._cache.transact():
            for key, value, tag in entries:
                self._cache.set(key, value, expire=self._config.ttl_seconds, tag=tag)
        if len(self._cache) > self._config.max_items:
            self._shrink()

    def evict(self, tag: str) -> None:
        """Delete every entry set with ``tag``."""
        self._cache.evict(tag)

    def clear(self) -> None:
        self._cache.clear()

    def truncate_wal(self) -> None:
        """Checkpoint and empty the WAL, which keeps the pages of earlier writes."""
        self._cache._sql("PRAGMA wal_checkpoint(TRUNCATE)")

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def _shrink(self) -> None:
        self._cache.expire()
        excess = len(self._cache) - self._config.max_items
        for _ in range(max(excess, 0)):
            try:  # the first in rowid order: the oldest stored (not every key listed)
                key, _value = self._cache.peekitem(last=False)
            except KeyError:  # emptied meanwhile
                break
            if self._cache.delete(key):
                self.stats.evictions += 1


@dataclass
class DisclosureCaches:
    """The three caches of one data directory (:data:`CACHES`), with generation-based
    invalidation."""

    directory: Path
    config: CacheConfig
    by_name: dict[str, BoundedCache] = field(init=False)
    _meta: diskcache.Cache = field(init=False)
    _pending: dict[tuple[str, str], Any] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _writer: ThreadPoolExecutor | None = field(init=False, default=None)
    # writes queued for the writer: (cache, key, value, tag)
    _queue: list[tuple[str, str, Any, str | None]] = field(init=False, default_factory=list)
    _draining: bool = field(init=False, default=False)
    _answering: int = field(init=False, default=0)  # answers being computed now
    _urgent: int = field(init=False, default=0)  # flushes waiting: write without delay
    _wake: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self._wake = threading.Condition(self._lock)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.by_name = {name: self._open(name) for name in CACHES}
        generations = self.directory / "generations"
        self._meta = open_or_rebuild(generations, lambda: diskcache.Cache(str(generations)))
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cache-writer")

    def _open(self, name: str) -> BoundedCache:
        """One cache; a damaged one is moved aside and started afresh (caches are advisory)."""
        path = self.directory / name
        limits = getattr(self.config, name)
        return open_or_rebuild(path, lambda: BoundedCache(path, limits, tagged=name == "detail"))

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def key(self, cache: str, *parts: object, session: str | None = None) -> str:
        """A key for ``parts`` under the current generation(s) that ``cache`` depends on."""
        generation: tuple[object, ...] = ()
        if cache == "index":
            generation = (self._generation("global"),)
        elif cache in ("timeline", "detail") and session is not None:
            generation = (self._generation(f"session:{session}"),)
        text = "\x1f".join(str(p) for p in (*generation, *parts))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, cache: str, key: str) -> Any:
        if not self.enabled:
            return None
        with self._lock:
            pending = self._pending.get((cache, key))
        if pending is not None:  # stored by a write not done yet
            self.by_name[cache].stats.hits += 1
            return pending
        return self.by_name[cache].get(key)

    def set(
        self, cache: str, key: str, value: Any, *, tag: str | None = None, later: bool = False
    ) -> None:
        """Store ``value``; ``later``: by the writer thread (readable here at once)."""
        if not self.enabled:
            return
        writer = self._writer
        if later and writer is not None and value is not None:
            with self._lock:
                self._pending[(cache, key)] = value
                self._queue.append((cache, key, value, tag))
                start = not self._draining
                self._draining = True
                if len(self._queue) >= WRITE_BATCH:
                    self._wake.notify_all()
            if not start:
                return
            try:
                writer.submit(self._drain)
                return
            except RuntimeError:  # closing: write what is queued now
                self._drain(wait=False)
                return
        self.by_name[cache].set(key, value, tag=tag)

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Mark an answer in progress: queued writes wait until none is (see the module)."""
        with self._lock:
            self._answering += 1
        try:
            yield
        finally:
            with self._lock:
                self._answering -= 1
                if not self._answering:
                    self._wake.notify_all()

    def _drain(self, *, wait: bool = True) -> None:
        """Write the queued entries, once no answer is in progress (or the wait is over)."""
        with self._lock:
            deadline = time.monotonic() + WRITE_DELAY
            while wait and self._answering and not self._urgent:
                left = deadline - time.monotonic()
                if left <= 0 or len(self._queue) >= WRITE_BATCH:
                    break
                self._wake.wait(left)
            batch, self._queue = self._queue, []
            self._draining = False
        by_cache: dict[str, list[tuple[str, Any, str | None]]] = {}
        for cache, key, value, tag in batch:
            by_cache.setdefault(cache, []).append((key, value, tag))
        for cache, entries in by_cache.items():
            try:
                self.by_name[cache].set_many(entries)
            except Exception as exc:  # a cache is advisory: the entries are computed again
                log.warning("writing %d %s cache entries failed: %s", len(entries), cache, exc)
        with self._lock:
            for cache, key, value, _tag in batch:
                if self._pending.get((cache, key)) is value:
                    del self._pending[(cache, key)]

    def flush(self) -> None:
        """Write the queued entries now and wait for them."""
        if self._writer is None:
            return
        with self._lock:
            self._urgent += 1
            self._wake.notify_all()
        try:
            self._writer.submit(lambda: None).result()
        except RuntimeError:  # shut down: every queued write is done
            pass
        finally:
            with self._lock:
                self._urgent -= 1

    def detail(self, memory_id: str, session: str, style: str, render: Callable[[], str]) -> str:
        """One memory rendered in full (``render`` on a miss), cached per memory and ``style``
        (what else shapes the text, such as the formatting options). The text names the memory's
        neighbours, so the key carries its session's generation; the entry is tagged with the
        memory's id, so a write to the memory or forgetting it deletes it from disk."""
        key = self.key("detail", memory_id, style, session=session)
        text = self.get("detail", key)
        if not isinstance(text, str):
            text = render()
            self.set("detail", key, text, tag=memory_id)
        return text

    def invalidate(self, *, ids: Iterable[str] = (), sessions: Iterable[str] = ()) -> None:
        """After a write: move the global and the sessions' generations, drop the ids' details."""
        self._meta.incr("global")
        for session in set(sessions):
            self._meta.incr(f"session:{session}")
        detail = self.by_name["detail"]
        for memory_id in ids:
            detail.evict(memory_id)

    def clear(self) -> None:
        self.flush()
        for cache in self.by_name.values():
            cache.clear()
        self._meta.incr("global")

    def erase(self, ids: Iterable[str], sessions: Iterable[str]) -> None:
        """After a forget: invalidate, and leave none of the forgotten text on disk. Index and
        timeline entries may quote any memory, so they all go; details go by the ids' tags."""
        self.flush()  # an entry queued before the forget is written, then cleared
        self.invalidate(ids=ids, sessions=sessions)
        for name in ("index", "timeline"):
            self.by_name[name].clear()
        for cache in self.by_name.values():
            cache.truncate_wal()

    def stats(self) -> dict[str, dict[str, int]]:
        return {
            name: {
                "entries": len(cache),
                "hits": cache.stats.hits,
                "misses": cache.stats.misses,
                "evictions": cache.stats.evictions,
            }
            for name, cache in self.by_name.items()
        }

    def close(self) -> None:
        if self._writer is not None:
            self.flush()
            self._writer.shutdown(wait=True)
        for cache in self.by_name.values():
            cache.close()
        self._meta.close()

    def _generation(self, name: str) -> int:
        return int(self._meta.get(name, default=0))

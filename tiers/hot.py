"""The hot tier: the in-memory working set, bounded by item count and age.

Every memory enters with an *anchor* time: its timestamp, or the moment it was promoted or last
used. Ages count from the anchor to *now*, which is the newest anchor seen (``clock: latest``,
so a replayed or resumed conversation keeps its working set) or the system clock (``wall``);
every method also takes an explicit ``now``.

Scores, all in [0, 1]::

    recency    = 0.5 ** (age / recency_half_life)
    active     = (w_r * recency + w_i * importance) / (w_r + w_i)
    search     = (w_l * lexical + w_r * recency + w_i * importance) / (w_l + w_r + w_i)

where ``lexical`` is BM25 over the working set, normalised as in :mod:`tiers.bm25`. ``search``
returns only memories that match the query lexically; :meth:`HotTier.active` orders the whole
working set without a query ("recent and important first"). Capacity evicts the lowest active
score first; age evicts what left the window. Eviction returns the memories it dropped, so
the store can move them down. Thread-safe (one lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from tiers.bm25 import Bm25Index, normalise
from tiers.config import HotConfig
from tiers.errors import TierClosedError
from tiers.memory import Memory, ScoredMemory, as_utc
from tiers.text import Tokenizer


@dataclass(slots=True)
class _Entry:
    memory: Memory
    anchor: float  # epoch seconds: its timestamp, promotion or last use
    order: int  # admission order: the last tie-break, newest first


class HotTier:
    """An in-memory working set searched by a blend of BM25, recency and importance."""

    name = "hot"

    def __init__(self, config: HotConfig | None = None, tokenizer: Tokenizer | None = None):
        self.config = config or HotConfig()
        self._tokenizer = tokenizer or Tokenizer()
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._index: Bm25Index[str] = Bm25Index()
        self._latest = 0.0  # newest anchor seen (epoch seconds)
        self._order = 0
        self._closed = False

    # -- the Tier protocol ----------------------------------------------------------------------

    def add(self, memories: Sequence[Memory]) -> None:
        """Admit ``memories`` (see :meth:`admit`); what capacity or age evicts is dropped."""
        self.admit(memories)

    def search(self, query: str, k: int, *, now: datetime | None = None) -> list[ScoredMemory]:
        """Working-set memories matching ``query``, by the blended score, at most ``k``."""
        terms = self._tokenizer.query(query)
        with self._lock:
            self._check_open()
            reference = self._now(now)
            hits = self._index.top(terms)
            if not hits:
                return []
            mass = self._index.mass(terms)
            scored = [
                (self._blend(entry, reference, normalise(raw, mass)), entry)
                for entry, raw in ((self._entries[key], raw) for key, raw in hits)
                if self._in_window(entry, reference)
            ]
        return self._ranked(scored, k)

    def get(self, ids: Sequence[str]) -> list[Memory]:
        with self._lock:
            self._check_open()
            return [self._entries[i].memory for i in ids if i in self._entries]

    def forget(self, ids: Sequence[str]) -> int:
        with self._lock:
            self._check_open()
            return sum(self._drop(memory_id) is not None for memory_id in dict.fromkeys(ids))

    def count(self) -> int:
        with self._lock:
            return len(self._entries)

    def close(self) -> None:
        with self._lock:
            self._entries.clear()
            self._index = Bm25Index()
            self._closed = True

    # -- the working set ------------------------------------------------------------------------

    def admit(self, memories: Sequence[Memory], *, anchor: datetime | None = None) -> list[Memory]:
        """Add or replace ``memories``; return what capacity and age evicted as a result.

        Each memory's anchor is its timestamp, or ``anchor`` (a promotion's "now") when that is
        later. A memory already older than the window is not admitted (nor returned).
        """
        with self._lock:
            self._check_open()
            for memory in memories:
                self._put(memory, anchor)
            return self._evict(self._now(None))

    def refresh(self, memories: Sequence[Memory]) -> None:
        """Swap in a newer record of memories already held with the same content (fields
        derived after ingest, such as entities and summary); their place and age stay."""
        with self._lock:
            self._check_open()
            for memory in memories:
                entry = self._entries.get(memory.id)
                if entry is not None and entry.memory.content == memory.content:
                    entry.memory = memory

    def active(self, k: int, *, now: datetime | None = None) -> list[ScoredMemory]:
        """The working set in "active context" order: recent and important first."""
        with self._lock:
            self._check_open()
            reference = self._now(now)
            scored = [
                (self._active_score(entry, reference), entry)
                for entry in self._entries.values()
                if self._in_window(entry, reference)
            ]
        return self._ranked(scored, k)

    def touch(self, ids: Sequence[str], *, now: datetime | None = None) -> None:
        """Mark ``ids`` as just used: their anchor moves to ``now``, keeping them in the set."""
        with self._lock:
            self._check_open()
            reference = self._now(now)
            for memory_id in ids:
                entry = self._entries.get(memory_id)
                if entry is not None and entry.anchor < reference:
                    entry.anchor = reference
                    self._latest = max(self._latest, reference)

    def expire(self, *, now: datetime | None = None) -> list[Memory]:
        """Evict what is older than the window at ``now`` (and anything over capacity)."""
        with self._lock:
            self._check_open()
            return self._evict(self._now(now))

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    def __contains__(self, memory_id: object) -> bool:
        with self._lock:
            return memory_id in self._entries

    def now(self) -> datetime:
        """The reference time ages are measured from (see ``HotConfig.clock``)."""
        with self._lock:
            return datetime.fromtimestamp(self._now(None), UTC)

    # -- internals ------------------------------------------------------------------------------

    def _put(self, memory: Memory, anchor: datetime | None) -> None:
        when = memory.timestamp.timestamp()
        if anchor is not None:
            when = max(when, as_utc(anchor).timestamp())
        self._latest = max(self._latest, when)
        old = self._entries.get(memory.id)
        if old is not None and old.memory.content == memory.content:
            old.anchor = max(old.anchor, when)
            return
        if not self._in_window_at(when, self._now(None)):
            self._drop(memory.id)  # a stale version must not outlive its replacement
            return
        self._order += 1
        self._entries[memory.id] = _Entry(memory, when, self._order)
        self._index.add(memory.id, self._tokenizer.document(memory.content))

    def _drop(self, memory_id: str) -> Memory | None:
        entry = self._entries.pop(memory_id, None)
        if entry is None:
            return None
        self._index.remove(memory_id)
        return entry.memory

    def _evict(self, reference: float) -> list[Memory]:
        stale = [e for e in self._entries.values() if not self._in_window(e, reference)]
        evicted = [e.memory for e in stale]
        for entry in stale:
            self._drop(entry.memory.id)
        excess = len(self._entries) - self.config.max_items
        if excess > 0:
            ranked = self._ranked(
                [(self._active_score(e, reference), e) for e in self._entries.values()], None
            )
            for hit in ranked[-excess:]:
                self._drop(hit.id)
                evicted.append(hit.memory)
        return evicted

    def _now(self, now: datetime | None) -> float:
        if now is not None:
            return as_utc(now).timestamp()
        if self.config.clock == "wall":
            return time.time()
        return self._latest

    def _in_window(self, entry: _Entry, reference: float) -> bool:
        return self._in_window_at(entry.anchor, reference)

    def _in_window_at(self, anchor: float, reference: float) -> bool:
        return reference - anchor <= self.config.max_age_hours * 3600.0

    def _recency(self, entry: _Entry, reference: float) -> float:
        age_hours = max(0.0, (reference - entry.anchor) / 3600.0)
        return float(0.5 ** (age_hours / self.config.recency_half_life_hours))

    def _active_score(self, entry: _Entry, reference: float) -> float:
        w = self.config.weights
        total = w.recency + w.importance
        if total <= 0:
            return 0.0
        recency = self._recency(entry, reference)
        return (w.recency * recency + w.importance * entry.memory.importance) / total

    def _blend(self, entry: _Entry, reference: float, lexical: float) -> float:
        w = self.config.weights
        recency = self._recency(entry, reference)
        value = w.lexical * lexical + w.recency * recency + w.importance * entry.memory.importance
        return min(1.0, value / (w.lexical + w.recency + w.importance))

    def _ranked(self, scored: list[tuple[float, _Entry]], k: int | None) -> list[ScoredMemory]:
        scored.sort(key=lambda pair: (-pair[0], -pair[1].anchor, -pair[1].order))
        chosen = scored if k is None else scored[: max(k, 0)]
        return [
            ScoredMemory(entry.memory, self.name, score, rank)
            for rank, (score, entry) in enumerate(chosen)
        ]

    def _check_open(self) -> None:
        if self._closed:
            raise TierClosedError("the hot tier is closed")

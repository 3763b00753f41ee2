"""The lifecycle: the warm index kept in step with the archive, capacity, and use-driven moves.

:class:`WarmSync` takes due outbox items in batches and hands them to the warm tier: upserts
as one ``add`` (the warm tier embeds the batch), deletions as one ``forget``. Success removes
the items from the outbox and marks the memories indexed; failure (any exception: an embedder
or Chroma down) counts an attempt, schedules the retry and ends the pass, so a dead backend is
not hammered. After each successful upsert batch the warm tier is held to ``max_items``: the
least-used vectors leave Chroma and their memories become cold-only (still archived, still
found by BM25).

All warm writes go through one lock, so a deletion (``forget``) can never be overtaken by an
upsert of the same memory that started before it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from tiers.base import Embedder
from tiers.cold import ArchiveTxn, ColdArchive, to_us
from tiers.config import LifecycleConfig
from tiers.history import history_line
from tiers.memory import Memory, ScoredMemory
from tiers.outbox import Outbox, OutboxItem
from tiers.schema import WARM_EVICTED, WARM_INDEXED, WARM_PENDING

logger = logging.getLogger(__name__)


@runtime_checkable
class WarmIndex(Protocol):
    """What the store needs from a warm tier: the Tier protocol and use-based eviction."""

    name: str
    embedder: Embedder

    def add(
        self, memories: Sequence[Memory], *, contexts: Mapping[str, str] | None = None
    ) -> None: ...

    def search(self, query: str, k: int) -> list[ScoredMemory]: ...

    def get(self, ids: Sequence[str]) -> list[Memory]: ...

    def forget(self, ids: Sequence[str]) -> int: ...

    def count(self) -> int: ...

    def close(self) -> None: ...

    def contains(self, ids: Sequence[str]) -> set[str]: ...

    def touch(self, ids: Sequence[str]) -> None: ...

    def evict_least_used(self, n: int) -> list[str]: ...


@runtime_checkable
class IdSearch(Protocol):
    """A warm index that can answer a search with ``(id, score)`` pairs only."""

    def search_ids(self, query: str, k: int) -> list[tuple[str, float]]: ...


class WarmSync:
    """Drains the outbox into the warm tier; one drainer at a time."""

    def __init__(
        self,
        archive: ColdArchive,
        outbox: Outbox,
        warm: WarmIndex,
        *,
        max_items: int,
        batch_size: int,
    ) -> None:
        self.archive = archive
        self.outbox = outbox
        self.warm = warm
        self.max_items = max_items
        self.batch_size = batch_size
        self.warm_lock = threading.RLock()  # every warm write
        self._drain_lock = threading.Lock()  # one drainer at a time
        # fields worked out from a memory's content after it was archived (the store's
        # deferred enrichment): applied to each upsert batch before it is embedded
        self.derive: Callable[[list[Memory]], list[Memory]] | None = None

    def drain(
        self,
        *,
        ignore_schedule: bool = False,
        limit: int | None = None,
        pause: Callable[[], bool] | None = None,
    ) -> int:
        """Process due items until none is left, ``limit`` are done or a batch fails.

        ``pause``: called before each batch (the worker waits there while ingests arrive);
        draining stops when it returns False. Returns how many items succeeded.
        """
        done = 0
        with self._drain_lock:
            while limit is None or done < limit:
                if pause is not None and not pause():
                    break
                size = self.batch_size if limit is None else min(self.batch_size, limit - done)
                items = self.outbox.due(size, ignore_schedule=ignore_schedule)
                if not items:
                    break
                ok = self._process(items)
                if ok < 0:
                    break
                done += ok
        return done

    def _process(self, items: list[OutboxItem]) -> int:
        """Apply one batch; the number applied, or -1 when the warm tier failed."""
        deletes = [i for i in items if i.op == "delete"]
        upserts = [i for i in items if i.op == "upsert"]
        with self.warm_lock:
            doomed = [i.id for i in deletes]
            if deletes and not self._apply(deletes, lambda: self.warm.forget(doomed)):
                self.outbox.release(upserts)  # not tried: due again at once, for any replica
                return -1
            if upserts:
                current, stale = self._current_versions(upserts)
                self.outbox.discard(stale)
                memories = self.archive.get([i.id for i in current])
                if self.derive is not None and memories:
                    memories = self.derive(memories)
                contexts = self._contexts(memories)
                if memories and not self._apply(
                    current, lambda: self.warm.add(memories, contexts=contexts)
                ):
                    return -1
                self._after_upsert(current)
        return len(items)

    def _contexts(self, memories: Sequence[Memory]) -> dict[str, str]:
        """Each memory's preceding turn, as a history line, for contextual vectors."""
        before = self.archive.predecessors([m.id for m in memories])
        return {memory_id: history_line(previous) for memory_id, previous in before.items()}

    def _apply(self, items: Sequence[OutboxItem], call: Callable[[], object]) -> bool:
        try:
            call()
        except Exception as exc:  # any backend failure: the items stay queued
            error = f"{type(exc).__name__}: {exc}"
            logger.warning("warm index: %d item(s) stay queued after %s", len(items), error)
            self.outbox.failed(items, error)
            return False
        self.outbox.succeeded(items)
        return True

    def _current_versions(
        self, items: Sequence[OutboxItem]
    ) -> tuple[list[OutboxItem], list[OutboxItem]]:
        """Split upserts into those whose memory is archived and those that were forgotten."""
        held = set(self.archive.citation_of([i.id for i in items]))
        return [i for i in items if i.id in held], [i for i in items if i.id not in held]

    def _after_upsert(self, items: Sequence[OutboxItem]) -> None:
        used = self.archive.used_ids([i.id for i in items])
        if used:  # a promoted memory keeps its uses, so capacity does not evict it at once
            self._quietly(lambda: self.warm.touch(used))
        self.enforce_capacity()

    def enforce_capacity(self) -> list[str]:
        """Drop the least-used vectors beyond ``max_items``; their memories become cold-only."""
        with self.warm_lock:
            excess = self.warm.count() - self.max_items
            if excess <= 0:
                return []
            evicted = self.warm.evict_least_used(excess)
        if evicted:
            with self.archive.transaction() as txn:
                txn.conn.executemany(
                    "UPDATE memories SET warm = ?, uses_since_move = 0 WHERE id = ?",
                    [(WARM_EVICTED, i) for i in evicted],
                )
            logger.info("warm index over capacity: %d memories are now cold-only", len(evicted))
        return evicted

    def forget_now(self, ids: Sequence[str]) -> bool:
        """Remove ``ids`` from the warm tier at once; on failure their queued deletes stay."""
        with self.warm_lock:
            queued = [i for i in self.outbox.queued(ids) if i.op == "delete"]
            return self._apply(queued, lambda: self.warm.forget(list(ids)))

    def reconcile(self, *, full: bool = False) -> int:
        """Queue what the warm index lacks; return how many memories were queued.

        Memories never indexed are queued. If Chroma holds fewer vectors than the archive says
        are indexed (or ``full``), every indexed id is checked and the missing ones re-queued.
        """
        queued = self.outbox.requeue_unindexed()
        sql = "SELECT COUNT(*) FROM memories WHERE warm = ?"
        indexed = int(self.archive.query(sql, (WARM_INDEXED,))[0][0])
        if full or self.warm.count() < indexed:
            queued += self._requeue_missing()
        if queued:
            logger.info("warm index: %d memories queued for embedding on open", queued)
        return queued

    def _requeue_missing(self) -> int:
        missing: list[str] = []
        last = 0
        while True:
            rows = self.archive.query(
                "SELECT seq, id FROM memories WHERE warm = ? AND seq > ? ORDER BY seq LIMIT 1000",
                (WARM_INDEXED, last),
            )
            if not rows:
                break
            ids = [str(r[1]) for r in rows]
            present = self.warm.contains(ids)
            missing.extend(i for i in ids if i not in present)
            last = int(rows[-1][0])
        self.outbox.requeue_missing(missing)
        return len(missing)

    @staticmethod
    def _quietly(call: Callable[[], object]) -> None:
        try:
            call()
        except Exception as exc:  # usage bookkeeping must never fail a write
            logger.warning("warm index: could not record use: %s", exc)


def requeue_for_warm(txn: ArchiveTxn, outbox: Outbox, rows: Sequence[tuple[str, str]]) -> None:
    """Queue (id, content_sha) memories for the warm index again (they had left it)."""
    txn.conn.executemany(
        "UPDATE memories SET warm = ?, uses_since_move = 0 WHERE id = ?",
        [(WARM_PENDING, i) for i, _ in rows],
    )
    outbox.enqueue_upserts(txn, rows)


def count_uses(
    archive: ColdArchive,
    outbox: Outbox,
    ids: Sequence[str],
    *,
    moment: datetime,
    config: LifecycleConfig,
    warm: bool,
    in_hot: Callable[[str], bool],
) -> tuple[list[str], list[str]]:
    """Count one use of each of ``ids``; return (re-queued for warm, due to join the hot set).

    A cold-only memory used ``cold_to_warm_uses`` times since it left the warm index is queued
    for it again; any other memory used ``warm_to_hot_uses`` times since it last moved is due
    to join the hot set. Moving resets the count.
    """
    marks = ",".join("?" * len(ids))
    with archive.transaction() as txn:
        txn.conn.execute(
            "UPDATE memories SET uses = uses + 1, uses_since_move = uses_since_move + 1, "
            f"last_used_us = ? WHERE id IN ({marks})",
            (to_us(moment), *ids),
        )
        rows = txn.conn.execute(
            f"SELECT id, warm, uses_since_move, content_sha FROM memories WHERE id IN ({marks})",
            tuple(ids),
        ).fetchall()
        to_warm = [
            (str(i), str(sha))
            for i, state, n, sha in rows
            if warm and state == WARM_EVICTED and n >= config.cold_to_warm_uses
        ]
        requeue_for_warm(txn, outbox, to_warm)
        moved = {i for i, _ in to_warm}
        to_hot = [
            str(i)
            for i, _, n, _ in rows
            if n >= config.warm_to_hot_uses and i not in moved and not in_hot(str(i))
        ]
        txn.conn.executemany(
            "UPDATE memories SET uses_since_move = 0 WHERE id = ?", [(i,) for i in to_hot]
        )
    return [i for i, _ in to_warm], to_hot


class DrainWorker:
    """A daemon thread that drains the outbox when notified and when retries fall due.

    Writes come first: while they keep arriving (a bulk import sends batch after batch) the
    worker holds back, starting or continuing only once none came for ``quiet_seconds``, but
    never holding back longer than ``max_pause_seconds`` at a time. Embedding takes every core
    it gets, so draining alongside an import would slow each acknowledgement several times
    over, for the same total time to embed everything.
    """

    def __init__(
        self,
        sync: WarmSync,
        *,
        idle_seconds: float = 60.0,
        quiet_seconds: float = 0.25,
        max_pause_seconds: float = 10.0,
    ) -> None:
        self._sync = sync
        self._idle = idle_seconds
        self._quiet = quiet_seconds
        self._max_pause = max_pause_seconds
        self._last_write = 0.0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tiers-outbox", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        """Work was queued (by a write): drain it once writes pause."""
        self._last_write = time.monotonic()
        self._wake.set()

    def _yield_to_writes(self) -> bool:
        """Wait while writes keep arriving (see the class); False once the worker stops."""
        started = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            left = min(self._quiet - (now - self._last_write), self._max_pause - (now - started))
            if left <= 0:
                return True
            self._stop.wait(left)
        return False

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self._sync.drain(pause=self._yield_to_writes)
                wait = self._sync.outbox.seconds_until_due()
            except Exception:  # keep the worker alive; the items stay queued
                logger.exception("outbox worker: drain failed")
                wait = self._idle
            self._wake.wait(self._idle if wait is None else max(wait, 0.01))

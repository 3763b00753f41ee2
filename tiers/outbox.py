"""The persistent outbox: warm-index work kept in the archive until the warm tier has it.

Each row is one memory id with what the warm tier must do with it (``upsert`` a version of its
content, or ``delete`` it), how often that failed, when to try again and the last error. Rows
are written in the same transaction as the archive change that causes them, so a crash can
never leave a memory archived but forgotten by the warm index (or forgotten in the archive but
still in Chroma). A row leaves the queue only when the warm tier acknowledged exactly the
version it names: an upsert of an older version, finished while a newer one was ingested,
leaves the newer row in place.

Backoff: after the n-th failure a row waits ``retry_base_seconds * 2**(n-1)``, at most
``retry_max_seconds``. Rows are never dropped for failing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from tiers.cold import ArchiveTxn, ColdArchive
from tiers.config import OutboxConfig
from tiers.schema import WARM_INDEXED, WARM_PENDING

Op = Literal["upsert", "delete"]
_MAX_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """One queued piece of warm-index work."""

    id: str
    op: Op
    content_sha: str | None
    attempts: int
    next_attempt_at: datetime
    last_error: str | None


def _us(seconds: float) -> int:
    return int(seconds * 1_000_000)


class Outbox:
    """The queue's reads and writes; writes that accompany archive changes take the txn."""

    # what else a re-queued item resets (a backend that leases claims releases them here)
    _REQUEUE_RESETS = ""

    def __init__(
        self,
        archive: ColdArchive,
        config: OutboxConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.archive = archive
        self.config = config or OutboxConfig()
        self._clock = clock

    # -- enqueueing (inside an archive transaction) -----------------------------------------------

    def enqueue_upserts(self, txn: ArchiveTxn, items: Iterable[tuple[str, str]]) -> None:
        """Queue (id, content_sha) versions for embedding, due now (resets their retry count)."""
        now = _us(self._clock())
        txn.conn.executemany(
            "INSERT INTO outbox (id, op, content_sha, attempts, next_attempt_us) "
            "VALUES (?, 'upsert', ?, 0, ?) ON CONFLICT (id) DO UPDATE SET op = 'upsert', "
            "content_sha = excluded.content_sha, attempts = 0, "
            "next_attempt_us = excluded.next_attempt_us, last_error = NULL" + self._REQUEUE_RESETS,
            [(memory_id, sha, now) for memory_id, sha in items],
        )

    def enqueue_deletes(self, txn: ArchiveTxn, ids: Iterable[str]) -> None:
        """Queue the removal of ``ids`` from the warm index, due now."""
        now = _us(self._clock())
        txn.conn.executemany(
            "INSERT INTO outbox (id, op, content_sha, attempts, next_attempt_us) "
            "VALUES (?, 'delete', NULL, 0, ?) ON CONFLICT (id) DO UPDATE SET op = 'delete', "
            "content_sha = NULL, attempts = 0, next_attempt_us = excluded.next_attempt_us, "
            "last_error = NULL" + self._REQUEUE_RESETS,
            [(memory_id, now) for memory_id in ids],
        )

    def requeue_unindexed(self) -> int:
        """Queue every archived memory not in the warm index and not already queued."""
        now = _us(self._clock())
        with self.archive.transaction() as txn:
            cursor = txn.conn.execute(
                "INSERT INTO outbox (id, op, content_sha, attempts, next_attempt_us) "
                "SELECT id, 'upsert', content_sha, 0, ? FROM memories "
                "WHERE warm = ? AND id NOT IN (SELECT id FROM outbox)",
                (now, WARM_PENDING),
            )
            return max(cursor.rowcount, 0)

    def requeue_missing(self, ids: Sequence[str]) -> None:
        """Mark ``ids`` as not indexed (their vectors went missing) and queue them again."""
        if not ids:
            return
        with self.archive.transaction() as txn:
            rows = _select_in(txn, "SELECT id, content_sha FROM memories WHERE id IN ({})", ids)
            txn.conn.executemany(
                "UPDATE memories SET warm = ? WHERE id = ?", [(WARM_PENDING, i) for i, _ in rows]
            )
            self.enqueue_upserts(txn, rows)

    # -- draining ---------------------------------------------------------------------------------

    def due(self, limit: int, *, ignore_schedule: bool = False) -> list[OutboxItem]:
        """Up to ``limit`` items whose retry time has come (any, with ``ignore_schedule``)."""
        horizon = 2**62 if ignore_schedule else _us(self._clock())
        rows = self.archive.query(
            "SELECT id, op, content_sha, attempts, next_attempt_us, last_error FROM outbox "
            "WHERE next_attempt_us <= ? ORDER BY next_attempt_us, rowid LIMIT ?",
            (horizon, limit),
        )
        return [_item(row) for row in rows]

    def succeeded(self, items: Sequence[OutboxItem]) -> None:
        """Remove exactly these versions from the queue; mark upserted memories indexed."""
        with self.archive.transaction() as txn:
            txn.conn.executemany(
                "DELETE FROM outbox WHERE id = ? AND op = ? AND content_sha IS ?",
                [(i.id, i.op, i.content_sha) for i in items],
            )
            txn.conn.executemany(
                "UPDATE memories SET warm = ?, uses_since_move = 0 "
                "WHERE id = ? AND content_sha = ? AND warm != ?",
                [
                    (WARM_INDEXED, i.id, i.content_sha, WARM_INDEXED)
                    for i in items
                    if i.op == "upsert"
                ],
            )

    def discard(self, items: Sequence[OutboxItem]) -> None:
        """Drop items that no longer apply (an upsert whose memory was forgotten meanwhile)."""
        with self.archive.transaction() as txn:
            txn.conn.executemany(
                "DELETE FROM outbox WHERE id = ? AND op = ? AND content_sha IS ?",
                [(i.id, i.op, i.content_sha) for i in items],
            )

    def failed(self, items: Sequence[OutboxItem], error: str) -> None:
        """Count a failure for these versions and schedule their next attempt."""
        now = self._clock()
        with self.archive.transaction() as txn:
            txn.conn.executemany(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_us = ?, last_error = ? "
                "WHERE id = ? AND op = ? AND content_sha IS ?",
                [
                    (
                        _us(now + self.delay(i.attempts + 1)),
                        error[:_MAX_ERROR_CHARS],
                        i.id,
                        i.op,
                        i.content_sha,
                    )
                    for i in items
                ],
            )

    def release(self, items: Sequence[OutboxItem]) -> None:
        """Give back items taken by :meth:`due` but not tried (nothing to do: SQLite's queue
        has one drainer and no claims)."""
        return None

    def delay(self, attempts: int) -> float:
        """Seconds to wait after the ``attempts``-th consecutive failure."""
        exponent = min(max(attempts - 1, 0), 60)
        return float(
            min(self.config.retry_max_seconds, self.config.retry_base_seconds * 2**exponent)
        )

    # -- status -----------------------------------------------------------------------------------

    def pending(self) -> int:
        return int(self.archive.query("SELECT COUNT(*) FROM outbox")[0][0])

    def seconds_until_due(self) -> float | None:
        """Seconds until the earliest item is due (0 if one is due now), None when empty."""
        row = self.archive.query("SELECT MIN(next_attempt_us) FROM outbox")[0]
        if row[0] is None:
            return None
        return max(0.0, int(row[0]) / 1_000_000 - self._clock())

    def queued(self, ids: Sequence[str]) -> list[OutboxItem]:
        """The queued items of ``ids``."""
        out: list[OutboxItem] = []
        for start in range(0, len(ids), 500):
            chunk = tuple(ids[start : start + 500])
            out.extend(
                _item(row)
                for row in self.archive.query(
                    "SELECT id, op, content_sha, attempts, next_attempt_us, last_error "
                    f"FROM outbox WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    def items(self, limit: int = 100) -> list[OutboxItem]:
        """The queue's head, for status displays."""
        rows = self.archive.query(
            "SELECT id, op, content_sha, attempts, next_attempt_us, last_error FROM outbox "
            "ORDER BY next_attempt_us, rowid LIMIT ?",
            (limit,),
        )
        return [_item(row) for row in rows]


def _item(row: Sequence[object]) -> OutboxItem:
    memory_id, op, sha, attempts, next_us, error = row
    return OutboxItem(
        id=str(memory_id),
        op="delete" if op == "delete" else "upsert",
        content_sha=None if sha is None else str(sha),
        attempts=int(str(attempts)),
        next_attempt_at=datetime.fromtimestamp(int(str(next_us)) / 1_000_000, UTC),
        last_error=None if error is None else str(error),
    )


def _select_in(txn: ArchiveTxn, sql: str, ids: Sequence[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        out.extend((str(a), str(b)) for a, b in txn.conn.execute(sql.format(marks), tuple(chunk)))
    return out

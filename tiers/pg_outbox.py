"""The outbox in PostgreSQL, drained by whichever replica is alive.

The queue is the SQLite outbox's (:class:`tiers.outbox.Outbox`: one row per memory id, retried
with backoff, never dropped), plus a claim. :meth:`PgOutbox.due` does not just read the due rows:
it claims them, in one short transaction, with ``FOR UPDATE SKIP LOCKED`` (two replicas asking at
once get disjoint rows, neither waits for the other) and a lease (``claimed_until_us``, now +
``outbox.lease_seconds``), so a row a replica is embedding is not handed to another. Success
deletes the row; failure records the error, schedules the retry and releases the claim. A
replica that dies mid-batch releases nothing: its rows become due again when the lease runs out,
and whichever replica drains next takes them over. Re-queueing a row (a newer version of the
memory) releases its claim at once: the new version must not wait for the old one's lease.

Leases are wall-clock microseconds of the replicas' clocks (as the retry schedule is): keep the
replicas' clocks in sync (NTP) to well within the lease.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tiers.config import OutboxConfig
from tiers.outbox import Outbox, OutboxItem, _item, _us
from tiers.pg_archive import PgArchive

if TYPE_CHECKING:
    import psycopg

_COLUMNS = "id, op, content_sha, attempts, next_attempt_us, last_error"
_MAX_ERROR_CHARS = 500
_CLAIM = f"""
UPDATE outbox SET claimed_until_us = %(until)s, claimed_by = %(me)s
WHERE qseq IN (
    SELECT qseq FROM outbox
    WHERE next_attempt_us <= %(horizon)s AND claimed_until_us <= %(now)s
    ORDER BY next_attempt_us, qseq
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
RETURNING {_COLUMNS}, qseq
"""
_SAME = "id = %s AND op = %s AND content_sha IS NOT DISTINCT FROM %s"


def replica_name() -> str:
    """Who holds a claim (for status displays): host, process and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class PgOutbox(Outbox):
    """The outbox of a :class:`~tiers.pg_archive.PgArchive`, with claims and leases."""

    def __init__(
        self,
        archive: PgArchive,
        config: OutboxConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        claimer: str | None = None,
    ) -> None:
        super().__init__(archive, config, clock=clock)
        self.pg = archive
        self.claimer = claimer or replica_name()

    # re-queueing a newer version releases any claim on the older one
    _REQUEUE_RESETS = ", claimed_until_us = 0, claimed_by = NULL"

    # -- draining ---------------------------------------------------------------------------------

    def due(self, limit: int, *, ignore_schedule: bool = False) -> list[OutboxItem]:
        """Claim up to ``limit`` due items no live claim holds, for ``lease_seconds``."""
        if limit <= 0:
            return []
        now = self._clock()
        params = {
            "until": _us(now + self.config.lease_seconds),
            "me": self.claimer,
            "horizon": 2**62 if ignore_schedule else _us(now),
            "now": _us(now),
            "limit": limit,
        }
        with self.pg._session() as conn:
            rows = conn.raw.execute(_CLAIM, params).fetchall()
        rows.sort(key=lambda row: (row[4], row[6]))  # RETURNING keeps no order
        return [_item(row[:6]) for row in rows]

    def succeeded(self, items: Sequence[OutboxItem]) -> None:
        with self.pg._session() as conn:
            _many(conn.raw, f"DELETE FROM outbox WHERE {_SAME}", items)
            upserts = [i for i in items if i.op == "upsert"]
            if upserts:
                conn.raw.cursor().executemany(
                    "UPDATE memories SET warm = 1, uses_since_move = 0 "
                    "WHERE id = %s AND content_sha = %s AND warm <> 1",
                    [(i.id, i.content_sha) for i in upserts],
                )

    def discard(self, items: Sequence[OutboxItem]) -> None:
        with self.pg._session() as conn:
            _many(conn.raw, f"DELETE FROM outbox WHERE {_SAME}", items)

    def release(self, items: Sequence[OutboxItem]) -> None:
        """Drop this replica's claim on items it took but did not try."""
        with self.pg._session() as conn:
            _many(
                conn.raw,
                f"UPDATE outbox SET claimed_until_us = 0, claimed_by = NULL WHERE {_SAME}",
                items,
            )

    def failed(self, items: Sequence[OutboxItem], error: str) -> None:
        now = self._clock()
        if not items:
            return
        with self.pg._session() as conn:
            conn.raw.cursor().executemany(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_us = %s, "
                f"last_error = %s, claimed_until_us = 0, claimed_by = NULL WHERE {_SAME}",
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

    # -- status -----------------------------------------------------------------------------------

    def seconds_until_due(self) -> float | None:
        """Seconds until an item is due and unclaimed (a live claim counts as not yet due)."""
        row = self.archive.query(
            "SELECT MIN(GREATEST(next_attempt_us, claimed_until_us)) FROM outbox"
        )[0]
        if row[0] is None:
            return None
        return max(0.0, int(row[0]) / 1_000_000 - self._clock())

    def items(self, limit: int = 100) -> list[OutboxItem]:
        rows = self.archive.query(
            f"SELECT {_COLUMNS} FROM outbox ORDER BY next_attempt_us, qseq LIMIT ?", (limit,)
        )
        return [_item(row) for row in rows]

    def claims(self) -> dict[str, str]:
        """Queued ids under a live claim, and who holds each."""
        rows = self.archive.query(
            "SELECT id, claimed_by FROM outbox WHERE claimed_until_us > ?", (_us(self._clock()),)
        )
        return {str(i): str(by) for i, by in rows}


def _many(raw: psycopg.Connection[Any], sql: str, items: Sequence[OutboxItem]) -> None:
    if items:
        raw.cursor().executemany(sql, [(i.id, i.op, i.content_sha) for i in items])

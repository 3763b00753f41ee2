"""How often each warm vector was used: the order in which the warm tier evicts.

Touching is on the query path, so it only bumps counters in memory; the counters reach a small
SQLite file (``warm_usage.<collection>.sqlite3`` beside the Chroma data) every
:data:`FLUSH_EVERY` touches, every :data:`FLUSH_SECONDS` seconds and on close. The file is
advisory: losing the last unflushed touches in a crash only makes eviction slightly less
informed, and a damaged file is set aside and started afresh. Every indexed id has a row
(``uses`` 0 when added), so the least-used ids are one indexed query away.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

FLUSH_EVERY = 1000
FLUSH_SECONDS = 30.0
_CHUNK = 500  # ids per SQL statement (SQLite's variable limit is 32766 on modern builds)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    id TEXT PRIMARY KEY,
    uses INTEGER NOT NULL DEFAULT 0,
    last_used REAL NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_order ON usage (uses, last_used, id);
"""


class UsageLog:
    """Use counts and last-use times per id; thread-safe; ``path`` None keeps them in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[int, float]] = {}
        self._pending_touches = 0
        self._last_flush = time.monotonic()
        self._db = _connect(path)

    def added(self, ids: Iterable[str], now: float | None = None) -> None:
        """Register newly indexed ids (an id already known keeps its counts)."""
        stamp = time.time() if now is None else now
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO usage (id, uses, last_used) VALUES (?, 0, ?)",
                ((i, stamp) for i in ids),
            )

    def touch(self, ids: Iterable[str], now: float | None = None) -> None:
        """Count one use of each id; cheap (in memory until the next flush)."""
        stamp = time.time() if now is None else now
        with self._lock:
            for i in ids:
                uses, _ = self._pending.get(i, (0, 0.0))
                self._pending[i] = (uses + 1, stamp)
                self._pending_touches += 1
            due = self._pending_touches >= FLUSH_EVERY or (
                time.monotonic() - self._last_flush >= FLUSH_SECONDS
            )
            if due:
                self._flush_locked()

    def removed(self, ids: Iterable[str]) -> None:
        """Forget the ids (forgotten or evicted)."""
        chunk = list(ids)
        with self._lock, self._db:
            for i in chunk:
                self._pending.pop(i, None)
            self._db.executemany("DELETE FROM usage WHERE id = ?", ((i,) for i in chunk))

    def least_used(self, n: int) -> list[str]:
        """Up to ``n`` ids, fewest uses first, then the longest unused."""
        with self._lock:
            self._flush_locked()
            rows = self._db.execute(
                "SELECT id FROM usage ORDER BY uses, last_used, id LIMIT ?", (max(n, 0),)
            ).fetchall()
        return [row[0] for row in rows]

    def uses(self, ids: Sequence[str]) -> dict[str, int]:
        """Use counts of the known ids among ``ids`` (flushed and pending)."""
        with self._lock:
            self._flush_locked()
            found: dict[str, int] = {}
            for start in range(0, len(ids), _CHUNK):
                chunk = list(ids[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id, uses FROM usage WHERE id IN ({marks})"
                found.update(self._db.execute(sql, chunk).fetchall())
        return found

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM usage").fetchone()[0])

    def resync(self, indexed: set[str]) -> None:
        """Make the rows match ``indexed`` exactly (after a crash between index and log)."""
        with self._lock, self._db:
            known = {row[0] for row in self._db.execute("SELECT id FROM usage")}
            self._db.executemany(
                "INSERT INTO usage (id, uses, last_used) VALUES (?, 0, 0)",
                ((i,) for i in indexed - known),
            )
            self._db.executemany("DELETE FROM usage WHERE id = ?", ((i,) for i in known - indexed))
        log.info("warm usage log resynced: +%d -%d ids", len(indexed - known), len(known - indexed))

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._db.close()

    def _flush_locked(self) -> None:
        if self._pending:
            with self._db:
                self._db.executemany(
                    "UPDATE usage SET uses = uses + ?, last_used = max(last_used, ?) WHERE id = ?",
                    ((uses, stamp, i) for i, (uses, stamp) in self._pending.items()),
                )
            self._pending.clear()
        self._pending_touches = 0
        self._last_flush = time.monotonic()


def _connect(path: Path | None) -> sqlite3.Connection:
    if path is None:
        return _open(":memory:")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # server mode: nothing else makes it
        return _open(str(path))
    except sqlite3.DatabaseError as exc:  # damaged: the counts are advisory, start afresh
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        log.warning("warm usage log %s unreadable (%s); moved to %s", path, exc, aside)
        path.replace(aside)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        return _open(str(path))


def _open(target: str) -> sqlite3.Connection:
    db = sqlite3.connect(target, check_same_thread=False, isolation_level="DEFERRED")
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        db.execute("SELECT count(*) FROM usage").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db

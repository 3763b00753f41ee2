"""Which citations replies used: when, in which session, for which query.

``feedback`` records every disclosed memory a reply used, whether it cited it (``[mem:xxxxxx]``)
or echoed its words, with the reply's time, the caller's session and the query; and one row per
reply with its tokens and the full history's, so savings can be charted over time. The log
answers "most used citations" and "where was this cited". Forgetting a memory removes its rows
(on disk too: ``secure_delete``). Kept in ``citations.sqlite3`` in the data directory.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from disclosure.sidefiles import open_side_db
from tiers.errors import StorageError

CITATION_FILE = "citations.sqlite3"
USE_FIELDS = ("memory_id", "citation", "how", "at_us", "session_id", "query", "level")
REPLY_FIELDS = ("at_us", "level", "budget", "tokens_used", "full_history_tokens", "used")
MAX_QUERY_CHARS = 2000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS uses (
    memory_id TEXT NOT NULL,
    citation TEXT NOT NULL,
    how TEXT NOT NULL CHECK (how IN ('cited', 'echoed')),
    at_us INTEGER NOT NULL,
    session_id TEXT,
    query TEXT NOT NULL,
    level TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS uses_by_memory ON uses (memory_id, at_us);
CREATE TABLE IF NOT EXISTS replies (
    at_us INTEGER NOT NULL,
    level TEXT NOT NULL,
    budget INTEGER NOT NULL,
    tokens_used INTEGER NOT NULL,
    full_history_tokens INTEGER NOT NULL,
    used INTEGER NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class CitationUse:
    """One reply's use of one memory."""

    memory_id: str
    citation: str
    how: str
    at: datetime
    session_id: str | None
    query: str
    level: str


@dataclass(frozen=True, slots=True)
class CitationCount:
    """How often replies used one memory: cited, echoed, and when last."""

    memory_id: str
    citation: str
    cited: int
    echoed: int
    last: datetime

    @property
    def total(self) -> int:
        return self.cited + self.echoed


@dataclass(frozen=True, slots=True)
class ReplyPoint:
    """One reply's tokens against the full history: a point of the savings chart."""

    at: datetime
    level: str
    tokens_used: int
    full_history_tokens: int
    used: int

    @property
    def savings(self) -> float:
        return self.full_history_tokens / self.tokens_used if self.tokens_used else 0.0


class CitationLog:
    """The citation usage log of one data directory. Thread-safe."""

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / CITATION_FILE
        self._lock = threading.Lock()
        self._conn = open_side_db(self.path, _SCHEMA, "the citation log")

    def record(
        self,
        *,
        used: Sequence[tuple[str, str, bool]],
        query: str,
        level: str,
        session_id: str | None,
        budget: int,
        tokens_used: int,
        full_history_tokens: int,
        at: datetime | None = None,
    ) -> None:
        """One reply: ``used`` holds (memory id, citation, whether it was cited)."""
        moment = _us(at or datetime.now(UTC))
        rows = [
            (m, c, "cited" if cited else "echoed", moment, session_id,
             query[:MAX_QUERY_CHARS], level)
            for m, c, cited in used
        ]  # fmt: skip
        with self._write() as conn:
            conn.executemany("INSERT INTO uses VALUES (?,?,?,?,?,?,?)", rows)
            conn.execute(
                "INSERT INTO replies VALUES (?,?,?,?,?,?)",
                (moment, level, budget, tokens_used, full_history_tokens, len(used)),
            )

    def top(self, n: int = 10) -> list[CitationCount]:
        """The ``n`` most used memories (cited counts first, then all uses)."""
        rows = self._rows(
            "SELECT memory_id, MAX(citation), SUM(how = 'cited'), SUM(how = 'echoed'), "
            "MAX(at_us) FROM uses GROUP BY memory_id "
            "ORDER BY SUM(how = 'cited') DESC, COUNT(*) DESC, MAX(at_us) DESC, memory_id LIMIT ?",
            (max(0, n),),
        )
        return [
            CitationCount(str(m), str(c), int(ci), int(ec), _dt(int(t))) for m, c, ci, ec, t in rows
        ]

    def where(self, memory_id: str, limit: int = 100) -> list[CitationUse]:
        """Where ``memory_id`` was used, newest first."""
        rows = self._rows(
            "SELECT memory_id, citation, how, at_us, session_id, query, level FROM uses "
            "WHERE memory_id = ? ORDER BY at_us DESC, rowid DESC LIMIT ?",
            (memory_id, max(0, limit)),
        )
        return [
            CitationUse(str(m), str(c), str(h), _dt(int(t)), None if s is None else str(s),
                        str(q), str(lv))
            for m, c, h, t, s, q, lv in rows
        ]  # fmt: skip

    def replies(self, limit: int = 500) -> list[ReplyPoint]:
        """The last ``limit`` replies, oldest first."""
        rows = self._rows(
            "SELECT at_us, level, tokens_used, full_history_tokens, used FROM replies "
            "ORDER BY at_us DESC, rowid DESC LIMIT ?",
            (max(0, limit),),
        )
        points = [
            ReplyPoint(_dt(int(t)), str(lv), int(u), int(f), int(n)) for t, lv, u, f, n in rows
        ]
        return points[::-1]

    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every use and every reply, in the order they were recorded (for export)."""
        uses = self._rows(f"SELECT {', '.join(USE_FIELDS)} FROM uses ORDER BY rowid", ())
        replies = self._rows(f"SELECT {', '.join(REPLY_FIELDS)} FROM replies ORDER BY rowid", ())
        return (
            [dict(zip(USE_FIELDS, row, strict=True)) for row in uses],
            [dict(zip(REPLY_FIELDS, row, strict=True)) for row in replies],
        )

    def import_rows(
        self, uses: Sequence[Mapping[str, Any]], replies: Sequence[Mapping[str, Any]]
    ) -> tuple[int, int]:
        """Append exported rows, skipping any already here exactly; (uses, replies) added."""
        added: list[int] = []
        for table, fields, rows in (("uses", USE_FIELDS, uses), ("replies", REPLY_FIELDS, replies)):
            present = set(self._rows(f"SELECT {', '.join(fields)} FROM {table}", ()))
            new = [t for t in (tuple(r[f] for f in fields) for r in rows) if t not in present]
            marks = ", ".join("?" * len(fields))
            with self._write() as conn:
                conn.executemany(f"INSERT INTO {table} ({', '.join(fields)}) VALUES ({marks})", new)
            added.append(len(new))
        return added[0], added[1]

    def forget(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._write() as conn:
            cursor = conn.executemany("DELETE FROM uses WHERE memory_id = ?", [(i,) for i in ids])
            removed = int(cursor.rowcount)
        with self._lock:  # the log would otherwise keep the deleted rows' old pages
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _write(self) -> _Txn:
        return _Txn(self)

    def _rows(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None


class _Txn:
    def __init__(self, log: CitationLog) -> None:
        self.log = log

    def __enter__(self) -> sqlite3.Connection:
        self.log._lock.acquire()
        self.log._conn.execute("BEGIN IMMEDIATE")
        return self.log._conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self.log._conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.log._lock.release()


def _us(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _dt(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)

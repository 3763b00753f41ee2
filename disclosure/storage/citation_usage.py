"""Which citations replies used: when, in which session, for which query.

``feedback`` records every disclosed memory a reply used, whether it cited it (``[mem:xxxxxx]``)
or echoed its words, with the reply's time, the caller's session and the query; and one row per
reply with its tokens and the full history's, so savings can be charted over time. The log
answers "most used citations" and "where was this cited". Forgetting a memory removes its rows
(on disk too: ``secure_delete``; on PostgreSQL the tables are vacuumed). Kept in
``citations.sqlite3`` in the data directory, or, with a PostgreSQL archive, in the namespace's
schema (``citation_uses``, ``citation_replies``), where every replica logs and reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from disclosure.storage.sidetables import SideTables, SqliteTables

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
# The same rows in the namespace's PostgreSQL schema, in order of a sequence (SQLite's rowid).
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS citation_uses (
    seq BIGSERIAL PRIMARY KEY,
    memory_id TEXT NOT NULL,
    citation TEXT NOT NULL,
    how TEXT NOT NULL CHECK (how IN ('cited', 'echoed')),
    at_us BIGINT NOT NULL,
    session_id TEXT,
    query TEXT NOT NULL,
    level TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS citation_uses_by_memory ON citation_uses (memory_id, at_us);
CREATE TABLE IF NOT EXISTS citation_replies (
    seq BIGSERIAL PRIMARY KEY,
    at_us BIGINT NOT NULL,
    level TEXT NOT NULL,
    budget INTEGER NOT NULL,
    tokens_used INTEGER NOT NULL,
    full_history_tokens BIGINT NOT NULL,
    used INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS citation_replies_by_time ON citation_replies (at_us, seq);
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
    """The citation usage log of one namespace. Thread-safe.

    Embedded, it is ``citations.sqlite3`` in the data directory; with ``tables`` (the
    namespace's PostgreSQL schema, see :func:`disclosure.storage.sidetables.shared_tables`) its rows
    are shared by every replica serving the namespace, so a reply logged through one is counted
    through any other."""

    def __init__(self, data_dir: Path | str, *, tables: SideTables | None = None) -> None:
        self.path = Path(data_dir) / CITATION_FILE
        if tables is None:
            tables = SqliteTables(self.path, _SCHEMA, "the citation log")
            self._uses, self._replies, self._order = "uses", "replies", "rowid"
        else:  # "replies" is the adaptive budget's table in the namespace's schema
            self._uses, self._replies, self._order = "citation_uses", "citation_replies", "seq"
        self._tables = tables

    @property
    def engine(self) -> str:
        return self._tables.engine

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
        with self._tables.write() as conn:
            if rows:
                conn.executemany(self._insert(self._uses, USE_FIELDS), rows)
            conn.execute(
                self._insert(self._replies, REPLY_FIELDS),
                (moment, level, budget, tokens_used, full_history_tokens, len(used)),
            )

    def top(self, n: int = 10) -> list[CitationCount]:
        """The ``n`` most used memories (cited counts first, then all uses)."""
        cited = "SUM(CASE WHEN how = 'cited' THEN 1 ELSE 0 END)"
        echoed = "SUM(CASE WHEN how = 'echoed' THEN 1 ELSE 0 END)"
        rows = self._tables.rows(
            f"SELECT memory_id, MAX(citation), {cited}, {echoed}, MAX(at_us) FROM {self._uses} "
            f"GROUP BY memory_id ORDER BY {cited} DESC, COUNT(*) DESC, MAX(at_us) DESC, memory_id "
            "LIMIT ?",
            (max(0, n),),
        )
        return [
            CitationCount(str(m), str(c), int(ci), int(ec), _dt(int(t))) for m, c, ci, ec, t in rows
        ]

    def where(self, memory_id: str, limit: int = 100) -> list[CitationUse]:
        """Where ``memory_id`` was used, newest first."""
        rows = self._tables.rows(
            f"SELECT memory_id, citation, how, at_us, session_id, query, level FROM {self._uses} "
            f"WHERE memory_id = ? ORDER BY at_us DESC, {self._order} DESC LIMIT ?",
            (memory_id, max(0, limit)),
        )
        return [
            CitationUse(str(m), str(c), str(h), _dt(int(t)), None if s is None else str(s),
                        str(q), str(lv))
            for m, c, h, t, s, q, lv in rows
        ]  # fmt: skip

    def replies(self, limit: int = 500) -> list[ReplyPoint]:
        """The last ``limit`` replies, oldest first."""
        rows = self._tables.rows(
            f"SELECT at_us, level, tokens_used, full_history_tokens, used FROM {self._replies} "
            f"ORDER BY at_us DESC, {self._order} DESC LIMIT ?",
            (max(0, limit),),
        )
        points = [
            ReplyPoint(_dt(int(t)), str(lv), int(u), int(f), int(n)) for t, lv, u, f, n in rows
        ]
        return points[::-1]

    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every use and every reply, in the order they were recorded (for export)."""
        uses = self._tables.rows(
            f"SELECT {', '.join(USE_FIELDS)} FROM {self._uses} ORDER BY {self._order}"
        )
        replies = self._tables.rows(
            f"SELECT {', '.join(REPLY_FIELDS)} FROM {self._replies} ORDER BY {self._order}"
        )
        return (
            [dict(zip(USE_FIELDS, row, strict=True)) for row in uses],
            [dict(zip(REPLY_FIELDS, row, strict=True)) for row in replies],
        )

    def import_rows(
        self, uses: Sequence[Mapping[str, Any]], replies: Sequence[Mapping[str, Any]]
    ) -> tuple[int, int]:
        """Append exported rows, skipping any already here exactly; (uses, replies) added.
        One transaction: a concurrent import of the same rows (another replica) adds them
        once."""
        added: list[int] = []
        with self._tables.write() as conn:
            for table, fields, rows in (
                (self._uses, USE_FIELDS, uses),
                (self._replies, REPLY_FIELDS, replies),
            ):
                present = {
                    tuple(r) for r in conn.execute(f"SELECT {', '.join(fields)} FROM {table}")
                }
                new = []
                for row in (tuple(r[f] for f in fields) for r in rows):
                    if row not in present:
                        present.add(row)
                        new.append(row)
                if new:
                    conn.executemany(self._insert(table, fields), new)
                added.append(len(new))
        return added[0], added[1]

    def forget(self, ids: Sequence[str]) -> int:
        """Remove every use of ``ids`` (and, on disk, what the deleted rows held)."""
        if not ids:
            return 0
        removed = 0
        with self._tables.write() as conn:
            for memory_id in dict.fromkeys(ids):
                cursor = conn.execute(f"DELETE FROM {self._uses} WHERE memory_id = ?", (memory_id,))
                removed += max(0, int(cursor.rowcount))
        if removed:
            self._tables.erase([self._uses])
        return removed

    def close(self) -> None:
        self._tables.close()

    @staticmethod
    def _insert(table: str, fields: Sequence[str]) -> str:
        marks = ", ".join("?" * len(fields))
        return f"INSERT INTO {table} ({', '.join(fields)}) VALUES ({marks})"


def _us(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _dt(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)

"""Where summaries live: ``summaries.sqlite3`` in the data directory, beside the archive.

A summary is written at three detail levels (an index line, a short paragraph, the full
consolidated text) and linked to the memories it was built from; those stay in the archive,
untouched and citable. The ``consolidated`` table records which version (content hash) of which
memory a summary covers, so a run knows what is new, changed or gone. Deleted rows are
overwritten on disk (``secure_delete``): a forgotten memory's words do not linger in free pages.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from disclosure.sidefiles import open_side_db
from tiers.errors import StorageError

SUMMARY_FILE = "summaries.sqlite3"
SummaryKind = Literal["topic", "session"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS summaries (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('topic', 'session')),
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,              -- order of the topic within its session
    topic TEXT NOT NULL,                    -- its keywords
    start_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    index_line TEXT NOT NULL,
    paragraph TEXT NOT NULL,
    full_text TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    created_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_by_session ON summaries (session_id, kind, position);
CREATE TABLE IF NOT EXISTS summary_sources (
    summary_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (summary_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sources_by_memory ON summary_sources (memory_id);
CREATE TABLE IF NOT EXISTS consolidated (
    memory_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    content_sha TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS consolidated_by_session ON consolidated (session_id);
"""


@dataclass(frozen=True, slots=True)
class Summary:
    """A consolidated summary of one topic of a session, or of a whole session."""

    id: str
    kind: SummaryKind
    session_id: str
    position: int
    topic: str
    start: datetime
    end: datetime
    index_line: str
    paragraph: str
    full_text: str
    sources: tuple[str, ...]
    summarizer: str

    def layer(self, detail: int) -> str:
        """The text at a detail level: 1 the index line, 2 the paragraph, 3 the full text."""
        if detail not in (1, 2, 3):
            raise ValueError("detail is 1 (index line), 2 (paragraph) or 3 (full text)")
        return (self.index_line, self.paragraph, self.full_text)[detail - 1]

    def same_as(self, other: Summary) -> bool:
        """Equal in everything a reader sees (what an idempotent re-run leaves alone)."""
        return _visible(self) == _visible(other)


def _visible(s: Summary) -> tuple[object, ...]:
    return (s.kind, s.session_id, s.position, s.topic, s.index_line, s.paragraph, s.full_text,
            s.sources, s.start, s.end)  # fmt: skip


def _us(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _dt(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)


class SummaryStore:
    """Summaries, their sources and what has been consolidated, in one SQLite file. Thread-safe."""

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / SUMMARY_FILE
        self._lock = threading.RLock()
        self._conn = open_side_db(self.path, _SCHEMA, "the summaries")
        self.version = 0  # bumped on every change: readers' caches key on it

    # -- reading ------------------------------------------------------------------------------

    def get(self, summary_id: str) -> Summary | None:
        found = self._summaries("WHERE id = ?", (summary_id,))
        return found[0] if found else None

    def of_session(self, session_id: str) -> list[Summary]:
        return self._summaries("WHERE session_id = ? ORDER BY kind, position", (session_id,))

    def citing(self, memory_id: str) -> list[Summary]:
        """The summaries built on ``memory_id``."""
        return self._summaries(
            "WHERE id IN (SELECT summary_id FROM summary_sources WHERE memory_id = ?) "
            "ORDER BY kind, session_id, position",
            (memory_id,),
        )

    def all(self, kind: SummaryKind | None = None) -> list[Summary]:
        if kind is None:
            return self._summaries("ORDER BY session_id, kind, position", ())
        return self._summaries("WHERE kind = ? ORDER BY session_id, position", (kind,))

    def count(self) -> dict[str, int]:
        rows = self._rows("SELECT kind, COUNT(*) FROM summaries GROUP BY kind", ())
        counts = {"topic": 0, "session": 0} | {str(k): int(n) for k, n in rows}
        consolidated = self._rows("SELECT COUNT(*) FROM consolidated", ())
        return {**counts, "memories": int(consolidated[0][0])}

    def consolidated(self) -> dict[str, tuple[str, str]]:
        """memory id -> (session id, content hash) of every memory a summary covers."""
        rows = self._rows("SELECT memory_id, session_id, content_sha FROM consolidated", ())
        return {str(m): (str(s), str(h)) for m, s, h in rows}

    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    # -- writing ------------------------------------------------------------------------------

    def replace_session(
        self,
        session_id: str,
        summaries: Sequence[Summary],
        covered: Iterable[tuple[str, str]],
        *,
        now: datetime,
    ) -> None:
        """Make ``summaries`` the session's whole set, covering ``covered`` (id, content hash)."""
        with self._transaction() as conn:
            self._delete_session(conn, session_id)
            for summary in summaries:
                conn.execute(
                    "INSERT INTO summaries VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        summary.id, summary.kind, summary.session_id, summary.position,
                        summary.topic, _us(summary.start), _us(summary.end), summary.index_line,
                        summary.paragraph, summary.full_text, summary.summarizer, _us(now),
                    ),
                )  # fmt: skip
                conn.executemany(
                    "INSERT INTO summary_sources VALUES (?,?,?)",
                    [(summary.id, m, i) for i, m in enumerate(summary.sources)],
                )
            conn.executemany(
                "INSERT INTO consolidated VALUES (?,?,?)",
                [(m, session_id, sha) for m, sha in covered],
            )

    def drop_session(self, session_id: str) -> None:
        with self._transaction() as conn:
            self._delete_session(conn, session_id)

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file and empty it (after a forget: the log would
        otherwise keep the deleted rows' old pages)."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- internals ----------------------------------------------------------------------------

    def _delete_session(self, conn: sqlite3.Connection, session_id: str) -> None:
        conn.execute(
            "DELETE FROM summary_sources WHERE summary_id IN "
            "(SELECT id FROM summaries WHERE session_id = ?)",
            (session_id,),
        )
        conn.execute("DELETE FROM summaries WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM consolidated WHERE session_id = ?", (session_id,))

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self.version += 1

    def _rows(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    def _summaries(self, where: str, params: tuple[object, ...]) -> list[Summary]:
        rows = self._rows(
            "SELECT id, kind, session_id, position, topic, start_us, end_us, index_line, "
            f"paragraph, full_text, summarizer FROM summaries {where}",
            params,
        )
        ids = [str(r[0]) for r in rows]
        sources: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for summary_id, memory_id in self._rows(
                f"SELECT summary_id, memory_id FROM summary_sources WHERE summary_id IN ({marks}) "
                "ORDER BY summary_id, position",
                tuple(chunk),
            ):
                sources[str(summary_id)].append(str(memory_id))
        return [
            Summary(
                id=str(r[0]),
                kind="session" if r[1] == "session" else "topic",
                session_id=str(r[2]),
                position=int(str(r[3])),
                topic=str(r[4]),
                start=_dt(int(str(r[5]))),
                end=_dt(int(str(r[6]))),
                index_line=str(r[7]),
                paragraph=str(r[8]),
                full_text=str(r[9]),
                sources=tuple(sources[str(r[0])]),
                summarizer=str(r[10]),
            )
            for r in rows
        ]

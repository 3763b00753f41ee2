"""Where summaries live: ``summaries.sqlite3`` in the data directory, beside the archive, or,
with a PostgreSQL archive, the namespace's schema, where every replica reads and writes them.

A summary is written at three detail levels (an index line, a short paragraph, the full
consolidated text) and linked to the memories it was built from; those stay in the archive,
untouched and citable. The ``consolidated`` table records which version (content hash) of which
memory a summary covers, so a run knows what is new, changed or gone. Deleted rows are
overwritten on disk (``secure_delete``): a forgotten memory's words do not linger in free pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from disclosure.storage.sidetables import SideTables, SqliteTables
from safeguards import redact
from tiers.sql import SqlConnection

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
# The same tables in the namespace's PostgreSQL schema (its ``meta`` is the archive's, so the
# summaries' is ``summary_meta``), and the version every replica's summary index keys on.
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS summary_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('topic', 'session')),
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    topic TEXT NOT NULL,
    start_us BIGINT NOT NULL,
    end_us BIGINT NOT NULL,
    index_line TEXT NOT NULL,
    paragraph TEXT NOT NULL,
    full_text TEXT NOT NULL,
    summarizer TEXT NOT NULL,
    created_us BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_by_session ON summaries (session_id, kind, position);
CREATE TABLE IF NOT EXISTS summary_sources (
    summary_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (summary_id, memory_id)
);
CREATE INDEX IF NOT EXISTS sources_by_memory ON summary_sources (memory_id);
CREATE TABLE IF NOT EXISTS consolidated (
    memory_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    content_sha TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS consolidated_by_session ON consolidated (session_id);
CREATE TABLE IF NOT EXISTS summary_version (
    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    version BIGINT NOT NULL DEFAULT 0
);
INSERT INTO summary_version (one) VALUES (TRUE) ON CONFLICT DO NOTHING;
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


def _without_secrets(summary: Summary) -> Summary:
    return replace(
        summary,
        topic=redact(summary.topic).text,
        index_line=redact(summary.index_line).text,
        paragraph=redact(summary.paragraph).text,
        full_text=redact(summary.full_text).text,
    )


def _us(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _dt(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)


class SummaryStore:
    """Summaries, their sources and what has been consolidated. Thread-safe.

    Embedded, one SQLite file in the data directory; with ``tables`` (the namespace's
    PostgreSQL schema, see :func:`disclosure.storage.sidetables.shared_tables`) rows every replica
    reads and writes, one writer at a time, and :attr:`version` kept in the database so each
    replica's summary index sees another's consolidation."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        tables: SideTables | None = None,
        redact_secrets: bool = False,
    ) -> None:
        self.path = Path(data_dir) / SUMMARY_FILE
        self.redact_secrets = redact_secrets
        if tables is None:
            tables = SqliteTables(self.path, _SCHEMA, "the summaries")
            self._meta = "meta"
        else:  # "meta" is the archive's own table in the namespace's schema
            self._meta = "summary_meta"
        self._tables = tables
        self._local_version = 0

    @property
    def engine(self) -> str:
        return self._tables.engine

    @property
    def version(self) -> int:
        """Changes on every write: readers' caches key on it (on PostgreSQL, any replica's)."""
        if self._tables.engine == "sqlite":
            return self._local_version
        rows = self._tables.rows("SELECT version FROM summary_version")
        return int(rows[0][0]) if rows else 0

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
        rows = self._tables.rows("SELECT kind, COUNT(*) FROM summaries GROUP BY kind")
        counts = {"topic": 0, "session": 0} | {str(k): int(n) for k, n in rows}
        consolidated = self._tables.rows("SELECT COUNT(*) FROM consolidated")
        return {**counts, "memories": int(consolidated[0][0])}

    def consolidated(self) -> dict[str, tuple[str, str]]:
        """memory id -> (session id, content hash) of every memory a summary covers."""
        rows = self._tables.rows("SELECT memory_id, session_id, content_sha FROM consolidated")
        return {str(m): (str(s), str(h)) for m, s, h in rows}

    def meta(self, key: str) -> str | None:
        rows = self._tables.rows(f"SELECT value FROM {self._meta} WHERE key = ?", (key,))
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
        """Make ``summaries`` the session's whole set, covering ``covered`` (id, content hash).
        With ``redact_secrets``, their texts are written with secrets replaced by markers: a
        summary is built from stored (redacted) memories, but a summarizer model, a memory
        stored before redaction was on, or an imported file may still bring one."""
        if self.redact_secrets:
            summaries = [_without_secrets(s) for s in summaries]
        with self._transaction() as conn:
            self._delete_session(conn, session_id)
            for summary in summaries:
                conn.execute(
                    "INSERT INTO summaries (id, kind, session_id, position, topic, start_us, "
                    "end_us, index_line, paragraph, full_text, summarizer, created_us) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        summary.id, summary.kind, summary.session_id, summary.position,
                        summary.topic, _us(summary.start), _us(summary.end), summary.index_line,
                        summary.paragraph, summary.full_text, summary.summarizer, _us(now),
                    ),
                )  # fmt: skip
                if summary.sources:
                    conn.executemany(
                        "INSERT INTO summary_sources (summary_id, memory_id, position) "
                        "VALUES (?,?,?)",
                        [(summary.id, m, i) for i, m in enumerate(summary.sources)],
                    )
            rows = [(m, session_id, sha) for m, sha in covered]
            if rows:
                conn.executemany(
                    "INSERT INTO consolidated (memory_id, session_id, content_sha) VALUES (?,?,?) "
                    "ON CONFLICT (memory_id) DO UPDATE SET session_id = excluded.session_id, "
                    "content_sha = excluded.content_sha",
                    rows,
                )

    def drop_session(self, session_id: str) -> None:
        with self._transaction() as conn:
            self._delete_session(conn, session_id)

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            conn.execute(
                f"INSERT INTO {self._meta} (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def checkpoint(self) -> None:
        """After a forget: make the deleted rows' words unreadable on disk (SQLite folds its
        write-ahead log, which would keep the old pages, into the zeroed file; PostgreSQL
        vacuums the tables' dead row versions)."""
        self._tables.erase(["summaries", "summary_sources", "consolidated"])

    def close(self) -> None:
        self._tables.close()

    # -- internals ----------------------------------------------------------------------------

    def _delete_session(self, conn: SqlConnection, session_id: str) -> None:
        conn.execute(
            "DELETE FROM summary_sources WHERE summary_id IN "
            "(SELECT id FROM summaries WHERE session_id = ?)",
            (session_id,),
        )
        conn.execute("DELETE FROM summaries WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM consolidated WHERE session_id = ?", (session_id,))

    @contextmanager
    def _transaction(self) -> Iterator[SqlConnection]:
        """One write, serialised with every other writer of these summaries; the version moves
        with it (on PostgreSQL in the same transaction, so no replica reads new rows under an
        old version)."""
        with self._tables.write() as conn:
            yield conn
            if self._tables.engine == "postgres":
                conn.execute("UPDATE summary_version SET version = version + 1")
        self._local_version += 1

    def _summaries(self, where: str, params: tuple[object, ...]) -> list[Summary]:
        rows = self._tables.rows(
            "SELECT id, kind, session_id, position, topic, start_us, end_us, index_line, "
            f"paragraph, full_text, summarizer FROM summaries {where}",
            params,
        )
        ids = [str(r[0]) for r in rows]
        sources: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for summary_id, memory_id in self._tables.rows(
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

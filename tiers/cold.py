"""The cold archive: every memory, durably, in one SQLite file; the source of truth.

One row per memory holds its JSON, its session and time (for timelines), its citation code, the
token count of its history line, and where its vector stands in the warm tier. Writes go
through :meth:`ColdArchive.transaction`: one ``BEGIN IMMEDIATE ... COMMIT`` per call, so a
batch is all there or not at all, and the lexical index (FTS5) commits with it. Search is BM25
(:mod:`tiers.lexical`) with scores normalised as :mod:`tiers.bm25` explains.

Ordering within a session is (timestamp, insertion order); ``neighbours`` walks it.
Thread-safe: one connection, one lock.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from tiers.bm25 import normalise
from tiers.citations import DEFAULT_ALPHABET, assign_citation, check_citation_settings
from tiers.config import ColdConfig
from tiers.erasure import truncate_wal
from tiers.errors import MemoryNotFoundError, StorageError, TierClosedError
from tiers.fts5 import Fts5Engine
from tiers.history import history_line
from tiers.lexical import Change, LexicalEngine, RankBm25Engine
from tiers.memory import Memory, ScoredMemory
from tiers.schema import ARCHIVE_FILE, WARM_INDEXED, connect, quick_check, translate_errors
from tiers.sql import SideDb, SqlConnection
from tiers.text import Tokenizer
from tiers.versions import erase_versions, record_version

logger = logging.getLogger(__name__)

LineCounter = Callable[[str], int]
PutStatus = Literal["added", "replaced", "unchanged"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CHUNK = 500  # ids per IN (...) query
_COLUMNS = "seq, id, body"


def content_sha(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def to_us(moment: datetime) -> int:
    """UTC microseconds since the epoch, exactly."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class PutResult:
    status: PutStatus
    previous: Memory | None = None
    same_content: bool = False  # replaced with the same content (``refresh``): no new vector


# The memory just before / after a given one in its session, in (timestamp, insertion) order.
_PREDECESSOR = (
    "SELECT p.body FROM memories AS m JOIN memories AS p ON p.session_id = m.session_id "
    "AND (p.ts_us, p.seq) < (m.ts_us, m.seq) WHERE m.id = ? ORDER BY p.ts_us DESC, p.seq DESC "
    "LIMIT 1"
)
_SUCCESSOR = (
    "SELECT n.id, n.content_sha FROM memories AS m JOIN memories AS n ON n.session_id = "
    "m.session_id AND (n.ts_us, n.seq) > (m.ts_us, m.seq) WHERE m.id = ? ORDER BY n.ts_us, n.seq "
    "LIMIT 1"
)


@dataclass
class ArchiveTxn:
    """One write transaction on the archive; get it from :meth:`ColdArchive.transaction`."""

    def successors(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, content_sha) of the memory just after each of ``ids`` in its session: whose
        context a write to ``ids`` changes. Reads this transaction's own writes."""
        found: dict[str, str] = {}
        for memory_id in dict.fromkeys(ids):
            row = self.conn.execute(_SUCCESSOR, (memory_id,)).fetchone()
            if row is not None:
                found.setdefault(str(row[0]), str(row[1]))
        return list(found.items())

    archive: ColdArchive
    conn: SqlConnection
    changes: list[Change] = field(default_factory=list)
    count_delta: int = 0
    line_delta: int = 0

    def put(self, memory: Memory, *, refresh: bool = False) -> PutResult:
        """Add ``memory`` or replace the stored version of its id; same content: unchanged,
        unless ``refresh`` and another field differs. The replaced version is kept
        (:mod:`tiers.versions`)."""
        sha = content_sha(memory.content)
        row = self.conn.execute(
            "SELECT seq, content_sha, body, line_tokens FROM memories WHERE id = ?", (memory.id,)
        ).fetchone()
        lines = self.archive.count_line(memory)
        if row is None:
            self._insert(memory, sha, lines)
            return PutResult("added")
        seq, old_sha, body, old_lines = row
        body_now = memory.to_json()
        same = old_sha == sha
        if same and (not refresh or body == body_now):
            return PutResult("unchanged")
        previous = Memory.from_json(body)
        record_version(self.conn, body, memory.id, kept=self.archive.config.versions_kept)
        self.conn.execute(
            "UPDATE memories SET session_id = ?, ts_us = ?, content_sha = ?, line_tokens = ?, "
            "warm = CASE WHEN ? THEN warm ELSE 0 END, body = ? WHERE seq = ?",
            (memory.session_id, to_us(memory.timestamp), sha, lines, same, body_now, seq),
        )
        if not same:
            self.changes.append((False, seq, self.archive.tokenizer.document(previous.content)))
            self.changes.append((True, seq, self.archive.tokenizer.document(memory.content)))
        self.line_delta += (lines or 0) - (old_lines or 0)
        return PutResult("replaced", previous, same)

    def _insert(self, memory: Memory, sha: str, lines: int | None) -> None:
        code = assign_citation(
            memory.id, self.archive.citation_length, self._holder, self.archive.citation_alphabet
        )
        row = self.conn.execute(
            "INSERT INTO memories (id, session_id, ts_us, content_sha, citation, line_tokens, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                memory.id,
                memory.session_id,
                to_us(memory.timestamp),
                sha,
                code,
                lines,
                memory.to_json(),
            ),
        ).fetchone()
        self.changes.append((True, int(row[0]), self.archive.tokenizer.document(memory.content)))
        self.count_delta += 1
        self.line_delta += lines or 0

    def _holder(self, code: str) -> str | None:
        row = self.conn.execute("SELECT id FROM memories WHERE citation = ?", (code,)).fetchone()
        return None if row is None else str(row[0])

    def add_derived(self, memory: Memory) -> Memory | None:
        """Fill the summary and entities of the stored record of ``memory.id`` from ``memory``
        (worked out from its content after the memory was archived), if the stored record
        still has that content and lacks them. Returns the record as now stored, or None when
        nothing changed. No version is kept and nothing is re-indexed: the content is the same,
        and other fields written meanwhile (a refresh of the metadata) are kept."""
        row = self.conn.execute(
            "SELECT seq, body FROM memories WHERE id = ?", (memory.id,)
        ).fetchone()
        if row is None:
            return None
        stored = Memory.from_json(row[1])
        if stored.content != memory.content:
            return None
        updated = stored.replace(
            summary=stored.summary or memory.summary, entities=stored.entities or memory.entities
        )
        body = updated.to_json()
        if body == row[1]:
            return None
        self.conn.execute("UPDATE memories SET body = ? WHERE seq = ?", (body, row[0]))
        return updated

    def delete(self, memory_id: str) -> Memory | None:
        """Remove ``memory_id`` (and its citation); return what was stored, or None."""
        row = self.conn.execute(
            "SELECT seq, body, line_tokens FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            return None
        seq, body, lines = row
        memory = Memory.from_json(body)
        self.conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
        erase_versions(self.conn, memory_id)
        self.changes.append((False, seq, self.archive.tokenizer.document(memory.content)))
        self.count_delta -= 1
        self.line_delta -= lines or 0
        return memory


class ColdArchive:
    """Every memory, durably, with BM25 search, timelines, citations and history-line counts.

    ``data_dir`` holds ``archive.sqlite3`` (created if missing). ``line_counter`` counts the
    tokens of each memory's history line (:func:`tiers.history.history_line`); rows written
    without one are counted when an archive is opened with one. ``citation_length`` and
    ``citation_alphabet`` are the profile's ``citations.length`` and ``citations.alphabet``.
    """

    name = "cold"

    def __init__(
        self,
        data_dir: Path | str,
        config: ColdConfig | None = None,
        *,
        tokenizer: Tokenizer | None = None,
        line_counter: LineCounter | None = None,
        citation_length: int = 6,
        citation_alphabet: str = DEFAULT_ALPHABET,
    ) -> None:
        self._settings(config, tokenizer, line_counter, citation_length, citation_alphabet)
        self._dir = Path(data_dir)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"{self._dir}: cannot create the data directory: {exc}") from None
        self.path = self._dir / ARCHIVE_FILE
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = connect(
            self.path,
            synchronous=self.config.synchronous,
            verify_max_mb=self.config.verify_on_open_max_mb,
        )
        try:
            self._engine = _engine(self.config, self.tokenizer)
            with translate_errors(self.path):
                self._engine.prepare(self._conn)
                self._count = self._meta_int("count")
                self._lines = self._meta_int("line_tokens")
            if line_counter is not None:
                self._backfill_line_counts()
        except BaseException:
            self.close()
            raise

    def _settings(
        self,
        config: ColdConfig | None,
        tokenizer: Tokenizer | None,
        line_counter: LineCounter | None,
        citation_length: int,
        citation_alphabet: str = DEFAULT_ALPHABET,
    ) -> None:
        """What every archive backend sets up before opening its storage."""
        self.config = config or ColdConfig()
        check_citation_settings(citation_length, citation_alphabet)
        self.citation_length = citation_length
        self.citation_alphabet = citation_alphabet
        self.tokenizer = tokenizer or Tokenizer()
        self._line_counter = line_counter

    # -- writing --------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[ArchiveTxn]:
        """One atomic write: everything done through the txn commits together, or nothing."""
        with self._lock:
            conn = self._connection()
            txn = ArchiveTxn(self, conn)
            with translate_errors(self.path):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield txn
                    self._engine.stage(conn, txn.changes)
                    self._write_counters(conn, txn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            self._count += txn.count_delta
            self._lines += txn.line_delta
            self._engine.committed(txn.changes)

    def _write_counters(self, conn: sqlite3.Connection, txn: ArchiveTxn) -> None:
        if txn.count_delta or txn.line_delta:
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    ("count", str(self._count + txn.count_delta)),
                    ("line_tokens", str(self._lines + txn.line_delta)),
                ],
            )

    def add(self, memories: Sequence[Memory]) -> None:
        with self.transaction() as txn:
            for memory in memories:
                txn.put(memory)

    def forget(self, ids: Sequence[str]) -> int:
        with self.transaction() as txn:
            removed = sum(txn.delete(i) is not None for i in dict.fromkeys(ids))
        self.erase()
        return removed

    def erase(self) -> None:
        """After deleting: no byte of the deleted rows left in the file or its WAL.

        Freed cells are zeroed as they go (``secure_delete``); this merges the lexical index
        and truncates the WAL (see :mod:`tiers.erasure`)."""
        with self._lock:
            conn = self._connection()
            with translate_errors(self.path):
                self._engine.purge(conn)
                truncate_wal(conn, self.path)

    def count_line(self, memory: Memory) -> int | None:
        counter = self._line_counter
        return None if counter is None else int(counter(history_line(memory)))

    # -- reading --------------------------------------------------------------------------------

    def search(self, query: str, k: int) -> list[ScoredMemory]:
        terms = self.tokenizer.query(query)
        if not terms or k <= 0:
            return []
        with self._lock:
            conn = self._connection()
            with translate_errors(self.path):
                hits, mass = self._engine.search(conn, terms, k, self._count)
                if not hits:
                    return []
                memories = self._by_seq([seq for seq, _ in hits])
        return [
            ScoredMemory(memories[seq], self.name, normalise(raw, mass), rank)
            for rank, (seq, raw) in enumerate(hits)
        ]

    def get(self, ids: Sequence[str]) -> list[Memory]:
        found = self._rows("id", list(dict.fromkeys(ids)))
        return [found[i] for i in ids if i in found]

    def get_indexed(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Those of ``ids`` whose current content the warm index holds a vector of, by id."""
        return self._rows("id", list(dict.fromkeys(ids)), where=f"warm = {WARM_INDEXED}")

    def count(self) -> int:
        with self._lock:
            return self._count

    def total_line_tokens(self) -> int:
        """The summed token counts of every memory's history line (kept up to date, O(1))."""
        with self._lock:
            return self._lines

    def session(self, memory_id: str) -> str | None:
        row = self._one("SELECT session_id FROM memories WHERE id = ?", (memory_id,))
        return None if row is None else str(row[0])

    def predecessors(self, ids: Sequence[str]) -> dict[str, Memory]:
        """For each of ``ids``, the memory just before it in its session (if any)."""
        out: dict[str, Memory] = {}
        with self._lock, translate_errors(self.path):
            conn = self._connection()
            for memory_id in dict.fromkeys(ids):
                row = conn.execute(_PREDECESSOR, (memory_id,)).fetchone()
                if row is not None:
                    out[memory_id] = Memory.from_json(row[0])
        return out

    def neighbours(self, memory_id: str, window: int) -> list[Memory]:
        """``memory_id`` with up to ``window`` memories either side of it in its session.

        Time order (timestamp, then insertion order). Raises MemoryNotFoundError for an
        unknown id.
        """
        anchor = self._one(
            "SELECT session_id, ts_us, seq, body FROM memories WHERE id = ?", (memory_id,)
        )
        if anchor is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
        session, ts, seq, body = anchor
        before = self._all(
            "SELECT body FROM memories WHERE session_id = ? AND (ts_us, seq) < (?, ?) "
            "ORDER BY ts_us DESC, seq DESC LIMIT ?",
            (session, ts, seq, max(window, 0)),
        )
        after = self._all(
            "SELECT body FROM memories WHERE session_id = ? AND (ts_us, seq) > (?, ?) "
            "ORDER BY ts_us, seq LIMIT ?",
            (session, ts, seq, max(window, 0)),
        )
        rows = [*reversed(before), (body,), *after]
        return [Memory.from_json(r[0]) for r in rows]

    def ids_in_session(self, session_id: str) -> list[str]:
        """The ids of a session in time order."""
        rows = self._all(
            "SELECT id FROM memories WHERE session_id = ? ORDER BY ts_us, seq", (session_id,)
        )
        return [str(r[0]) for r in rows]

    def recent(self, n: int) -> list[Memory]:
        """The ``n`` most recent memories by timestamp, newest first."""
        rows = self._all(
            "SELECT body FROM memories ORDER BY ts_us DESC, seq DESC LIMIT ?", (max(n, 0),)
        )
        return [Memory.from_json(r[0]) for r in rows]

    def iter_memories(self, *, page: int = 1000) -> Iterator[Memory]:
        """Every memory in time order, read a page at a time (writes may interleave)."""
        last: tuple[int, int] = (-(2**62), -1)
        while True:
            rows = self._all(
                "SELECT ts_us, seq, body FROM memories WHERE (ts_us, seq) > (?, ?) "
                "ORDER BY ts_us, seq LIMIT ?",
                (*last, page),
            )
            for _, _, body in rows:
                yield Memory.from_json(body)
            if len(rows) < page:
                return
            last = (int(rows[-1][0]), int(rows[-1][1]))

    def citation_of(self, ids: Sequence[str]) -> dict[str, str]:
        """Each known id's citation code (unknown ids are left out)."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for memory_id, code in self._all(
                f"SELECT id, citation FROM memories WHERE id IN ({marks})", tuple(chunk)
            ):
                out[str(memory_id)] = str(code)
        return out

    def line_tokens(self, ids: Sequence[str]) -> dict[str, int]:
        """Each known id's history-line token count (ids never counted are left out)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for memory_id, tokens in self._all(
                f"SELECT id, line_tokens FROM memories WHERE id IN ({marks})"
                " AND line_tokens IS NOT NULL",
                tuple(chunk),
            ):
                out[str(memory_id)] = int(tokens)
        return out

    def resolve_citation(self, code: str) -> str | None:
        """The id a citation code names, or None."""
        row = self._one("SELECT id FROM memories WHERE citation = ?", (code.strip(),))
        return None if row is None else str(row[0])

    def used_ids(self, ids: Sequence[str]) -> list[str]:
        """Those of ``ids`` that were ever used (``record_use``)."""
        out: list[str] = []
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id FROM memories WHERE uses > 0 AND id IN ({marks})"
            out.extend(str(r[0]) for r in self._all(sql, tuple(chunk)))
        return out

    def side_connection(self, ddl: str) -> SideDb | None:
        """A shared database for the stores of the layers above: none for a SQLite archive
        (they keep their own files in the data directory); see PgArchive."""
        return None

    def changed_elsewhere(self) -> bool:
        """Whether another process wrote to the archive since the last call: never, for a
        SQLite archive (one store owns its data directory)."""
        return False

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a read-only SQL query on the archive (for the store's own modules)."""
        return self._all(sql, params)

    # -- maintenance ----------------------------------------------------------------------------

    def check_integrity(self) -> None:
        """``PRAGMA quick_check`` and, with FTS5, the index's own integrity check."""
        with self._lock:
            conn = self._connection()
            quick_check(conn, self.path)
            if self.engine_name == "fts5":
                with translate_errors(self.path):
                    conn.execute(
                        "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')"
                    )

    @property
    def engine_name(self) -> str:
        return self._engine.name

    def disk_bytes(self) -> int:
        """Bytes on disk of the archive file and its WAL."""
        names = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(p.stat().st_size for p in names if p.exists())

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    @property
    def closed(self) -> bool:
        return self._conn is None

    # -- internals ------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise TierClosedError(f"{self.path}: the archive is closed")
        return self._conn

    def _one(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._lock, translate_errors(self.path):
            return self._connection().execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        with self._lock, translate_errors(self.path):
            return self._connection().execute(sql, params).fetchall()

    def _rows(self, column: str, keys: Sequence[Any], *, where: str = "1 = 1") -> dict[Any, Memory]:
        out: dict[Any, Memory] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for seq, memory_id, body in self._all(
                f"SELECT {_COLUMNS} FROM memories WHERE {column} IN ({marks}) AND {where}",
                tuple(chunk),
            ):
                out[seq if column == "seq" else memory_id] = Memory.from_json(body)
        return out

    def _by_seq(self, seqs: Sequence[int]) -> dict[int, Memory]:
        return self._rows("seq", seqs)

    def _meta_int(self, key: str) -> int:
        value = self.meta(key)
        return 0 if value is None else int(value)

    def meta(self, key: str) -> str | None:
        """A value from the archive's key-value table (for the store's own bookkeeping)."""
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as txn:
            txn.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _backfill_line_counts(self) -> None:
        while True:
            rows = self._all(
                "SELECT seq, body FROM memories WHERE line_tokens IS NULL LIMIT ?", (_CHUNK,)
            )
            if not rows:
                return
            with self.transaction() as txn:
                for seq, body in rows:
                    lines = self.count_line(Memory.from_json(body)) or 0
                    txn.conn.execute(
                        "UPDATE memories SET line_tokens = ? WHERE seq = ?", (lines, seq)
                    )
                    txn.line_delta += lines
            logger.info("counted the history-line tokens of %d archived memories", len(rows))


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _engine(config: ColdConfig, tokenizer: Tokenizer) -> LexicalEngine:
    """The BM25 engine ``config.engine`` names, with the archive's tokenizer."""
    if config.engine == "fts5":
        return Fts5Engine(tokenizer, budget=config.fts5_budget, rescore=config.fts5_rescore)
    return RankBm25Engine(tokenizer)

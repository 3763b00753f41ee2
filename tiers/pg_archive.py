"""The cold archive in PostgreSQL: the server backend's source of truth, one schema per namespace.

It is a :class:`~tiers.cold.ColdArchive` in every respect the store, the outbox and the
lifecycle use (the same tables and columns, the same write transaction object, the same
readers), so everything above the archive runs unchanged; only the engine differs:

* Writes: one PostgreSQL transaction per :meth:`PgArchive.transaction`, holding the namespace's
  advisory lock, so writers to one namespace (on any replica) go one at a time, as SQLite's
  ``BEGIN IMMEDIATE`` makes them; the BM25 statistics (:mod:`tiers.pg_bm25`), the counters
  and the namespace's write version change in the same transaction.
* Reads: each call takes a pooled connection for one short transaction.
* Counts and totals live in the database (``stats``), never in the process: any replica may
  have written since.
* :meth:`PgArchive.version`: the namespace's write counter, bumped by every write transaction;
  a replica compares it per request to know its hot set and caches are stale.
* Forgetting deletes the rows, their versions, their postings and every term no other memory
  holds in one transaction; :meth:`PgArchive.erase` then vacuums the namespace's tables so the
  dead row versions are pruned (PostgreSQL's write-ahead log and free space are reused, not
  zeroed: back-ups and WAL archives are the operator's to expire).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tiers.bm25 import normalise
from tiers.citations import DEFAULT_ALPHABET
from tiers.cold import _PREDECESSOR, ArchiveTxn, ColdArchive, LineCounter
from tiers.config import ColdConfig
from tiers.errors import CorruptDataError, TierClosedError
from tiers.memory import Memory, ScoredMemory
from tiers.pg_bm25 import search as bm25_search
from tiers.pg_bm25 import stage as bm25_stage
from tiers.pg_schema import (
    POOLS,
    TABLE_NAMES,
    PgConnection,
    SideConnection,
    created_by,
    ensure_schema,
    lock_key,
    redact,
    schema_name,
    session,
    translate_errors,
)
from tiers.text import Tokenizer

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)


class PgArchive(ColdArchive):
    """A namespace's archive in the PostgreSQL database at ``url`` (schema per namespace)."""

    def __init__(
        self,
        url: str,
        namespace: str,
        config: ColdConfig | None = None,
        *,
        tokenizer: Tokenizer | None = None,
        line_counter: LineCounter | None = None,
        citation_length: int = 6,
        citation_alphabet: str = DEFAULT_ALPHABET,
    ) -> None:
        # ColdArchive.__init__ opens a SQLite file: the rest of what it sets up is set up here.
        self._settings(config, tokenizer, line_counter, citation_length, citation_alphabet)
        self.namespace = namespace
        self.schema = schema_name(namespace)
        self.url = url
        self.where = f"{redact(url)} schema {self.schema}"
        self.path = Path(self.schema)  # for messages that name the archive
        self._lock = threading.RLock()
        self._lock_key = lock_key(self.schema)
        self._seen: int | None = None  # the write version last seen (see changed_elsewhere)
        self._pool: ConnectionPool | None = POOLS.acquire(url)
        try:
            self._relations = ensure_schema(self._pool, self.schema, self.where)
            if line_counter is not None:
                self._backfill_line_counts()
            self._seen = self.version()
        except BaseException:
            self.close()
            raise

    # -- writing --------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[ArchiveTxn]:
        """One atomic write, serialised with every other writer of this namespace."""
        with self._session() as conn:
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            txn = ArchiveTxn(self, conn)
            yield txn
            tokens = bm25_stage(conn, txn.changes)
            row = conn.raw.execute(
                "UPDATE stats SET docs = docs + %s, tokens = tokens + %s, "
                "line_tokens = line_tokens + %s, version = version + 1 RETURNING version",
                (txn.count_delta, tokens, txn.line_delta),
            ).fetchone()
            if row is None:
                raise CorruptDataError(f"{self.where}: the stats row is missing")
        self._wrote(int(row[0]))

    def _wrote(self, version: int) -> None:
        """This process's own write made ``version``: it follows the one last seen, so nothing
        changed elsewhere in between (writers of a namespace go one at a time)."""
        with self._lock:
            if self._seen == version - 1:
                self._seen = version

    def changed_elsewhere(self) -> bool:
        """Whether another process (replica) wrote to the namespace since the last call (or
        since this process's own last write): a per-request check of one row."""
        version = self.version()
        with self._lock:
            changed = self._seen is not None and version != self._seen
            self._seen = version
        return changed

    def erase(self) -> None:
        """Prune the dead row versions a deletion left in the namespace's tables."""
        self._vacuum([name for name in TABLE_NAMES if name != "stats"])

    def _vacuum(self, names: Sequence[str]) -> None:
        pool = self._live_pool()
        tables = ", ".join(f'"{self.schema}".{_identifier(name)}' for name in names)
        with translate_errors(self.where), pool.connection() as conn:
            conn.autocommit = True  # VACUUM runs outside a transaction
            try:
                conn.execute(f"VACUUM {tables}")
            finally:
                conn.autocommit = False  # as the pool's other users expect it

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as txn:
            txn.conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- reading --------------------------------------------------------------------------------

    def search(self, query: str, k: int) -> list[ScoredMemory]:
        terms = self.tokenizer.query(query)
        if not terms or k <= 0:
            return []
        with self._session() as conn:
            hits = bm25_search(conn, terms, k)
        return [
            ScoredMemory(Memory.from_json(body), self.name, normalise(raw, mass), rank)
            for rank, (_, raw, body, mass) in enumerate(hits)
        ]

    def count(self) -> int:
        return int(self._stats()[0])

    def total_line_tokens(self) -> int:
        return int(self._stats()[2])

    def version(self) -> int:
        """The namespace's write counter: it changes whenever any replica wrote to it."""
        return int(self._stats()[3])

    def _stats(self) -> tuple[Any, ...]:
        row = self._one("SELECT docs, tokens, line_tokens, version FROM stats", ())
        if row is None:
            raise CorruptDataError(f"{self.where}: the stats row is missing")
        return tuple(row)

    def predecessors(self, ids: Sequence[str]) -> dict[str, Memory]:
        out: dict[str, Memory] = {}
        with self._session() as conn:
            for memory_id in dict.fromkeys(ids):
                row = conn.execute(_PREDECESSOR, (memory_id,)).fetchone()
                if row is not None:
                    out[memory_id] = Memory.from_json(row[0])
        return out

    def meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def side_connection(self, ddl: str) -> SideConnection:
        """A handle on this namespace's schema for a store of the layers above (the adaptive
        budget's replies, the citation log, the summaries, the participants), whose tables
        ``ddl`` creates if they are missing; every replica then reads and writes the same
        rows. Tables the schema held when it was opened are not created again."""
        wanted = created_by(ddl)
        with self._lock:
            present = wanted is not None and wanted <= self._relations
        if not present:
            with self._session() as conn:
                conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                for statement in ddl.split(";"):
                    if statement.strip():
                        conn.raw.execute(statement)
            if wanted is not None:
                with self._lock:
                    self._relations = self._relations | wanted
        return SideConnection(self._session, schema=self.schema, vacuum=self._vacuum)

    # -- maintenance ----------------------------------------------------------------------------

    def check_integrity(self) -> None:
        """The kept counters agree with the rows (a cheap consistency check)."""
        docs, tokens, lines, _ = self._stats()
        row = self._one(
            "SELECT COUNT(*), COALESCE(SUM(n_tokens), 0), COALESCE(SUM(line_tokens), 0) "
            "FROM memories",
            (),
        )
        if tuple(int(v) for v in row) != (int(docs), int(tokens), int(lines)):
            raise CorruptDataError(
                f"{self.where}: the archive's counters {docs, tokens, lines} disagree with its "
                f"rows {tuple(row)}"
            )

    @property
    def engine_name(self) -> str:
        return "postgres"

    def disk_bytes(self) -> int:
        """Bytes the namespace's tables and indexes take in the database."""
        names = [f'"{self.schema}".{name}' for name in TABLE_NAMES]
        row = self._one(
            "SELECT COALESCE(SUM(pg_total_relation_size(t::regclass)), 0) FROM unnest(?::text[]) "
            "AS t",
            (names,),
        )
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            POOLS.release(self.url)

    @property
    def closed(self) -> bool:
        return self._pool is None

    # -- internals ------------------------------------------------------------------------------

    def _live_pool(self) -> ConnectionPool:
        pool = self._pool
        if pool is None:
            raise TierClosedError(f"{self.where}: the archive is closed")
        return pool

    @contextmanager
    def _session(self) -> Iterator[PgConnection]:
        with session(self._live_pool(), self.schema, self.where) as conn:
            yield conn

    def _one(self, sql: str, params: tuple[Any, ...]) -> Any:
        with self._session() as conn:
            return conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        with self._session() as conn:
            return conn.execute(sql, params).fetchall()


def _identifier(name: str) -> str:
    """A table name of this package's own, checked before it goes into a statement."""
    if not name.replace("_", "").isalnum() or not name.isascii():
        raise ValueError(f"not a table name: {name!r}")
    return name

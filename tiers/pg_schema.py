"""The PostgreSQL archive's plumbing: shared connection pools, one schema per namespace, and
errors translated into the library's own.

Every namespace lives in a schema of its own (``td_<name>_<hash>``) holding the same tables as
the SQLite archive plus the BM25 statistics (``terms``, ``postings``) and one ``stats`` row
(counts and a write version). A session sets ``search_path`` to that schema for the length of
its transaction, so the archive's SQL names bare tables, and no statement can reach another
namespace's rows. The schema is created on first use under an advisory lock (replicas may open
the same namespace at once) and carries its version in ``meta``; a newer one is refused.

Pools: one ``psycopg_pool.ConnectionPool`` per database URL per process, shared by every
namespace's archive and closed when the last archive using it closes.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tiers.errors import (
    CorruptDataError,
    DiskFullError,
    IncompatibleDataError,
    InvalidInputError,
    StorageError,
    TierUnavailableError,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
POOL_MAX = 10
_CREATE_LOCK = 0x54444953  # advisory lock key while creating a schema ("TDIS")

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    ts_us BIGINT NOT NULL,
    content_sha TEXT NOT NULL,
    citation TEXT NOT NULL UNIQUE,
    line_tokens INTEGER,
    warm INTEGER NOT NULL DEFAULT 0,
    uses INTEGER NOT NULL DEFAULT 0,
    uses_since_move INTEGER NOT NULL DEFAULT 0,
    last_used_us BIGINT,
    n_tokens INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL
);
CREATE INDEX memories_by_session ON memories (session_id, ts_us, seq);
CREATE INDEX memories_by_time ON memories (ts_us, seq);
CREATE INDEX memories_not_indexed ON memories (warm) WHERE warm <> 1;
CREATE TABLE outbox (
    qseq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    content_sha TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_us BIGINT NOT NULL,
    last_error TEXT,
    claimed_until_us BIGINT NOT NULL DEFAULT 0,
    claimed_by TEXT
);
CREATE INDEX outbox_due ON outbox (next_attempt_us, qseq);
CREATE TABLE memory_versions (
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    replaced_us BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (id, version)
);
CREATE TABLE terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL);
CREATE TABLE postings (
    term TEXT NOT NULL,
    seq BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    PRIMARY KEY (term, seq) INCLUDE (tf, dl)
);
CREATE INDEX postings_by_seq ON postings (seq);
CREATE TABLE stats (
    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    docs BIGINT NOT NULL DEFAULT 0,
    tokens BIGINT NOT NULL DEFAULT 0,
    line_tokens BIGINT NOT NULL DEFAULT 0,
    version BIGINT NOT NULL DEFAULT 0
);
INSERT INTO stats (one) VALUES (TRUE);
"""
TABLE_NAMES = ("memories", "outbox", "memory_versions", "terms", "postings", "stats", "meta")


def schema_name(namespace: str) -> str:
    """The schema of ``namespace``: readable, safe to quote, and distinct per exact name."""
    if not namespace:
        raise InvalidInputError("a PostgreSQL archive needs a namespace (a non-empty name)")
    slug = re.sub(r"[^a-z0-9_]+", "_", namespace.lower()).strip("_")[:40]
    digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:12]
    return f"td_{slug}_{digest}" if slug else f"td_{digest}"


def lock_key(schema: str) -> int:
    """A signed 64-bit advisory-lock key for the namespace's writers."""
    return int.from_bytes(hashlib.sha256(schema.encode()).digest()[:8], "big", signed=True)


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class _Pools:
    """One pool per URL, reference-counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[str, tuple[ConnectionPool, int]] = {}

    def acquire(self, url: str) -> ConnectionPool:
        with self._lock:
            held = self._pools.get(url)
            if held is not None:
                self._pools[url] = (held[0], held[1] + 1)
                return held[0]
            pool = _open_pool(url)
            self._pools[url] = (pool, 1)
            return pool

    def peek(self, url: str) -> ConnectionPool | None:
        """The open pool of ``url``, if an archive holds one."""
        with self._lock:
            held = self._pools.get(url)
            return None if held is None else held[0]

    def release(self, url: str) -> None:
        with self._lock:
            held = self._pools.get(url)
            if held is None:
                return
            pool, users = held
            if users > 1:
                self._pools[url] = (pool, users - 1)
                return
            del self._pools[url]
        pool.close()


POOLS = _Pools()


def _open_pool(url: str) -> ConnectionPool:
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise TierUnavailableError(
            "the PostgreSQL archive needs psycopg: pip install 'tiered-disclosure[postgres]'"
        ) from None
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_MAX,
        open=False,
        name="tiered-disclosure",
        timeout=30,
        check=ConnectionPool.check_connection,  # after a server restart: reconnect, not fail
        # JIT compiling short statements costs more than it saves (hundreds of ms per query)
        kwargs={"options": "-c jit=off"},
    )
    try:
        pool.open(wait=True, timeout=15)
    except Exception as exc:
        pool.close()
        raise TierUnavailableError(
            f"cannot connect to PostgreSQL at {redact(url)}: {exc}; check the database URL "
            "(tiers.cold.database_url, $TIERED_DISCLOSURE_DATABASE_URL) and that the server runs"
        ) from None
    return pool


class PgConnection:
    """A psycopg connection speaking the archive's ``?`` placeholders (:class:`tiers.sql`)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, parameters: Any = (), /) -> psycopg.Cursor[Any]:
        return self.raw.execute(_placeholders(sql), tuple(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> psycopg.Cursor[Any]:
        cursor = self.raw.cursor()
        rows = [tuple(p) for p in parameters]
        if rows:
            cursor.executemany(_placeholders(sql), rows)
        return cursor


class FetchedRows:
    """A statement's rows, read before its connection went back to the pool."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


class SideConnection:
    """A ``sqlite3``-like handle on one namespace's schema for the stores above the tiers (the
    adaptive budget's reply history, the citation log, the summaries, the participants):
    ``execute``/``executemany`` with ``?`` placeholders, each statement in a pooled transaction
    of its own, or ``with handle:`` for several in one. :meth:`lock` serialises one store's
    writers on every replica; :meth:`vacuum` prunes what a deletion left behind."""

    def __init__(
        self,
        opener: Callable[[], AbstractContextManager[PgConnection]],
        *,
        schema: str = "",
        vacuum: Callable[[Sequence[str]], None] | None = None,
    ) -> None:
        self._opener = opener
        self._local = threading.local()
        self.schema = schema
        self._vacuum = vacuum

    def lock(self, name: str) -> None:
        """Inside ``with handle:``: wait until no other transaction (of any replica) holds the
        lock ``name`` of this namespace, and hold it until this transaction ends."""
        conn, _ = self._open()
        if conn is None:
            raise RuntimeError("SideConnection.lock needs an open transaction (with handle:)")
        conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(f"{self.schema}/{name}"),))

    def vacuum(self, tables: Sequence[str]) -> None:
        """Prune the dead row versions deletions left in ``tables`` (of this schema)."""
        if self._vacuum is not None and tables:
            self._vacuum(tables)

    def _open(self) -> tuple[PgConnection | None, AbstractContextManager[PgConnection] | None]:
        return getattr(self._local, "conn", None), getattr(self._local, "scope", None)

    def execute(self, sql: str, parameters: Any = (), /) -> FetchedRows:
        conn, _ = self._open()
        if conn is not None:
            return _fetched(conn.execute(sql, parameters))
        with self._opener() as own:
            return _fetched(own.execute(sql, parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> FetchedRows:
        conn, _ = self._open()
        if conn is not None:
            return _fetched(conn.executemany(sql, parameters))
        with self._opener() as own:
            return _fetched(own.executemany(sql, parameters))

    def __enter__(self) -> SideConnection:
        scope = self._opener()
        self._local.conn = scope.__enter__()
        self._local.scope = scope
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None:
        _, scope = self._open()
        self._local.conn = self._local.scope = None
        if scope is not None:
            scope.__exit__(exc_type, exc, tb)  # commits, or rolls back on an exception

    def close(self) -> None:
        return None  # the pool is the archive's


def _fetched(cursor: psycopg.Cursor[Any]) -> FetchedRows:
    rows = cursor.fetchall() if cursor.description is not None else []
    return FetchedRows(rows, cursor.rowcount)


_TRANSLATED: dict[str, str] = {}


def _placeholders(sql: str) -> str:
    found = _TRANSLATED.get(sql)
    if found is None:
        found = sql.replace("%", "%%").replace("?", "%s")
        if len(_TRANSLATED) < 4096:
            _TRANSLATED[sql] = found
    return found


@contextmanager
def session(pool: ConnectionPool, schema: str, where: str) -> Iterator[PgConnection]:
    """One transaction in ``schema`` (committed at the end, rolled back on an exception)."""
    with translate_errors(where), pool.connection() as conn:
        conn.execute("SELECT set_config('search_path', %s, true)", (_quoted(schema),))
        yield PgConnection(conn)


_RELATIONS = (
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = %s"
)
_CREATES = re.compile(
    r"\s*CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\s+IF\s+NOT\s+EXISTS\s+(\w+)\b", re.I
)


def ensure_schema(pool: ConnectionPool, schema: str, where: str) -> frozenset[str]:
    """Create the namespace's schema and tables if missing; refuse a newer schema version. The
    names of the tables and indexes the schema holds (one catalog read: a schema that exists is
    opened without the creation lock, since it became visible complete, in one transaction)."""
    with translate_errors(where), pool.connection() as conn:
        found = _opened(conn, schema)
        if found is None:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATE_LOCK,))
            found = _opened(conn, schema)  # another replica may have created it meanwhile
        if found is None:
            _create(conn, schema)
            return frozenset(r[0] for r in conn.execute(_RELATIONS, (schema,)).fetchall())
    row, relations = found
    version = None if row is None else int(row[0])
    if version is None:
        raise CorruptDataError(f"{where}: the schema has no version: not a complete archive")
    if version > SCHEMA_VERSION:
        raise IncompatibleDataError(
            f"{where}: written by a newer version of tiered-disclosure (schema {version}); "
            f"this version reads schema {SCHEMA_VERSION}"
        )
    return relations


def _opened(conn: psycopg.Connection[Any], schema: str) -> tuple[Any, frozenset[str]] | None:
    """``schema``'s version row and relation names, or None if there is no such schema."""
    relations = frozenset(r[0] for r in conn.execute(_RELATIONS, (schema,)).fetchall())
    if not relations:
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        if exists.fetchone() is None:
            return None
    if "meta" not in relations:
        return None, relations
    row = conn.execute(
        f"SELECT value FROM {_quoted(schema)}.meta WHERE key = 'schema_version'"
    ).fetchone()
    return row, relations


def _create(conn: psycopg.Connection[Any], schema: str) -> None:
    conn.execute(f"CREATE SCHEMA {_quoted(schema)}")
    conn.execute("SELECT set_config('search_path', %s, true)", (_quoted(schema),))
    for statement in _TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),)
    )
    logger.info("PostgreSQL archive: created schema %s", schema)


def created_by(ddl: str) -> frozenset[str] | None:
    """The tables and indexes ``ddl`` creates, or None when one of its statements is anything
    but a ``CREATE TABLE/INDEX IF NOT EXISTS`` (then it must run to be sure)."""
    names = []
    for statement in ddl.split(";"):
        if statement.strip():
            match = _CREATES.match(statement)
            if match is None:
                return None
            names.append(match.group(1).lower())
    return frozenset(names)


def was_written(url: str, schema: str, where: str) -> bool:
    """Whether ``schema`` exists and took at least one write (a namespace another replica
    created). Uses an open pool of ``url`` if there is one, else a connection of its own."""
    import psycopg

    sql = (
        "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = 'stats'"
    )
    with translate_errors(where):
        pool = POOLS.peek(url)
        if pool is not None:
            with pool.connection() as conn:
                return _written(conn, sql, schema)
        with psycopg.connect(url, connect_timeout=15) as conn:
            return _written(conn, sql, schema)


def _written(conn: psycopg.Connection[Any], sql: str, schema: str) -> bool:
    if conn.execute(sql, (schema,)).fetchone() is None:
        return False
    row = conn.execute(f"SELECT version FROM {_quoted(schema)}.stats").fetchone()
    return row is not None and int(row[0]) > 0


def drop_namespace(url: str, schema: str, where: str) -> bool:
    """Remove a namespace's schema with everything in it; whether there was one."""
    import psycopg

    with translate_errors(where), psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchone()
        conn.execute(f"DROP SCHEMA IF EXISTS {_quoted(schema)} CASCADE")
    return found is not None


def _quoted(schema: str) -> str:
    return '"' + schema.replace('"', '""') + '"'


@contextmanager
def translate_errors(where: str) -> Iterator[None]:
    """PostgreSQL's errors as the library's: bad data, a full disk, an unreachable server."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        yield
    except PoolTimeout as exc:
        raise TierUnavailableError(f"{where}: no database connection available: {exc}") from exc
    except psycopg.errors.DiskFull as exc:
        raise DiskFullError(f"{where}: the database server's disk is full: {exc}") from exc
    except psycopg.DataError as exc:
        raise InvalidInputError(f"{where}: the database refused a value: {exc}") from exc
    except psycopg.OperationalError as exc:
        raise TierUnavailableError(f"{where}: the database is unreachable: {exc}") from exc
    except psycopg.Error as exc:
        raise StorageError(f"{where}: {type(exc).__name__}: {exc}") from exc

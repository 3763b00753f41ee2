"""Where a store of the layers above the tiers keeps its rows: a SQLite file in the namespace's
data directory (embedded namespaces), or tables in the namespace's PostgreSQL schema (a server
backend), so that what one replica records every replica reads.

Both speak the same small interface: :meth:`SideTables.rows` for a read, ``with
tables.write() as conn:`` for one transaction that no other writer of the same store (of any
process, on PostgreSQL of any replica) interleaves with, and :meth:`SideTables.erase` after a
deletion, so the deleted rows do not linger on disk (SQLite's write-ahead log is folded back
into the zeroed file; PostgreSQL's dead row versions are vacuumed).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from disclosure.storage.sidefiles import open_side_db
from tiers.errors import StorageError
from tiers.sql import SqlConnection

if TYPE_CHECKING:
    from tiers.pg_schema import SideConnection
    from tiers.store import TieredStore

Engine = Literal["sqlite", "postgres"]


class SideTables:
    """A store's tables (see the module). Thread-safe."""

    engine: Engine
    where: str

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def write(self) -> Any:
        raise NotImplementedError

    def erase(self, tables: Sequence[str]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteTables(SideTables):
    """The tables in a SQLite file of the data directory (one process owns it)."""

    engine: Engine = "sqlite"

    def __init__(self, path: Path, schema: str, what: str) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.RLock()
        self._conn = open_side_db(path, schema, what)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, tuple(params)).fetchall())
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    @contextmanager
    def write(self) -> Iterator[SqlConnection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"{self.path}: {exc}") from None
                raise

    def erase(self, tables: Sequence[str]) -> None:
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PgTables(SideTables):
    """The tables in the namespace's PostgreSQL schema, shared by every replica. ``name``
    names the store's lock: its writers (on every replica) go one at a time."""

    engine: Engine = "postgres"

    def __init__(self, side: SideConnection, name: str) -> None:
        self.side = side
        self.name = name
        self.where = f"schema {side.schema} ({name})"

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.side.execute(sql, _clean(params)).fetchall()]

    @contextmanager
    def write(self) -> Iterator[SqlConnection]:
        with self.side:
            self.side.lock(self.name)
            yield _Cleaning(self.side)

    def erase(self, tables: Sequence[str]) -> None:
        self.side.vacuum(tables)

    def close(self) -> None:
        return None  # the connections are the archive's


class _Cleaning:
    """A connection whose text parameters lose the NUL characters PostgreSQL's text refuses
    (a memory may hold one; its summary, its speaker's name or a query must still be kept)."""

    def __init__(self, conn: SqlConnection) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self._conn.execute(sql, _clean(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        return self._conn.executemany(sql, [_clean(p) for p in parameters])


def _clean(params: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(
        p.replace("\x00", "\ufffd") if isinstance(p, str) and "\x00" in p else p for p in params
    )


def shared_tables(store: TieredStore | None, ddl: str, name: str) -> PgTables | None:
    """``store``'s namespace schema with ``ddl``'s tables, when its archive is in PostgreSQL;
    None for an embedded archive (the store keeps its own file then)."""
    cold = None if store is None else store.cold
    side = None if cold is None else cold.side_connection(ddl)
    if side is None:
        return None
    from tiers.pg_schema import SideConnection

    if not isinstance(side, SideConnection):  # another shared database: not one this knows
        return None
    return PgTables(side, name)

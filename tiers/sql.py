"""What the archive's shared code (transactions, versions, the outbox, the lifecycle) needs from a
database connection: ``execute``/``executemany`` with ``?`` placeholders and rows back.

``sqlite3.Connection`` is one; the PostgreSQL archive (:mod:`tiers.pg_archive`) passes an adapter
that translates the placeholders. Statements written against this protocol stay within the SQL
both engines speak (``ON CONFLICT ... DO UPDATE``, ``RETURNING``, row comparisons).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Protocol


class SqlCursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class SqlConnection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> SqlCursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> SqlCursor: ...


class SideDb(SqlConnection, Protocol):
    """A database the layers above the tiers keep their own rows in (the adaptive budget's
    replies): a connection that is a transaction context manager (commit, or roll back on an
    exception), as ``sqlite3.Connection`` is."""

    def __enter__(self) -> Any: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> bool | None: ...

    def close(self) -> None: ...

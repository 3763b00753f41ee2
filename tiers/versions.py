"""Earlier versions of replaced memories, and the archive read a page at a time.

When new content (or, on request, new metadata) replaces a stored memory, the archive keeps the
replaced version in ``memory_versions``, in the same transaction, up to ``tiers.cold.versions_kept``
per memory (the oldest go first). Forgetting a memory erases its versions with it. The functions
here run on the archive's connection inside its lock: the writers inside an
:class:`~tiers.cold.ArchiveTxn`, the readers through :meth:`~tiers.cold.ColdArchive.query`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tiers.errors import InvalidInputError
from tiers.memory import Memory
from tiers.sql import SqlConnection

Query = Callable[[str, tuple[Any, ...]], list[Any]]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FIRST = (-(2**62), -1)

__all__ = ["MemoryVersion", "Page", "erase_versions", "page", "record_version", "versions"]


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One version of a memory: its number (1 the first), the record, and when it was
    replaced (None for the current version)."""

    version: int
    memory: Memory
    replaced_at: datetime | None

    @property
    def current(self) -> bool:
        return self.replaced_at is None


@dataclass(frozen=True, slots=True)
class Page:
    """Memories in time order; ``cursor`` continues after the last one (None: no more)."""

    memories: tuple[Memory, ...]
    cursor: str | None
    total: int


def record_version(conn: SqlConnection, previous_body: str, memory_id: str, *, kept: int) -> None:
    """Keep ``previous_body`` (the version being replaced) as the memory's newest earlier
    version, and drop the oldest beyond ``kept`` (0: keep none)."""
    if kept <= 0:
        return
    row = conn.execute(
        "SELECT COALESCE(MAX(version), 0) FROM memory_versions WHERE id = ?", (memory_id,)
    ).fetchone()
    number = int(row[0]) + 1
    now = (datetime.now(UTC) - _EPOCH) // timedelta(microseconds=1)
    conn.execute(
        "INSERT INTO memory_versions (id, version, replaced_us, body) VALUES (?, ?, ?, ?)",
        (memory_id, number, now, previous_body),
    )
    conn.execute(
        "DELETE FROM memory_versions WHERE id = ? AND version <= ?", (memory_id, number - kept)
    )


def erase_versions(conn: SqlConnection, memory_id: str) -> None:
    """Remove every earlier version of ``memory_id`` (it is being forgotten)."""
    conn.execute("DELETE FROM memory_versions WHERE id = ?", (memory_id,))


def versions(query: Query, memory_id: str) -> list[MemoryVersion]:
    """Every version of ``memory_id`` the archive holds, oldest first, the current one last
    (empty if there is no such memory)."""
    current = query("SELECT body FROM memories WHERE id = ?", (memory_id,))
    if not current:
        return []
    rows = query(
        "SELECT version, replaced_us, body FROM memory_versions WHERE id = ? ORDER BY version",
        (memory_id,),
    )
    earlier = [
        MemoryVersion(int(v), Memory.from_json(body), _EPOCH + timedelta(microseconds=int(us)))
        for v, us, body in rows
    ]
    number = earlier[-1].version + 1 if earlier else 1
    return [*earlier, MemoryVersion(number, Memory.from_json(current[0][0]), None)]


def page(
    query: Query, *, session_id: str | None = None, cursor: str | None = None, limit: int = 100
) -> Page:
    """Up to ``limit`` memories in time order (of one session, or all), after ``cursor``."""
    after = _parse_cursor(cursor)
    where, params = ("session_id = ? AND ", (session_id,)) if session_id is not None else ("", ())
    rows = query(
        f"SELECT ts_us, seq, body FROM memories WHERE {where}(ts_us, seq) > (?, ?) "
        "ORDER BY ts_us, seq LIMIT ?",
        (*params, *after, limit + 1),
    )
    total_sql = f"SELECT COUNT(*) FROM memories{' WHERE session_id = ?' if where else ''}"
    total = int(query(total_sql, params)[0][0])
    shown = rows[:limit]
    more = len(rows) > limit and shown
    next_cursor = f"{shown[-1][0]}.{shown[-1][1]}" if more else None
    return Page(tuple(Memory.from_json(r[2]) for r in shown), next_cursor, total)


def _parse_cursor(cursor: str | None) -> tuple[int, int]:
    if cursor is None:
        return _FIRST
    try:
        ts, seq = cursor.split(".")
        return int(ts), int(seq)
    except ValueError:
        raise InvalidInputError(
            f"cursor {cursor[:40]!r} is not one this store gave out; pass the last page's cursor"
        ) from None

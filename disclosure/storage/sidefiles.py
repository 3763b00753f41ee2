"""Side files (the disk caches, the usage history) that can be rebuilt: a damaged one is moved
aside with a warning and started afresh, never a reason to refuse service.

The archive is different: it is the source of truth, so a damaged archive is refused with a
message (see :mod:`tiers.schema`) and ``disclosure doctor`` reports it.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# what SQLite and diskcache raise on a file that is not (or no longer) a database
DAMAGE = (sqlite3.DatabaseError,)


def move_aside(path: Path, why: object) -> Path:
    """Rename ``path`` (a file with its -wal/-shm, or a directory) to ``NAME.damaged-TIME``."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    log.warning("%s is damaged (%s); moved to %s and started afresh", path, why, aside.name)
    path.replace(aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(aside.with_name(aside.name + suffix))
    return aside


def open_or_rebuild(path: Path, opener: Callable[[], T]) -> T:
    """``opener()``; if it finds ``path`` damaged, move ``path`` aside and open a new one."""
    try:
        return opener()
    except DAMAGE as exc:
        if not path.exists():
            raise
        move_aside(path, exc)
        return opener()


def sqlite_is_sound(path: Path) -> str | None:
    """None if ``path`` is a readable, consistent SQLite file; else what is wrong."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
        return None if rows == ["ok"] else "; ".join(map(str, rows))
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.close()


__all__ = ["move_aside", "open_or_rebuild", "sqlite_is_sound"]


def open_side_db(path: Path, schema: str, what: str) -> sqlite3.Connection:
    """A side file's SQLite connection for any thread (autocommit, WAL, freed pages zeroed so
    forgotten text does not linger) with ``schema`` applied; a failure is a StorageError that
    names ``what`` the file holds."""
    from tiers.errors import StorageError

    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.executescript(schema)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open {what}: {exc}") from None
    return conn

"""The archive's SQLite file: opening it safely, its schema and version, and integrity checks.

The file carries ``PRAGMA application_id`` (ours, so a foreign SQLite file is refused) and
``PRAGMA user_version`` (the schema version, so a newer library's archive is refused rather
than misread; an older schema is upgraded in place when it opens). It runs in WAL mode with
``synchronous=FULL`` by default: every commit fsyncs the log, so an ingest that returned
survives a power loss as well as a killed process (``NORMAL`` would survive only the latter).
Opening translates SQLite's complaints into :class:`~tiers.errors.CorruptDataError` and
:class:`~tiers.errors.IncompatibleDataError`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tiers.errors import (
    CorruptDataError,
    DiskFullError,
    IncompatibleDataError,
    StorageError,
    is_disk_full,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: memory_versions (earlier versions of replaced memories)
APPLICATION_ID = 0x54444953  # "TDIS"
ARCHIVE_FILE = "archive.sqlite3"

# warm column: where the memory's vector stands.
WARM_PENDING, WARM_INDEXED, WARM_EVICTED = 0, 1, 2

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,     -- insertion order, and the FTS5 rowid
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    ts_us INTEGER NOT NULL,                    -- UTC microseconds since the epoch
    content_sha TEXT NOT NULL,
    citation TEXT NOT NULL UNIQUE,
    line_tokens INTEGER,                       -- tokens of its history line (NULL: not counted)
    warm INTEGER NOT NULL DEFAULT 0,           -- 0 pending, 1 indexed, 2 evicted (cold-only)
    uses INTEGER NOT NULL DEFAULT 0,
    uses_since_move INTEGER NOT NULL DEFAULT 0,
    last_used_us INTEGER,
    body TEXT NOT NULL                         -- Memory.to_json()
);
CREATE INDEX memories_by_session ON memories (session_id, ts_us, seq);
CREATE INDEX memories_by_time ON memories (ts_us, seq);
CREATE INDEX memories_not_indexed ON memories (warm) WHERE warm != 1;
CREATE TABLE outbox (                         -- warm-index work that must not be lost
    id TEXT NOT NULL UNIQUE,                   -- rowid: queue order
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    content_sha TEXT,                          -- the version to embed (upserts)
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_us INTEGER NOT NULL,          -- wall-clock microseconds
    last_error TEXT
);
CREATE INDEX outbox_due ON outbox (next_attempt_us);
CREATE TABLE memory_versions (                 -- earlier versions of replaced memories
    id TEXT NOT NULL,
    version INTEGER NOT NULL,                  -- 1 the first (the current one is not here)
    replaced_us INTEGER NOT NULL,              -- wall-clock microseconds it was replaced at
    body TEXT NOT NULL,                        -- Memory.to_json() of that version
    PRIMARY KEY (id, version)
) WITHOUT ROWID;
"""
# Upgrades: the statements that take schema N - 1 to N.
_UPGRADES = {
    2: _SCHEMA[_SCHEMA.index("CREATE TABLE memory_versions") :],
}
_TABLES = {"meta", "memories", "outbox"}


def connect(
    path: Path, *, synchronous: str = "full", verify_max_mb: int = 256
) -> sqlite3.Connection:
    """Open (creating if needed) the archive at ``path``, checked and at the current schema."""
    existed = path.exists() and path.stat().st_size > 0
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open the archive: {exc}") from None
    try:
        version = _check_identity(conn, path) if existed else None  # before WAL rewrites it
        _configure(conn, path, synchronous)
        if version is None:
            _create(conn)
        elif version < SCHEMA_VERSION:
            _upgrade(conn, path, version)
        if version is not None and 0 < path.stat().st_size <= verify_max_mb * 1024 * 1024:
            quick_check(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _configure(conn: sqlite3.Connection, path: Path, synchronous: str) -> None:
    with translate_errors(path):
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(f"{path}: SQLite refused WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")  # forgotten text is zeroed, not just freed


def _check_identity(conn: sqlite3.Connection, path: Path) -> int:
    """The archive's schema version, after checking that the file is ours and readable."""
    with translate_errors(path):
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if app_id != APPLICATION_ID:
        raise IncompatibleDataError(
            f"{path}: not a tiered-disclosure archive (application_id {app_id:#x}, "
            f"expected {APPLICATION_ID:#x}); point the store at its own data directory"
        )
    if version > SCHEMA_VERSION or version < min(_UPGRADES) - 1:
        newer = "a newer" if version > SCHEMA_VERSION else "an older"
        raise IncompatibleDataError(
            f"{path}: written by {newer} version of tiered-disclosure (schema {version}); "
            f"this version reads schemas {min(_UPGRADES) - 1} to {SCHEMA_VERSION}"
        )
    if not tables >= _TABLES:
        raise CorruptDataError(f"{path}: tables missing: {', '.join(sorted(_TABLES - tables))}")
    return int(version)


def _upgrade(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Bring a schema-``version`` archive to :data:`SCHEMA_VERSION`, in one transaction."""
    with translate_errors(path):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _UPGRADES[target].split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    logger.info("%s: archive upgraded from schema %d to %d", path, version, SCHEMA_VERSION)


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    conn.execute("COMMIT")


def quick_check(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check``: raise :class:`CorruptDataError` unless it says ``ok``."""
    with translate_errors(path):
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    if rows != ["ok"]:
        raise CorruptDataError(f"{path}: the archive is damaged: {'; '.join(map(str, rows))}")


@contextmanager
def translate_errors(path: Path) -> Iterator[None]:
    """Re-raise SQLite's damage reports as CorruptDataError, naming the file."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if is_disk_full(exc):
            raise DiskFullError(
                f"{path}: the disk is full; nothing was written. Free some space and retry"
            ) from exc
        if isinstance(exc, sqlite3.OperationalError) and not _is_damage(exc):
            raise StorageError(f"{path}: {exc}") from exc
        raise CorruptDataError(
            f"{path}: the archive is damaged or not a database ({exc}); restore it from a "
            f"backup or move it aside to start a new archive"
        ) from exc


def _is_damage(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt", "disk image"))

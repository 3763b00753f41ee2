"""Erasing forgotten text from the files it passed through, not only from the live rows.

SQLite keeps deleted content in freed pages and cells, and in its write-ahead log, until they
are reused; so a forgotten memory could still be found by a byte search of the data directory.
What each file needs:

- our own SQLite files run with ``PRAGMA secure_delete=ON`` (freed content is zeroed as it is
  freed); after a forget their WAL is checkpointed and truncated (:func:`truncate_wal`), since
  it holds the page images of earlier commits;
- a contentless FTS5 index records a deletion as a marker beside the old entry until segments
  merge: ``optimize`` merges them (the engine does it, see :mod:`tiers.fts5`);
- Chroma's ``chroma.sqlite3`` (embedded mode) keeps every record it was given in its write log
  (``embeddings_queue``) and frees metadata rows without zeroing them: :func:`erase_chroma`
  removes the log entries of the forgotten ids that Chroma has already applied, then
  ``VACUUM`` rewrites the file without free pages. Chroma's vector files hold vectors and ids,
  no text.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from tiers.errors import StorageError

log = logging.getLogger(__name__)

CHROMA_FILE = "chroma.sqlite3"
_CHROMA_DELETE = 3  # embeddings_queue.operation of a delete (Chroma's Operation enum)
_CHUNK = 500


def truncate_wal(conn: sqlite3.Connection, path: Path | str) -> bool:
    """Checkpoint the WAL into the database and truncate it; False (logged) when a reader
    elsewhere kept it from finishing (the next forget tries again)."""
    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy and busy[0]:
        log.warning("%s: a reader kept the WAL from being truncated after a forget", path)
        return False
    return True


def erase_chroma(directory: Path, ids: Sequence[str]) -> None:
    """Remove every trace of ``ids``' records from Chroma's SQLite file (see the module)."""
    path = directory / CHROMA_FILE
    if not ids or not path.is_file():
        return
    try:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open it to erase forgotten records: {exc}") from None
    try:
        conn.execute("PRAGMA secure_delete=ON")
        if _has_table(conn, "embeddings_queue"):
            conn.execute("BEGIN IMMEDIATE")
            for start in range(0, len(ids), _CHUNK):
                _drop_applied(conn, list(ids[start : start + _CHUNK]))
            conn.execute("COMMIT")
        conn.execute("VACUUM")
        if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            truncate_wal(conn, path)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: erasing forgotten records failed: {exc}") from None
    finally:
        conn.close()


def _drop_applied(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Log entries of ``ids`` older than their delete and already applied to every segment."""
    marks = ",".join("?" * len(ids))
    applied = conn.execute("SELECT COALESCE(MIN(seq_id), 0) FROM max_seq_id").fetchone()[0]
    conn.execute(
        f"DELETE FROM embeddings_queue AS q WHERE q.id IN ({marks}) AND q.seq_id <= ? AND "
        "q.seq_id < (SELECT MAX(d.seq_id) FROM embeddings_queue AS d WHERE d.id = q.id AND "
        "d.topic = q.topic AND d.operation = ?)",
        (*ids, applied, _CHROMA_DELETE),
    )


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return row.fetchone() is not None


__all__ = ["CHROMA_FILE", "erase_chroma", "truncate_wal"]

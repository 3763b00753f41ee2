"""Who speaks in the stored conversations, and which of them a query names.

Embedded, kept in a small JSON file beside the store, rebuilt from the archive when the file is
missing. With a PostgreSQL archive, kept in the namespace's schema (``participants``, one row a
name, added with ``ON CONFLICT DO NOTHING`` so replicas adding names at once lose none), and each
query first checks the row count, reloading the names when another replica added or removed
some. A name leaves when a forget removes the last memory that speaker said: a user who forgets
everything someone said does not expect that person's name kept.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from disclosure.storage.sidetables import SideTables
from tiers import TieredStore

_MIN_NAME = 2

PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS participants (name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS participants_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
"""
_BACKFILLED = "backfilled"  # the names of memories stored before the table existed are in it


class Participants:
    """The set of speaker names, persisted, with a whole-word matcher over queries."""

    def __init__(self, path: Path, store: TieredStore, *, tables: SideTables | None = None) -> None:
        self.path = path
        self._tables = tables
        self._lock = threading.Lock()
        self._names: set[str] = self._load(store)
        self._pattern: re.Pattern[str] | None = None

    def add(self, speakers: Iterable[str | None]) -> None:
        new = {s.strip() for s in speakers if s and len(s.strip()) >= _MIN_NAME} - self._names
        if not new:
            return
        if self._tables is not None:
            _insert(self._tables, new)
        with self._lock:
            self._names |= new
            self._pattern = None
            if self._tables is None:
                self._save()

    def forgotten(self, store: TieredStore, speakers: Iterable[str]) -> set[str]:
        """After a forget of memories by ``speakers``: drop those of the names no remaining
        memory is spoken by (one SQL pass of the archive each, stopping at the first memory
        found); return them."""
        speakers = list(speakers)
        if not speakers:
            return set()
        self._follow()
        with self._lock:
            candidates = {n for s in speakers for n in (s, s.strip())} & self._names
        gone = {name for name in candidates if not store.speaks(name)}
        if not gone:
            return set()
        if self._tables is not None:
            with self._tables.write() as conn:
                conn.executemany(
                    "DELETE FROM participants WHERE name = ?", [(n,) for n in sorted(gone)]
                )
            self._tables.erase(["participants"])  # no dead row keeps the name
        with self._lock:
            self._names -= gone
            self._pattern = None
            if self._tables is None:
                self._save()
        return gone

    def named_in(self, query: str) -> set[str]:
        """The participants (as stored) that ``query`` names, by full name or first name."""
        self._follow()
        with self._lock:
            if not self._names:
                return set()
            if self._pattern is None:
                forms = {form for name in self._names for form in _forms(name)}
                alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                self._pattern = re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)
            said = {m.group(0).casefold() for m in self._pattern.finditer(query)}
            return {n for n in self._names if any(f.casefold() in said for f in _forms(n))}

    def __iter__(self) -> Iterator[str]:
        self._follow()
        with self._lock:
            return iter(sorted(self._names))

    def _follow(self) -> None:
        """Shared names: reload them when the table holds another number of names than this
        process knows (another replica added or removed some)."""
        if self._tables is None:
            return
        count = int(self._tables.rows("SELECT COUNT(*) FROM participants")[0][0])
        with self._lock:
            if count == len(self._names):
                return
        names = {str(r[0]) for r in self._tables.rows("SELECT name FROM participants")}
        with self._lock:
            self._names = names
            self._pattern = None

    def _load(self, store: TieredStore) -> set[str]:
        if self._tables is not None:
            _backfill(self._tables, store)
            return {str(r[0]) for r in self._tables.rows("SELECT name FROM participants")}
        try:
            return set(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            names = {m.speaker for m in store.iter_memories() if m.speaker}
            self._names = names
            self._save()
            return names
        except (OSError, ValueError):
            return set()

    def _save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(sorted(self._names)), encoding="utf-8")
        temporary.replace(self.path)


def _backfill(tables: SideTables, store: TieredStore) -> None:
    """Once per namespace: the speakers of the memories stored before the names were kept in
    the database (one replica scans the archive; the others wait for it, then skip)."""
    done = f"SELECT 1 FROM participants_meta WHERE key = '{_BACKFILLED}'"
    if tables.rows(done):
        return
    with tables.write() as conn:
        if conn.execute(done).fetchall():
            return
        names = sorted({m.speaker for m in store.iter_memories() if m.speaker})
        if names:
            conn.executemany(
                "INSERT INTO participants (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
                [(n,) for n in names],
            )
        conn.execute(
            "INSERT INTO participants_meta (key, value) VALUES (?, '1') ON CONFLICT DO NOTHING",
            (_BACKFILLED,),
        )


def _insert(tables: SideTables, names: Iterable[str]) -> None:
    with tables.write() as conn:
        conn.executemany(
            "INSERT INTO participants (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
            [(n,) for n in sorted(names)],
        )


def _forms(name: str) -> set[str]:
    first = name.split(maxsplit=1)[0]
    return {name, first} if len(first) >= _MIN_NAME else {name}

"""The gathering index: from what memories name, by type, to the memories.

Questions that gather ("which cities has John been to?", "what video games does Nate play?")
ask for a kind of answer (:mod:`analyzers.answer`) whose evidence is spread over sessions and
often shares no word with the question: "Counter-Strike" for "video games". Each memory's
*facets* (:mod:`analyzers.facets`: its entities with their labels from the trained pipeline,
the rules' names and places, quoted titles) are kept here with its speaker; at disclose time, a
question that asks for a kind of answer gets the memories naming an entity of the labels that
answer it (its named participant's, when it names one) as one more list of candidates, and every
candidate's ``answer_label`` feature (:mod:`disclosure.core.pipeline.ranking`) is read from here.

The trained pipeline costs a few milliseconds a memory, as much as embedding it, so it runs off
the ingest path: ingest (and the local service's acknowledgement) only records the new or
changed memories as *pending* in the index's own table; a :class:`FacetWorker` thread, at a
lower CPU priority, reads them, writes their facets and clears them. Pending work survives a
restart (the worker resumes it); a question asked before the worker caught up ranks the
memories not yet indexed without the feature (``settle`` waits for it, as evaluations do).

Embedded, the rows live in ``facets.sqlite3`` in the data directory; with a PostgreSQL archive,
in the namespace's schema (every replica reads what any one indexed). A memory's rows are
replaced when its content changes, and leave with it when it is forgotten (the store's
``on_forgotten``), pending work included, so nothing derived from a forgotten memory stays.
Memories stored before the index existed have no rows until they are ingested again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from disclosure.storage.sidetables import SideTables, SqliteTables, shared_tables
from tiers import Memory, TieredStore

if TYPE_CHECKING:
    from analyzers import AnalyzerConfig

log = logging.getLogger(__name__)

FILE = "facets.sqlite3"
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS facets (
    facet TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    speaker TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (facet, memory_id)
);
CREATE INDEX IF NOT EXISTS facets_by_memory ON facets (memory_id);
CREATE TABLE IF NOT EXISTS facets_pending (memory_id TEXT PRIMARY KEY, mark TEXT NOT NULL)
"""
_SCHEMA = PG_SCHEMA + ";\n"
_CHUNK = 500  # ids per statement (SQLite's and PostgreSQL's parameter limits stay far away)


@dataclass(frozen=True, slots=True)
class Indexed:
    """What one memory is indexed under: its speaker and facets."""

    speaker: str | None
    facets: tuple[str, ...]


class FacetIndex:
    """Facets to memories, persisted (see the module). Thread-safe."""

    def __init__(self, tables: SideTables) -> None:
        self.tables = tables

    @classmethod
    def open(cls, data_dir: Path, store: TieredStore) -> FacetIndex:
        """The index of ``store``'s namespace: its PostgreSQL schema's, else a file here."""
        shared = shared_tables(store, PG_SCHEMA, "facets")
        if shared is not None:
            return cls(shared)
        return cls(SqliteTables(data_dir / FILE, _SCHEMA, "the gathering index"))

    def put(self, memories: Mapping[str, Indexed]) -> None:
        """Index each memory under its facets, replacing what it was indexed under before."""
        if not memories:
            return
        rows = [
            (facet, memory_id, (entry.speaker or "").casefold())
            for memory_id, entry in memories.items()
            for facet in entry.facets
        ]
        with self.tables.write() as conn:
            for chunk in _chunks(list(memories)):
                conn.execute(f"DELETE FROM facets WHERE memory_id IN ({_marks(chunk)})", chunk)
            if rows:
                conn.executemany(
                    "INSERT INTO facets (facet, memory_id, speaker) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    rows,
                )

    def forget(self, ids: Iterable[str]) -> None:
        """Remove the rows of ``ids`` (forgotten memories), pending work included, and let the
        freed pages go."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return
        with self.tables.write() as conn:
            for chunk in _chunks(ids):
                marks = _marks(chunk)
                conn.execute(f"DELETE FROM facets WHERE memory_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM facets_pending WHERE memory_id IN ({marks})", chunk)
        self.tables.erase(["facets", "facets_pending"])

    def mark_pending(self, ids: Iterable[str]) -> None:
        """Record ``ids`` as waiting for their facets (a new mark each time: a memory changed
        again while its facets were worked out stays pending)."""
        mark = secrets.token_hex(8)
        rows = [(i, mark) for i in dict.fromkeys(ids)]
        if rows:
            with self.tables.write() as conn:
                conn.executemany(
                    "INSERT INTO facets_pending (memory_id, mark) VALUES (?, ?) "
                    "ON CONFLICT (memory_id) DO UPDATE SET mark = excluded.mark",
                    rows,
                )

    def pending(self, limit: int) -> dict[str, str]:
        """Up to ``limit`` ids waiting for their facets, with their marks."""
        rows = self.tables.rows(
            "SELECT memory_id, mark FROM facets_pending ORDER BY memory_id LIMIT ?", [limit]
        )
        return {str(r[0]): str(r[1]) for r in rows}

    def done(
        self,
        entries: Mapping[str, Indexed],
        marks: Mapping[str, str],
        gone: Collection[str] = (),
    ) -> None:
        """Index ``entries`` and clear them, and the ``gone`` ids (no longer stored), from the
        pending work, in one transaction; a pending row whose mark is no longer the one in
        ``marks`` (the memory changed meanwhile) stays, to be read again."""
        with self.tables.write() as conn:
            for chunk in _chunks(list(entries)):
                conn.execute(f"DELETE FROM facets WHERE memory_id IN ({_marks(chunk)})", chunk)
            conn.executemany(
                "DELETE FROM facets_pending WHERE memory_id = ? AND mark = ?",
                [(i, marks[i]) for i in dict.fromkeys([*entries, *gone]) if i in marks],
            )
            rows = [
                (facet, memory_id, (entry.speaker or "").casefold())
                for memory_id, entry in entries.items()
                for facet in entry.facets
            ]
            if rows:
                conn.executemany(
                    "INSERT INTO facets (facet, memory_id, speaker) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    rows,
                )

    def find(
        self,
        labels: Collection[str],
        *,
        speaker: str | None = None,
        exclude: Collection[str] = (),
        limit: int = 60,
    ) -> list[tuple[str, int]]:
        """Memories (``speaker``'s, if given) naming an entity of one of ``labels``, other than
        the values in ``exclude`` (participants' names, case-folded), with how many distinct
        such facets each names, most first."""
        if not labels or limit <= 0:
            return []
        ranges = " OR ".join("(facet >= ? AND facet < ?)" for _ in labels)
        params: list[object] = []
        for label in sorted(labels):
            params += [f"{label}:", f"{label};"]  # ";" follows ":" in code point order
        where = f"({ranges})"
        if exclude:
            skip = [f"{label}:{value}" for label in sorted(labels) for value in sorted(exclude)]
            where += f" AND facet NOT IN ({_marks(skip)})"
            params += skip
        if speaker is not None:
            where += " AND speaker = ?"
            params.append(speaker.casefold())
        rows = self.tables.rows(
            f"SELECT memory_id, COUNT(*) AS n FROM facets WHERE {where} "
            "GROUP BY memory_id ORDER BY n DESC, memory_id LIMIT ?",
            [*params, limit],
        )
        return [(str(memory_id), int(n)) for memory_id, n in rows]

    def of(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """The facets of each of ``ids`` that has any."""
        found: dict[str, set[str]] = {}
        for chunk in _chunks(list(ids)):
            for facet, memory_id in self.tables.rows(
                f"SELECT facet, memory_id FROM facets WHERE memory_id IN ({_marks(chunk)})", chunk
            ):
                found.setdefault(str(memory_id), set()).add(str(facet))
        return found

    def count(self) -> int:
        """Indexed memories."""
        rows = self.tables.rows("SELECT COUNT(DISTINCT memory_id) FROM facets")
        return int(rows[0][0]) if rows else 0

    def close(self) -> None:
        self.tables.close()


Read = Callable[[Sequence[str]], list[Memory]]
Facets = Callable[[Sequence[str]], list[tuple[str, ...]]]


class FacetReader(Protocol):
    """What reads memories' facets: :func:`analyzers.facets_many`'s signature."""

    def __call__(
        self, texts: Sequence[str], *, config: AnalyzerConfig | None = ...
    ) -> list[tuple[str, ...]]: ...


class FacetWorker:
    """The thread that indexes pending memories (see the module): woken by :meth:`submit`,
    ``batch`` memories at a time, at ``nice`` steps below the process's CPU priority."""

    def __init__(
        self,
        index: FacetIndex,
        read: Read,
        facets: Facets,
        *,
        indexed: Callable[[list[Memory]], None] | None = None,
        batch: int = 64,
        nice: int = 10,
    ) -> None:
        """``read``: the stored memories of some ids (the forgotten ones missing);
        ``facets``: the facets of some texts (``analyzers.facets_many``); ``indexed``: told of
        each batch indexed (answers cached before it ranked those memories without facets)."""
        self.index = index
        self._read = read
        self._facets = facets
        self._indexed = indexed
        self._batch = batch
        self._nice = nice
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="facets", daemon=True)
        self._thread.start()
        self._wake.set()  # pending work a previous process left

    def submit(self, ids: Iterable[str]) -> None:
        """Record ``ids`` (new or changed memories) as pending and wake the worker."""
        ids = list(ids)
        if not ids:
            return
        with self._lock:
            self._idle.clear()
            self.index.mark_pending(ids)
        self._wake.set()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is pending (False: ``timeout`` seconds passed first)."""
        self._wake.set()
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Stop after the batch in hand; what is still pending is resumed by the next worker."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        _lower_priority(self._nice)
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            try:
                while not self._stop.is_set() and self._step():
                    pass
                with self._lock:
                    if not self._wake.is_set() and not self.index.pending(1):
                        self._idle.set()
            except Exception as exc:  # the index only adds candidates: ingest goes on
                log.warning("indexing facets failed (retried on the next ingest): %s", exc)
                self._idle.set()  # nobody waits for work that fails

    def _step(self) -> bool:
        """Index one batch of pending memories; False when none was pending."""
        marks = self.index.pending(self._batch)
        if not marks:
            return False
        ids = list(marks)
        memories = {m.id: m for m in self._read(ids)}
        found = [memories[i] for i in ids if i in memories]
        facets = self._facets([m.content for m in found]) if found else []
        entries = {m.id: Indexed(m.speaker, f) for m, f in zip(found, facets, strict=True)}
        self.index.done(entries, marks, gone=[i for i in ids if i not in memories])
        stored = {m.id for m in self._read(list(entries))}
        if len(stored) < len(entries):  # forgotten while its facets were worked out
            self.index.forget(i for i in entries if i not in stored)
        if self._indexed is not None:
            self._indexed([m for m in found if m.id in stored])
        return True


def _lower_priority(steps: int) -> None:
    """This thread's CPU priority ``steps`` lower (Linux: a thread's own nice value)."""
    if steps <= 0 or not hasattr(os, "setpriority"):
        return
    with contextlib.suppress(OSError):
        native = threading.get_native_id()
        lower = min(os.getpriority(os.PRIO_PROCESS, native) + steps, 19)
        os.setpriority(os.PRIO_PROCESS, native, lower)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _chunks(values: list[str]) -> list[list[str]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)]

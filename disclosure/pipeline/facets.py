"""The gathering index: from what memories name, by type, to the memories.

Questions that gather ("which cities has John been to?", "what video games does Nate play?")
ask for a kind of answer (:mod:`analyzers.answer`) whose evidence is spread over sessions and
often shares no word with the question: "Counter-Strike" for "video games". At ingest, where
enrichment runs (before embedding, off the local service's acknowledgement path), each memory's
*facets* (:mod:`analyzers.facets`: its entities with their labels, quoted titles, the nouns
heading its noun chunks) are kept here with its speaker; at disclose time, a question that asks
for a kind of answer gets the memories naming an entity of the labels that answer it (its named
participant's, when it names one) as one more list of candidates, and every candidate's
``answer_label`` / ``answer_noun`` features (:mod:`disclosure.pipeline.ranking`) are read from
here.

Embedded, the rows live in ``facets.sqlite3`` in the data directory; with a PostgreSQL archive,
in the namespace's schema (every replica reads what any one indexed). A memory's rows are
replaced when its content is enriched again, and leave with it when it is forgotten (the store's
``on_forgotten``), so nothing derived from a forgotten memory stays. Memories stored before the
index existed have no rows until they are ingested again.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from disclosure.sidetables import SideTables, SqliteTables, shared_tables
from tiers import TieredStore

log = logging.getLogger(__name__)

FILE = "facets.sqlite3"
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS facets (
    facet TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    speaker TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (facet, memory_id)
);
CREATE INDEX IF NOT EXISTS facets_by_memory ON facets (memory_id)
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
        """Remove the rows of ``ids`` (forgotten memories), and let the freed pages go."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return
        with self.tables.write() as conn:
            for chunk in _chunks(ids):
                conn.execute(f"DELETE FROM facets WHERE memory_id IN ({_marks(chunk)})", chunk)
        self.tables.erase(["facets"])

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


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _chunks(values: list[str]) -> list[list[str]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)]

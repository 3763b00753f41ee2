"""The cold archive's two BM25 engines, chosen by ``ColdConfig.engine``, with one tokenisation.

``fts5``: SQLite FTS5 in the archive file itself, contentless (the archive already holds the
text), fed the pre-tokenised text of :mod:`tiers.text` under the ``ascii`` tokenizer so it
indexes exactly our tokens. Incremental and transactional: a memory and its index entry commit
together. ``bm25()`` is negated (FTS5 returns lower-is-better); the query's IDF mass comes from
an ``fts5vocab`` table.

``rank_bm25``: rank_bm25's BM25Okapi in memory (:mod:`tiers.bm25`), loaded from the archive at
the first search, then kept current after each commit by appending or tombstoning documents:
never rebuilt on the write path. Memory grows with the archive (ENVIRONMENT.md: ~170 MB and
~110 ms per query at 100k), so it suits small archives.

Both compute the same BM25 (FTS5's constants and IDF), so their scores agree.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Protocol

from tiers.bm25 import Bm25Index, idf_mass
from tiers.text import TOKENIZER_VERSION, tokenize

logger = logging.getLogger(__name__)

# One change to the lexical index: (is_insert, seq, tokens), applied in order.
Change = tuple[bool, int, list[str]]

_FTS_META_KEY = "fts5_tokenizer"


class LexicalEngine(Protocol):
    """What the archive needs from a BM25 engine. Every call holds the archive's lock."""

    name: str

    def prepare(self, conn: sqlite3.Connection) -> None:
        """At open: create, check or drop what the engine keeps in the file."""
        ...

    def stage(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        """Inside the archive's write transaction."""
        ...

    def committed(self, changes: Sequence[Change]) -> None:
        """After that transaction committed."""
        ...

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """(seq, raw BM25 score) pairs, best first, at most ``k``."""
        ...

    def mass(self, conn: sqlite3.Connection, terms: Sequence[str], n_docs: int) -> float:
        """The IDF mass of ``terms`` (the normalising denominator)."""
        ...


def make_engine(name: str) -> LexicalEngine:
    if name == "fts5":
        return Fts5Engine()
    if name == "rank_bm25":
        return RankBm25Engine()
    raise ValueError(f"unknown cold engine {name!r}; available: fts5, rank_bm25")


def _contents(conn: sqlite3.Connection) -> sqlite3.Cursor:
    return conn.execute("SELECT seq, json_extract(body, '$.content') FROM memories ORDER BY seq")


class Fts5Engine:
    name = "fts5"

    def prepare(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_FTS_META_KEY,)).fetchone()
        if row is not None and row[0] == str(TOKENIZER_VERSION):
            return
        logger.info("building the FTS5 index of the archive (tokenizer %s)", TOKENIZER_VERSION)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DROP TABLE IF EXISTS memories_vocab")
            conn.execute("DROP TABLE IF EXISTS memories_fts")
            conn.execute(
                "CREATE VIRTUAL TABLE memories_fts USING fts5(tokens, content='', tokenize='ascii')"
            )
            conn.execute("CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, row)")
            conn.executemany(
                "INSERT INTO memories_fts (rowid, tokens) VALUES (?, ?)",
                ((seq, " ".join(tokenize(text))) for seq, text in _contents(conn)),
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_FTS_META_KEY, str(TOKENIZER_VERSION)),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def stage(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        for is_insert, seq, tokens in changes:
            if is_insert:
                sql = "INSERT INTO memories_fts (rowid, tokens) VALUES (?, ?)"
            else:  # a contentless table forgets a row given the exact text it indexed
                sql = (
                    "INSERT INTO memories_fts (memories_fts, rowid, tokens) VALUES ('delete', ?, ?)"
                )
            conn.execute(sql, (seq, " ".join(tokens)))

    def committed(self, changes: Sequence[Change]) -> None:
        return None

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = conn.execute(
            "SELECT rowid, -bm25(memories_fts) FROM memories_fts "
            "WHERE memories_fts MATCH ? ORDER BY rank, rowid LIMIT ?",
            (expression, k),
        ).fetchall()
        return sorted(((int(seq), float(score)) for seq, score in rows), key=_best_first)

    def mass(self, conn: sqlite3.Connection, terms: Sequence[str], n_docs: int) -> float:
        marks = ",".join("?" * len(terms))
        found = dict(
            conn.execute(
                f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", tuple(terms)
            ).fetchall()
        )
        return idf_mass(n_docs, [int(found.get(term, 0)) for term in terms])


def _best_first(pair: tuple[int, float]) -> tuple[float, int]:
    return (-pair[1], pair[0])


class RankBm25Engine:
    name = "rank_bm25"

    def __init__(self) -> None:
        self._index: Bm25Index[int] | None = None

    def prepare(self, conn: sqlite3.Connection) -> None:
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
        if exists is None:
            return
        logger.info("engine rank_bm25: dropping the archive's FTS5 index (rebuilt if needed)")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DROP TABLE IF EXISTS memories_vocab")
        conn.execute("DROP TABLE IF EXISTS memories_fts")
        conn.execute("DELETE FROM meta WHERE key = ?", (_FTS_META_KEY,))
        conn.execute("COMMIT")

    def stage(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        return None

    def committed(self, changes: Sequence[Change]) -> None:
        if self._index is None:
            return  # not loaded yet: the first search reads the committed archive
        for is_insert, seq, tokens in changes:
            if is_insert:
                self._index.add(seq, tokens)
            else:
                self._index.remove(seq)

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        return self._loaded(conn).top(terms, k)

    def mass(self, conn: sqlite3.Connection, terms: Sequence[str], n_docs: int) -> float:
        return self._loaded(conn).mass(terms)

    def _loaded(self, conn: sqlite3.Connection) -> Bm25Index[int]:
        if self._index is None:
            index: Bm25Index[int] = Bm25Index()
            for seq, text in _contents(conn):
                index.add(int(seq), tokenize(text))
            self._index = index
            logger.info("rank_bm25: loaded %d memories from the archive", len(index))
        return self._index

"""The cold archive's two BM25 engines, chosen by ``ColdConfig.engine``, with one tokenisation.

``fts5``: SQLite FTS5 in the archive file itself (:mod:`tiers.fts5`): incremental,
transactional, fast at a million memories.

``rank_bm25``: rank_bm25's BM25Okapi in memory (:mod:`tiers.bm25`), loaded from the archive at
the first search, then kept current after each commit by appending or tombstoning documents:
never rebuilt on the write path. It scores every document in Python, so its memory and query
time grow with the archive (``python -m benchmarks.tiers_bench`` measures both): it suits
archives under ~100k memories.

Both compute the same BM25 (FTS5's constants and IDF), so their scores agree.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Protocol

from tiers.bm25 import Bm25Index
from tiers.text import Tokenizer

logger = logging.getLogger(__name__)

# One change to the lexical index: (is_insert, seq, tokens), applied in order.
Change = tuple[bool, int, list[str]]

FTS_META_KEY = "fts5_tokenizer"


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

    def purge(self, conn: sqlite3.Connection) -> None:
        """After a deletion: leave no deleted term in the file (outside a transaction)."""
        ...

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int, n_docs: int
    ) -> tuple[list[tuple[int, float]], float]:
        """(seq, raw BM25) pairs, best first, at most ``k``; and the terms' IDF mass."""
        ...


def contents(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """(seq, content) of every archived memory, in insertion order."""
    return conn.execute("SELECT seq, json_extract(body, '$.content') FROM memories ORDER BY seq")


class RankBm25Engine:
    name = "rank_bm25"

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._index: Bm25Index[int] | None = None

    def prepare(self, conn: sqlite3.Connection) -> None:
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
        if exists is None:
            return
        logger.info("engine rank_bm25: dropping the archive's FTS5 index (rebuilt if needed)")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DROP TABLE IF EXISTS memories_vocab")
        conn.execute("DROP TABLE IF EXISTS memories_fts")
        conn.execute("DELETE FROM meta WHERE key = ?", (FTS_META_KEY,))
        conn.execute("COMMIT")

    def stage(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        return None

    def purge(self, conn: sqlite3.Connection) -> None:
        return None  # nothing of the index is on disk

    def committed(self, changes: Sequence[Change]) -> None:
        if self._index is None:
            return  # not loaded yet: the first search reads the committed archive
        for is_insert, seq, tokens in changes:
            if is_insert:
                self._index.add(seq, tokens)
            else:
                self._index.remove(seq)

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int, n_docs: int
    ) -> tuple[list[tuple[int, float]], float]:
        index = self._loaded(conn)
        return index.top(terms, k), index.mass(terms)

    def _loaded(self, conn: sqlite3.Connection) -> Bm25Index[int]:
        if self._index is None:
            index: Bm25Index[int] = Bm25Index()
            for seq, text in contents(conn):
                index.add(int(seq), self._tokenizer.document(text))
            self._index = index
            logger.info("rank_bm25: loaded %d memories from the archive", len(index))
        return self._index

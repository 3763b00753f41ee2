"""The FTS5 engine: BM25 inside the archive file, incremental, fast at a million memories.

The index is a contentless FTS5 table (the archive already holds the text) fed the
pre-tokenised text of :mod:`tiers.text` under SQLite's ``ascii`` tokenizer, so it indexes
exactly our tokens; it commits in the same transaction as the memory. ``bm25()`` is negated
(FTS5 returns lower-is-better). Document frequencies come from an ``fts5vocab`` table, and the
total token count (for the average length) from a counter kept beside the index.

Cost. FTS5 scores every row that contains any query term, so a query's cost grows with the
summed document frequencies of its terms; at a million chat turns, common words put a few
hundred thousand rows behind one query. ``budget`` bounds that work. When the terms' summed
frequencies exceed it, the rarest terms whose frequencies fit the budget (at least one; more
while they find fewer than ``k`` memories) form the *core*: FTS5 ranks the memories that contain
a core term, and the best ``rescore`` of them get their exact full BM25, the remaining common
terms added in Python with FTS5's own formula. So every returned score is the exact BM25 score;
what may be missed is a memory holding none of the query's rarer terms. ``budget: 0`` is always
exact; below ~``budget`` memories every query is exact. What the budget buys in speed and costs
in recall at a million memories: ``benchmarks/results/fts5_budget.md``.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from tiers.bm25 import K1, B, idf, idf_mass
from tiers.lexical import FTS_META_KEY, Change, contents
from tiers.text import Tokenizer

logger = logging.getLogger(__name__)

_TOKENS_KEY = "fts5_tokens"
_RESCORE_CHUNK = 50
_SEARCH = (
    "SELECT rowid, -bm25(memories_fts) FROM memories_fts "
    "WHERE memories_fts MATCH ? ORDER BY rank, rowid LIMIT ?"
)


class Fts5Engine:
    name = "fts5"

    def __init__(self, tokenizer: Tokenizer, *, budget: int = 30_000, rescore: int = 400) -> None:
        self._tokenizer = tokenizer
        self.budget = budget
        self.rescore = rescore
        self._tokens = 0  # tokens indexed, for the average document length

    # -- the index ------------------------------------------------------------------------------

    def prepare(self, conn: sqlite3.Connection) -> None:
        meta = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (FTS_META_KEY, _TOKENS_KEY)
            ).fetchall()
        )
        fingerprint = self._tokenizer.fingerprint
        if meta.get(FTS_META_KEY) == fingerprint and _TOKENS_KEY in meta:
            self._tokens = int(meta[_TOKENS_KEY])
            return
        logger.info("building the FTS5 index of the archive (tokenizer %s)", fingerprint)
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._tokens = self._rebuild(conn)
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(FTS_META_KEY, fingerprint), (_TOKENS_KEY, str(self._tokens))],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _rebuild(self, conn: sqlite3.Connection) -> int:
        conn.execute("DROP TABLE IF EXISTS memories_vocab")
        conn.execute("DROP TABLE IF EXISTS memories_fts")
        conn.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5(tokens, content='', tokenize='ascii')"
        )
        conn.execute("CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, row)")
        total = 0
        for seq, text in contents(conn).fetchall():
            tokens = self._tokenizer.document(text)
            total += len(tokens)
            conn.execute(
                "INSERT INTO memories_fts (rowid, tokens) VALUES (?, ?)", (seq, " ".join(tokens))
            )
        return total

    def stage(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        for is_insert, seq, tokens in changes:
            if is_insert:
                sql = "INSERT INTO memories_fts (rowid, tokens) VALUES (?, ?)"
            else:  # a contentless table forgets a row given the exact text it indexed
                sql = (
                    "INSERT INTO memories_fts (memories_fts, rowid, tokens) VALUES ('delete', ?, ?)"
                )
            conn.execute(sql, (seq, " ".join(tokens)))
        if changes:
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_TOKENS_KEY, str(self._tokens + _token_delta(changes))),
            )

    def committed(self, changes: Sequence[Change]) -> None:
        self._tokens += _token_delta(changes)

    def purge(self, conn: sqlite3.Connection) -> None:
        """A contentless index keeps a deleted document's terms beside a delete marker until
        its segments merge; ``optimize`` merges them all, so no forgotten term stays in the
        file (it rewrites the index: about a second per 100k memories)."""
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")

    # -- search ---------------------------------------------------------------------------------

    def search(
        self, conn: sqlite3.Connection, terms: Sequence[str], k: int, n_docs: int
    ) -> tuple[list[tuple[int, float]], float]:
        freqs = self._doc_freqs(conn, terms)
        mass = idf_mass(n_docs, [freqs[t] for t in terms])
        known = sorted((t for t in terms if freqs[t]), key=lambda t: (freqs[t], t))
        if not known:
            return [], mass
        if self.budget <= 0 or sum(freqs[t] for t in known) <= self.budget:
            return self._ranked(conn, known, k), mass
        core, rest = _split(known, freqs, self.budget)
        candidates = self._ranked(conn, core, max(k, self.rescore))
        while len(candidates) < k and rest:  # too few: widen the core one term at a time
            core.append(rest.pop(0))
            candidates = self._ranked(conn, core, max(k, self.rescore))
        weights = {term: idf(n_docs, freqs[term]) for term in rest}
        return self._rescored(conn, candidates, weights, n_docs=n_docs, k=k)[:k], mass

    def _ranked(
        self, conn: sqlite3.Connection, terms: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = conn.execute(_SEARCH, (expression, limit)).fetchall()
        return [(int(seq), float(score)) for seq, score in rows]

    def _doc_freqs(self, conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
        marks = ",".join("?" * len(terms))
        found = dict(
            conn.execute(
                f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", tuple(terms)
            ).fetchall()
        )
        return {term: int(found.get(term, 0)) for term in terms}

    def _rescored(
        self,
        conn: sqlite3.Connection,
        candidates: list[tuple[int, float]],
        weights: dict[str, float],
        *,
        n_docs: int,
        k: int,
    ) -> list[tuple[int, float]]:
        """Add the other terms' BM25 (``weights``: term -> IDF) to the candidates' core scores.

        Candidates come best core score first; once even the most the rest terms could add
        (IDF x (k1 + 1) each) cannot lift a candidate past the current k-th score, the others
        cannot either, and rescoring stops.
        """
        ceiling = sum(weights.values()) * (K1 + 1)
        avgdl = self._tokens / n_docs if n_docs else 1.0
        scored: list[tuple[int, float]] = []
        for start in range(0, len(candidates), _RESCORE_CHUNK):
            chunk = candidates[start : start + _RESCORE_CHUNK]
            if len(scored) >= k and chunk[0][1] + ceiling < _kth(scored, k):
                break
            texts = _contents_of(conn, [seq for seq, _ in chunk])
            for seq, core_score in chunk:
                tokens = self._tokenizer.document(texts[seq])
                scored.append((seq, core_score + _bm25(tokens, weights, avgdl)))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored


def _kth(scored: list[tuple[int, float]], k: int) -> float:
    return sorted((score for _, score in scored), reverse=True)[k - 1]


def _contents_of(conn: sqlite3.Connection, seqs: Sequence[int]) -> dict[int, str]:
    marks = ",".join("?" * len(seqs))
    rows = conn.execute(
        f"SELECT seq, json_extract(body, '$.content') FROM memories WHERE seq IN ({marks})",
        tuple(seqs),
    ).fetchall()
    return {int(seq): str(text) for seq, text in rows}


def _bm25(tokens: Sequence[str], weights: dict[str, float], avgdl: float) -> float:
    """FTS5's bm25() of one document for ``weights`` (term -> IDF)."""
    norm = K1 * (1 - B + B * len(tokens) / avgdl)
    total = 0.0
    for term, weight in weights.items():
        tf = tokens.count(term)
        if tf:
            total += weight * (tf * (K1 + 1)) / (tf + norm)
    return total


def _split(terms: Sequence[str], freqs: dict[str, int], budget: int) -> tuple[list[str], list[str]]:
    """The rarest terms whose frequencies fit ``budget`` (at least one), and the rest."""
    core: list[str] = []
    used = 0
    for term in terms:
        if core and used + freqs[term] > budget:
            break
        core.append(term)
        used += freqs[term]
    return core, list(terms[len(core) :])


def _token_delta(changes: Sequence[Change]) -> int:
    return sum(len(tokens) if is_insert else -len(tokens) for is_insert, _, tokens in changes)

"""Exact BM25 in PostgreSQL, from term statistics kept beside the memories.

The archive's tokenizer (:mod:`tiers.text`) tokenises each memory once, in Python, exactly as
the embedded engines do; the database keeps what BM25 needs: ``postings`` (term, memory, term
frequency, the memory's length), ``terms`` (document frequency), each memory's token count
(``memories.n_tokens``) and the totals in ``stats``. They change in the archive's write
transaction, so a search never sees a memory without its statistics, and forgetting a memory
deletes its postings and every term no other memory holds (no row keeps a word of it).

A search is one statement: it reads the statistics, computes FTS5's IDF
``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 (as :func:`tiers.bm25.idf`: the same libm
``log`` on the same doubles), sums per memory holding a query term
``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl))`` over the query's terms (the
formula of SQLite FTS5's ``bm25()`` and of :class:`tiers.bm25.Bm25Index`), and returns the best
``k`` with their bodies and the query's IDF mass. Ties go to the
earlier memory (``seq``), as in FTS5. The only difference from the embedded engines is the
order in which floating-point terms are added: scores agree within 1e-9 (relative), with the
same top-k ids, measured by ``tests/tiers/test_pg_archive.py`` on a test corpus. (FTS5 measures a
document's length in its own ASCII tokens, which splits a hyphenated token in two: on text with
such tokens FTS5's scores drift from both other engines' by about 1e-4.) Every query is exact
(no budget): its cost grows with the summed document frequencies of its terms, like FTS5 with
``fts5_budget: 0``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tiers.bm25 import IDF_FLOOR, K1, B
from tiers.lexical import Change
from tiers.pg_schema import PgConnection

# One statement: the statistics, FTS5's IDF (ln, floored at 1e-6 as tiers.bm25.idf does: the
# same libm function on the same doubles), the scores, the top k with their bodies, and the
# query's IDF mass (every query term, known or not). The plan must not depend on table
# statistics (a fresh namespace has none): ``stats`` is one row (LIMIT 1 says so), and each
# term's postings are read from their index by a LATERAL lookup kept apart by OFFSET 0 (a
# merge join over every posting is what the planner picks otherwise). Postings carry the
# document's length, so scoring never touches the memories until the top k.
_SEARCH = f"""
WITH st AS MATERIALIZED (
    SELECT docs::float8 AS n, CASE WHEN docs > 0 THEN tokens::float8 / docs ELSE 1 END AS avgdl
    FROM stats LIMIT 1
), qt AS (
    SELECT u.term, COALESCE(t.df, 0) AS df
    FROM unnest(%(terms)s::text[]) AS u (term)
    LEFT JOIN LATERAL (SELECT df FROM terms WHERE terms.term = u.term) AS t ON TRUE
), w AS (
    SELECT qt.term, qt.df, CASE WHEN v > 0 THEN v ELSE {IDF_FLOOR!r}::float8 END AS idf
    FROM qt CROSS JOIN st
    CROSS JOIN LATERAL (SELECT ln((st.n - qt.df + 0.5) / (qt.df + 0.5)) AS v) AS l
), hits AS (
    SELECT p.seq, SUM(w.idf * (p.tf * {K1 + 1!r}::float8) /
           (p.tf + {K1!r}::float8 * (1 - {B!r}::float8 + {B!r}::float8 * p.dl / st.avgdl)))
           AS score
    FROM w CROSS JOIN st
    CROSS JOIN LATERAL (
        SELECT seq, tf, dl FROM postings WHERE postings.term = w.term OFFSET 0
    ) AS p
    WHERE w.df > 0
    GROUP BY p.seq
    ORDER BY score DESC, p.seq
    LIMIT %(k)s
)
SELECT h.seq, h.score, m.body, (SELECT SUM(idf) FROM w) AS mass
FROM hits AS h JOIN memories AS m ON m.seq = h.seq
ORDER BY h.score DESC, h.seq
"""


def stage(conn: PgConnection, changes: Sequence[Change]) -> int:
    """Apply a transaction's index changes (in order); return the change in total tokens."""
    if not changes:
        return 0
    before: dict[int, list[str] | None] = {}
    after: dict[int, list[str] | None] = {}
    for is_insert, seq, words in changes:
        if seq not in before:  # the first change tells what the seq held before the txn
            before[seq] = None if is_insert else words
        after[seq] = words if is_insert else None
    raw = conn.raw
    old = [seq for seq, tokens in before.items() if tokens is not None]
    if old:
        raw.execute("DELETE FROM postings WHERE seq = ANY(%s)", (old,))
    df: Counter[str] = Counter()
    for seq, tokens in before.items():
        df.subtract(set(tokens or ()))
        df.update(set(after[seq] or ()))
    new = {seq: Counter(tokens) for seq, tokens in after.items() if tokens is not None}
    if new:
        with raw.cursor().copy("COPY postings (term, seq, tf, dl) FROM STDIN") as copy:
            for seq, counts in new.items():
                length = sum(counts.values())
                for term, tf in counts.items():
                    copy.write_row((term, seq, tf, length))
        raw.execute(
            "UPDATE memories AS m SET n_tokens = v.n FROM unnest(%s::bigint[], %s::int[]) "
            "AS v (seq, n) WHERE m.seq = v.seq",
            (list(new), [sum(c.values()) for c in new.values()]),
        )
    _apply_df(conn, {term: n for term, n in df.items() if n})
    return sum(len(t or ()) for t in after.values()) - sum(len(t or ()) for t in before.values())


def _apply_df(conn: PgConnection, delta: dict[str, int]) -> None:
    if not delta:
        return
    terms = sorted(delta)  # a fixed order: concurrent writers lock term rows alike
    conn.raw.execute(
        "INSERT INTO terms (term, df) SELECT * FROM unnest(%s::text[], %s::int[]) "
        "ON CONFLICT (term) DO UPDATE SET df = terms.df + excluded.df",
        (terms, [delta[t] for t in terms]),
    )
    gone = [t for t in terms if delta[t] < 0]
    if gone:
        conn.raw.execute("DELETE FROM terms WHERE term = ANY(%s) AND df <= 0", (gone,))


def search(conn: PgConnection, terms: Sequence[str], k: int) -> list[tuple[int, float, str, float]]:
    """(seq, raw BM25, body, the terms' IDF mass) of the best ``k``, best first."""
    rows = conn.raw.execute(_SEARCH, {"terms": list(terms), "k": k}).fetchall()
    return [(int(seq), float(score), str(body), float(mass)) for seq, score, body, mass in rows]

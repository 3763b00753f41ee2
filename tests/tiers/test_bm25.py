"""The incremental BM25 index: rank_bm25's scores, kept current without rebuilds."""

from __future__ import annotations

import random

import pytest
from rank_bm25 import BM25Okapi

from tiers.bm25 import K1, MIN_IDF_MASS, B, Bm25Index, idf, normalise


class FtsIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """A from-scratch BM25Okapi with FTS5's IDF floor: the reference to compare against."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, n in nd.items():
            self.idf[word] = idf(self.corpus_size, n)


def random_docs(n: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    return [rng.choices(vocab, weights, k=rng.randint(3, 25)) for _ in range(n)]


def test_incremental_index_matches_a_fresh_build_after_adds_and_removals() -> None:
    """After appends, removals and replacements, scores equal a BM25Okapi built from scratch."""
    docs = random_docs(400)
    index: Bm25Index[int] = Bm25Index()
    for i, doc in enumerate(docs):
        index.add(i, doc)
    for i in range(0, 400, 3):
        index.remove(i)
    for i in range(1, 60, 3):
        docs[i] = [*docs[i][::-1], "w299"]
        index.add(i, docs[i])
    live = sorted(index._slots, key=index._slots.__getitem__)
    reference = FtsIdfOkapi([docs[i] for i in live], k1=K1, b=B)
    query = ["w1", "w17", "w250", "w299"]
    expected = dict(zip(live, reference.get_scores(query), strict=True))
    got = dict(index.top(query))
    assert set(got) == {i for i, s in expected.items() if s > 0}
    for key, score in got.items():
        assert score == pytest.approx(expected[key], rel=1e-12)


def test_compaction_keeps_scores_and_order() -> None:
    """Removing most documents compacts the slots without changing any score."""
    docs = random_docs(200, seed=3)
    index: Bm25Index[str] = Bm25Index()
    for i, doc in enumerate(docs):
        index.add(f"d{i}", doc)
    before = {k: s for k, s in index.top(["w2", "w9"]) if int(k[1:]) >= 150}
    for i in range(150):
        index.remove(f"d{i}")
    after = dict(index.top(["w2", "w9"]))
    assert len(index._keys) == 50  # compacted
    fresh: Bm25Index[str] = Bm25Index()
    for i in range(150, 200):
        fresh.add(f"d{i}", docs[i])
    assert after == pytest.approx(dict(fresh.top(["w2", "w9"])))
    assert set(after) <= set(before)


def test_top_respects_k_ties_and_empty_cases() -> None:
    """k bounds the hits; equal scores keep insertion order; empty inputs give nothing."""
    index: Bm25Index[str] = Bm25Index()
    assert index.top(["x"], 3) == []
    for name in "abcdef":
        index.add(name, ["same", "words"])
    index.add("other", ["different"])
    assert [k for k, _ in index.top(["same"], 3)] == ["a", "b", "c"]
    assert index.top([], 3) == [] and index.top(["same"], 0) == []
    assert "a" in index and len(index) == 7


def test_normalisation_reads_as_query_coverage() -> None:
    """A typical document holding every query word scores 1.0; half the evidence about 0.5."""
    index: Bm25Index[int] = Bm25Index()
    for i in range(20):
        index.add(i, [f"filler{i}", "common", "words"])
    index.add(100, ["alpha", "beta", "common"])
    full = dict(index.top(["alpha", "beta"]))[100]
    assert normalise(full, index.mass(["alpha", "beta"])) == pytest.approx(1.0)
    half = normalise(full / 2, index.mass(["alpha", "beta"]))
    assert half == pytest.approx(0.5)
    common = dict(index.top(["common"]))[100]
    assert normalise(common, index.mass(["common"])) < 0.01  # nothing to go on
    assert normalise(0.0, 5.0) == 0.0 and MIN_IDF_MASS == 1.0

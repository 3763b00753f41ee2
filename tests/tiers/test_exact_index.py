"""The exact in-memory copy of a small vector collection, alone and inside the warm tier."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tiers import Memory
from tiers.config import WarmConfig
from tiers.exact_index import ExactCopy, ExactIndex
from tiers.onnx_embedder import OnnxEmbedder
from tiers.warm import EXACT_AFTER_SEARCHES, WarmTier

DIM = 16


def unit(rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


def brute(ids: list[str], rows: np.ndarray, query: np.ndarray, k: int) -> list[str]:
    scores = unit(rows) @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


def test_search_finds_the_true_nearest_after_upserts_and_removals() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((300, DIM)).astype(np.float32)
    ids = [f"m{i}" for i in range(300)]
    index = ExactIndex(DIM)
    index.upsert(ids[:200], rows[:200])
    index.upsert(ids[200:], rows[200:])
    rows[5] = rng.standard_normal(DIM)  # a new vector for a held id replaces the old one
    index.upsert(["m5"], rows[5:6])
    gone = {f"m{i}" for i in range(0, 300, 7)}
    index.remove([*sorted(gone), "never-added"])
    kept = [i for i in ids if i not in gone]
    kept_rows = np.array([rows[ids.index(i)] for i in kept])
    assert len(index) == len(kept)
    for query in rng.standard_normal((20, DIM)).astype(np.float32):
        found = index.search(query, 10)
        assert [i for i, _ in found] == brute(kept, kept_rows, query, 10)
        expected = unit(kept_rows) @ (query / np.linalg.norm(query))
        for memory_id, score in found:
            assert score == pytest.approx(float(expected[kept.index(memory_id)]), abs=1e-5)


def test_a_removed_vector_leaves_no_copy_in_the_spare_rows() -> None:
    index = ExactIndex(2)
    index.upsert(["a", "b", "c"], [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    index.remove(["a", "c"])
    assert [i for i, _ in index.search([1, 0], 5)] == ["b"]
    rows = index._rows
    assert np.count_nonzero(rows[1:]) == 0 and rows[0].tolist() == [0.0, 1.0]


def test_search_with_k_beyond_the_size_returns_everything_in_order() -> None:
    index = ExactIndex(2)
    index.upsert(["a", "b", "c"], [[1, 0], [0, 1], [1, 1]])
    found = index.search([1, 0.1], 10)
    assert [i for i, _ in found] == ["a", "c", "b"]
    assert index.search([1, 0], 0) == []
    assert ExactIndex(2).search([1, 0], 5) == []


def test_bad_shapes_are_refused() -> None:
    index = ExactIndex(3)
    with pytest.raises(ValueError):
        index.upsert(["a"], [[1.0, 2.0]])
    with pytest.raises(ValueError):
        index.upsert(["a", "b"], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError):
        index.search([1.0, 2.0], 1)
    with pytest.raises(ValueError):
        ExactIndex(0)


def test_a_copy_is_ready_only_once_filled_and_dropped_when_too_large() -> None:
    copy = ExactCopy(2, limit=3)
    assert copy.search([1, 0], 2) is None and copy.state == "empty"
    copy.fill([(["a", "b"], [[1, 0], [0, 1]]), (["c"], [[1, 1]])], threading.Event(), expected=3)
    assert copy.state == "ready" and len(copy) == 3
    assert copy._index is not None and copy._index.nbytes == 3 * 2 * 4  # rows allocated once
    found = copy.search([0, 1], 1)
    assert found is not None and [i for i, _ in found] == ["b"]
    assert found[0][1] == pytest.approx(1.0)
    copy.upsert(["d"], [[-1, 0]])  # a fourth vector: more than the limit
    assert copy.state == "too large" and copy.search([1, 0], 1) is None

    big = ExactCopy(2, limit=1)
    big.fill([(["a", "b"], [[1, 0], [0, 1]])], threading.Event())
    assert big.state == "too large" and big.search([1, 0], 1) is None

    read: list[int] = []

    def pages() -> Iterator[tuple[list[str], list[list[float]]]]:
        read.append(1)
        yield ["a", "b"], [[1.0, 0.0], [0.0, 1.0]]

    known = ExactCopy(2, limit=1)
    known.fill(pages(), threading.Event(), expected=2)
    assert known.state == "too large" and not read  # known too large: not read at all

    stop = threading.Event()
    stop.set()
    stopped = ExactCopy(2, limit=10)
    stopped.fill([(["a"], [[1, 0]])], stop)
    assert stopped.state == "stopped" and stopped.search([1, 0], 1) is None


# -- inside the warm tier -------------------------------------------------------------------

TOPICS = [
    "We moved the billing service from SQLite to Postgres last Friday.",
    "The nightly cron job sends the invoice emails at two in the morning.",
    "Lunch at the noodle place was great, we should go again.",
    "My sister adopted a grey cat called Pepper from the shelter.",
    "The flight to Lisbon leaves at seven; I booked a window seat.",
    "I started learning the cello in March and practise every evening.",
    "Our team retro decided to drop the Thursday status meeting.",
    "The dentist moved my appointment to the twelfth of June.",
]


def memories() -> list[Memory]:
    return [Memory(id=f"t{i}", content=text) for i, text in enumerate(TOPICS)]


def open_tier(path: Path, embedder: OnnxEmbedder, **config: Any) -> WarmTier:
    return WarmTier(path, WarmConfig(context="none", **config), embedder, exclusive=True)


def filled(tier: WarmTier) -> None:
    """Search until the copy is being read, then wait for it."""
    for _ in range(EXACT_AFTER_SEARCHES):
        tier.search_ids("warm up", 1)
    assert tier._filler is not None
    tier._filler.join()


def chroma_ids(tier: WarmTier, query: str, k: int) -> list[tuple[str, float]]:
    """What Chroma alone answers (the copy bypassed), scored as the tier scores."""
    vector = np.asarray(tier._query_vector(query), dtype=np.float32)
    result = tier._collection.query(query_embeddings=[vector], n_results=k, include=["distances"])
    pairs = zip(result["ids"][0], result["distances"][0], strict=True)
    return [(i, min(1.0, max(0.0, 1.0 - d))) for i, d in pairs]


QUERIES = ["postgres migration", "a pet from the shelter", "when is my flight", "music lessons"]


@pytest.fixture
def tier(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> Iterator[WarmTier]:
    """A tier that may keep a copy, holding TOPICS (the copy not read yet)."""
    tier = open_tier(tmp_path, onnx_embedder)
    try:
        tier.add(memories())
        yield tier
    finally:
        tier.close()


def test_the_tier_answers_from_its_copy_as_chroma_does(tier: WarmTier) -> None:
    assert tier.stats()["exact"]["memories"]["state"] == "empty"
    filled(tier)
    assert tier.stats()["exact"]["memories"] == {"state": "ready", "vectors": len(TOPICS)}
    for query in QUERIES:
        exact = tier.search_ids(query, 5)
        chroma = chroma_ids(tier, query, 5)
        assert [i for i, _ in exact] == [i for i, _ in chroma]
        assert [s for _, s in exact] == pytest.approx([s for _, s in chroma], abs=1e-5)


def test_the_copy_follows_adds_changes_and_forgets(tier: WarmTier) -> None:
    filled(tier)
    tier.add([Memory(id="new", content="The vet said Pepper the cat needs a new diet.")])
    assert tier.search_ids("the cat's diet", 1)[0][0] == "new"
    tier.add([Memory(id="t0", content="I bought a red bicycle for the commute.")])
    assert tier.search_ids("bicycle commute", 1)[0][0] == "t0"
    assert "t0" not in [i for i, _ in tier.search_ids("postgres billing", 3)]
    tier.forget(["new"])
    assert "new" not in [i for i, _ in tier.search_ids("the cat's diet", 9)]
    assert tier.stats()["exact"]["memories"]["vectors"] == len(TOPICS)
    for query in QUERIES:
        assert [i for i, _ in tier.search_ids(query, 4)] == [
            i for i, _ in chroma_ids(tier, query, 4)
        ]


def test_no_copy_without_exclusive_use_or_above_the_limit(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    shared = WarmTier(tmp_path / "shared", WarmConfig(context="none"), onnx_embedder)
    try:
        shared.add(memories())
        for _ in range(EXACT_AFTER_SEARCHES + 1):
            shared.search_ids("postgres", 1)
        assert shared._filler is None and shared.stats()["exact"] == {}
    finally:
        shared.close()
    small = open_tier(tmp_path / "small", onnx_embedder, exact_max_items=3)
    try:
        small.add(memories())
        filled(small)
        assert small.stats()["exact"]["memories"]["state"] == "too large"
        assert small.search_ids("postgres migration", 1)[0][0] == "t0"  # from Chroma
    finally:
        small.close()


def test_a_failed_write_sends_searches_back_to_chroma(
    tier: WarmTier, monkeypatch: pytest.MonkeyPatch
) -> None:
    filled(tier)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(tier._collection, "delete", refuse)
    with pytest.raises(Exception, match="disk full"):
        tier.forget(["t1"])
    assert tier.stats()["exact"]["memories"]["state"] == "failed"
    assert tier.search_ids("postgres migration", 1)[0][0] == "t0"


def test_writes_made_while_the_copy_is_read_all_reach_it(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """An add and a forget made after the first page is read end up in the copy: it holds
    exactly what Chroma holds (they wait for the reading to finish, then update it)."""
    tier = open_tier(tmp_path, onnx_embedder, write_batch_size=10)  # many pages to read
    try:
        tier.add([Memory(id=f"m{i}", content=f"{TOPICS[i % 8]} ({i})") for i in range(40)])

        def write() -> None:
            tier.add([Memory(id="late", content="a note added while the copy was read")])
            tier.forget(["m3"])  # on the page already read

        writer = threading.Thread(target=write)
        pages = tier._pages

        def racing(collection: Any) -> Any:
            for n, page in enumerate(pages(collection)):
                yield page
                if n == 0:
                    writer.start()
                    writer.join(timeout=2)  # done now unless the reading holds it back

        tier._pages = racing  # type: ignore[method-assign]
        filled(tier)
        writer.join()
        copy = tier._exact[tier._collection.name]
        held = set(tier._collection.get(include=[])["ids"])
        assert copy.state == "ready" and len(held) == 40
        assert copy._index is not None and set(copy._index._ids) == held
    finally:
        tier.close()

"""The warm tier: the Tier contract in embedded and server mode, and what the write path needs."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.tiers.conftest_warm import FailingEmbedder, RenamedEmbedder
from tests.tiers.contract import TierContract, corpus
from tiers import IncompatibleDataError, InvalidInputError, Memory, TierUnavailableError
from tiers.chroma_server import ChromaServer, free_port
from tiers.config import WarmConfig
from tiers.minilm import SentenceTransformerEmbedder
from tiers.onnx_embedder import OnnxEmbedder
from tiers.warm import WarmTier, usage_file

EMBEDDED = WarmConfig()


def server_config(server: ChromaServer, collection: str | None = None) -> WarmConfig:
    name = collection or f"t-{uuid.uuid4().hex[:12]}"
    return WarmConfig(backend="server", host=server.host, port=server.port, collection=name)


class TestEmbeddedWarmTier(TierContract):
    """The contract, with Chroma embedded in a directory."""

    @pytest.fixture
    def tier(self, tmp_path: Path, onnx_embedder: OnnxEmbedder) -> Iterator[WarmTier]:
        warm = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
        yield warm
        warm.close()


class TestServerWarmTier(TierContract):
    """The contract, against a `chroma run` server on loopback (one collection per test)."""

    @pytest.fixture
    def tier(
        self, chroma_server: ChromaServer, onnx_embedder: OnnxEmbedder, tmp_path: Path
    ) -> Iterator[WarmTier]:
        warm = WarmTier(None, server_config(chroma_server), onnx_embedder, state_dir=tmp_path)
        yield warm
        warm.close()


@pytest.fixture
def warm(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> Iterator[WarmTier]:
    tier = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
    yield tier
    tier.close()


def test_scores_are_clipped_cosine_similarity(warm: WarmTier) -> None:
    """A memory's own embedded text scores ~1; the score is the dot product of unit vectors."""
    warm.add(corpus())
    text = warm.text_of(corpus()[2])
    top = warm.search(text, k=2)
    assert top[0].id == "c2" and top[0].score == pytest.approx(1.0, abs=1e-4)
    vectors = warm.embedder.embed([text, warm.text_of(top[1].memory)])
    assert top[1].score == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-4)


def test_contextual_vectors_embed_the_turn_before(warm: WarmTier) -> None:
    """With context, a turn is found by its question's topic; only a changed text re-embeds."""
    question = corpus()[0].replace(id="q", content="Which database engine should billing use?")
    answer = corpus()[0].replace(id="a", content="Postgres 16, as decided.")
    warm.add([question, answer], contexts={"a": "Dana: " + question.content})
    assert warm.text_of(answer, "Dana: x") == f"Dana: x\n{answer.kind.value}: {answer.content}"
    hits = warm.search("database engine for billing", k=2)
    assert {h.id for h in hits} == {"q", "a"}
    calls: list[int] = []
    real = warm.embedder.embed
    warm.embedder.embed = lambda texts: (calls.append(len(texts)), real(texts))[1]  # type: ignore[method-assign]
    try:
        warm.add([answer], contexts={"a": "Dana: " + question.content})  # same text: no embedding
        assert calls == []
        warm.add([answer], contexts={"a": "Dana: a different question"})  # new context
        assert calls == [1]
    finally:
        warm.embedder.embed = real  # type: ignore[method-assign]


def test_search_vector_takes_a_precomputed_query(warm: WarmTier) -> None:
    """search_vector ranks like search; a vector of the wrong size is a clear error."""
    warm.add(corpus())
    query = "rate limiter for the mailer"
    vector = warm.embedder.embed([query])[0]
    assert [h.id for h in warm.search_vector(vector, 3)] == [h.id for h in warm.search(query, 3)]
    with pytest.raises(InvalidInputError, match="384-d"):
        warm.search_vector(np.ones(10, dtype=np.float32), 3)


def test_memories_survive_reopening(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """Closed and reopened on the same directory, the tier has the same memories and hits."""
    first = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
    first.add(corpus())
    first.touch(["c1", "c1"])
    first.close()
    again = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
    try:
        assert again.count() == len(corpus())
        assert again.get(["c5"]) == [corpus()[5]]
        assert again.search("mailer throttled messages per second", 1)[0].id == "c5"
        assert again.usage(["c1"]) == {"c1": 2}
    finally:
        again.close()


def test_another_embedder_is_refused_with_a_way_out(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """Reopening with an embedder of another vector space raises, naming both and the rebuild."""
    WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder).close()
    other = RenamedEmbedder(onnx_embedder, "e5-small")
    with pytest.raises(IncompatibleDataError) as err:
        WarmTier(tmp_path / "chroma", EMBEDDED, other)
    message = str(err.value)
    assert "'all-MiniLM-L6-v2' (384-d)" in message and "'e5-small'" in message
    assert "rebuild" in message and "WarmTier.drop" in message and "archive" in message


def test_drop_lets_the_index_be_rebuilt(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """After drop, the directory opens empty with a new embedder."""
    first = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
    first.add(corpus())
    first.close()
    assert WarmTier.drop(tmp_path / "chroma", EMBEDDED)
    rebuilt = WarmTier(tmp_path / "chroma", EMBEDDED, RenamedEmbedder(onnx_embedder, "e5-small"))
    try:
        assert rebuilt.count() == 0
    finally:
        rebuilt.close()


def test_a_failing_embedder_leaves_the_tier_unchanged(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """New or replaced memories: the embedder raises, add raises, nothing of it is indexed."""
    path = tmp_path / "chroma"
    seed = WarmTier(path, EMBEDDED, onnx_embedder)
    seed.add(corpus()[:3])
    seed.close()
    broken = WarmTier(path, EMBEDDED, FailingEmbedder(onnx_embedder))
    try:
        changed = corpus()[0].replace(content="Billing went back to SQLite.")
        with pytest.raises(TierUnavailableError, match="nothing was indexed"):
            broken.add([*corpus()[3:], changed])
        assert broken.count() == 3
        assert broken.contains([m.id for m in corpus()]) == {"c0", "c1", "c2"}
        assert broken.get(["c0"]) == [corpus()[0]]
        with pytest.raises(TierUnavailableError, match="simulated"):
            broken.search("billing", 3)
    finally:
        broken.close()


def test_only_changed_content_is_embedded(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """Re-adding the same memory, or one with only new fields, never calls the embedder."""
    path = tmp_path / "chroma"
    seed = WarmTier(path, EMBEDDED, onnx_embedder)
    seed.add(corpus())
    seed.close()
    no_embedder = FailingEmbedder(onnx_embedder)
    warm = WarmTier(path, EMBEDDED, no_embedder)
    try:
        warm.add(corpus())
        warm.add([corpus()[1].replace(importance=0.9, entities=("Marco",))])
        assert no_embedder.calls == 0
        assert warm.get(["c1"])[0].importance == 0.9
        assert warm.search_vector(onnx_embedder.embed([corpus()[1].content])[0], 1)[0].memory == (
            corpus()[1].replace(importance=0.9, entities=("Marco",))
        )
    finally:
        warm.close()


def test_the_last_version_of_an_id_in_one_call_wins(warm: WarmTier) -> None:
    """Two versions of one id in the same add: one record, the later content."""
    old, new = corpus()[0], corpus()[0].replace(content="Billing stays on SQLite.")
    warm.add([old, new])
    assert warm.count() == 1
    assert warm.get(["c0"]) == [new]


def test_contains_reports_indexed_ids_only(warm: WarmTier) -> None:
    """contains answers which ids are indexed, ignoring unknown, empty and repeated ids."""
    warm.add(corpus()[:2])
    assert warm.contains(["c0", "c1", "c1", "zz", ""]) == {"c0", "c1"}
    assert warm.contains([]) == set()


def test_get_keeps_the_order_asked_and_repeats(warm: WarmTier) -> None:
    """get returns memories in the order of the ids, including repeats; unknown ids skipped."""
    warm.add(corpus())
    assert [m.id for m in warm.get(["c2", "c0", "c2", "nope"])] == ["c2", "c0", "c2"]


def test_touch_then_evict_least_used(warm: WarmTier) -> None:
    """Eviction removes the least-used vectors first and returns their ids."""
    warm.add(corpus())
    warm.touch(["c0", "c1", "c2", "c3"])
    warm.touch(["c0", "c1"])
    evicted = warm.evict_least_used(3)
    assert set(evicted[:2]) == {"c4", "c5"}
    assert evicted[2] in {"c2", "c3"}
    assert warm.count() == 3
    assert warm.contains([m.id for m in corpus()]) == {"c0", "c1"} | ({"c2", "c3"} - {evicted[2]})
    assert warm.evict_least_used(10) and warm.count() == 0
    assert warm.evict_least_used(1) == []


def test_forget_clears_usage_too(warm: WarmTier) -> None:
    """A forgotten id has no usage left and is never returned by eviction."""
    warm.add(corpus())
    warm.touch(["c0"])
    assert warm.forget(["c0", "c0", "nope"]) == 1
    assert warm.usage(["c0"]) == {}
    assert "c0" not in warm.evict_least_used(10)


def test_usage_log_is_resynced_after_a_crash(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """If the usage file is lost, reopening rebuilds it from the index (every id evictable)."""
    path = tmp_path / "chroma"
    first = WarmTier(path, EMBEDDED, onnx_embedder)
    first.add(corpus())
    first.close()
    (path / usage_file(EMBEDDED)).unlink()
    again = WarmTier(path, EMBEDDED, onnx_embedder)
    try:
        assert sorted(again.evict_least_used(10)) == sorted(m.id for m in corpus())
    finally:
        again.close()


def test_a_damaged_usage_log_is_set_aside(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """Garbage in the usage file: the tier opens, keeps the garbage aside, and still evicts."""
    path = tmp_path / "chroma"
    first = WarmTier(path, EMBEDDED, onnx_embedder)
    first.add(corpus())
    first.close()
    (path / usage_file(EMBEDDED)).write_bytes(b"this is not a database" * 100)
    again = WarmTier(path, EMBEDDED, onnx_embedder)
    try:
        assert list(path.glob(usage_file(EMBEDDED) + ".damaged-*"))
        assert len(again.evict_least_used(2)) == 2
        assert again.stats()["count"] == len(corpus()) - 2
    finally:
        again.close()


def test_concurrent_searches_while_adding(warm: WarmTier) -> None:
    """Threads searching while another adds: no errors, every result well-formed."""
    warm.add(corpus())
    extra = [Memory(id=f"x{i}", content=f"note {i} about invoices and mail") for i in range(60)]
    errors: list[BaseException] = []
    queries = ["billing Postgres", "invoice emails", "PDF rendering fonts", "rate limiter"]

    def searcher(query: str) -> None:
        try:
            for _ in range(15):
                hits = warm.search(query, 5)
                assert hits and [h.rank for h in hits] == list(range(len(hits)))
        except BaseException as exc:
            errors.append(exc)

    def writer() -> None:
        try:
            for start in range(0, len(extra), 10):
                warm.add(extra[start : start + 10])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=searcher, args=(q,)) for q in queries]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert warm.count() == len(corpus()) + len(extra)


def test_a_closed_tier_refuses_work(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """After close every call raises TierUnavailableError; close twice is harmless."""
    warm = WarmTier(tmp_path / "chroma", EMBEDDED, onnx_embedder)
    warm.close()
    warm.close()
    with pytest.raises(TierUnavailableError, match="closed"):
        warm.search("billing", 3)
    with pytest.raises(TierUnavailableError, match="closed"):
        warm.add(corpus())


def test_sentence_transformers_embedder_serves_the_tier(
    tmp_path: Path, st_embedder: SentenceTransformerEmbedder
) -> None:
    """The torch embedder works behind the tier too (and reads an index built by ONNX)."""
    warm = WarmTier(tmp_path / "chroma", EMBEDDED, st_embedder)
    try:
        warm.add(corpus())
        assert warm.search("PDF library and system fonts", 1)[0].id == "c3"
    finally:
        warm.close()


def test_embedded_mode_needs_a_directory(onnx_embedder: OnnxEmbedder) -> None:
    """path=None is only for server mode."""
    with pytest.raises(InvalidInputError, match="needs a directory"):
        WarmTier(None, EMBEDDED, onnx_embedder)


def test_an_unreachable_server_is_reported(onnx_embedder: OnnxEmbedder) -> None:
    """No server on the port: TierUnavailableError telling how to start one."""
    config = WarmConfig(backend="server", port=free_port(), timeout_seconds=2)
    with pytest.raises(TierUnavailableError, match="chroma run --path"):
        WarmTier(None, config, onnx_embedder)


def test_a_server_that_dies_raises_tier_unavailable(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """Chroma going away mid-session turns into TierUnavailableError, not a raw HTTP error."""
    server = ChromaServer(tmp_path / "server").start()
    warm = WarmTier(None, server_config(server), onnx_embedder)
    try:
        warm.add(corpus()[:2])
        server.stop()
        with pytest.raises(TierUnavailableError, match="Chroma"):
            warm.add(corpus()[2:])
        with pytest.raises(TierUnavailableError, match="Chroma query failed"):
            warm.search("billing", 2)
    finally:
        warm.close()
        server.stop()


def test_server_data_persists_across_clients(
    chroma_server: ChromaServer, onnx_embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    """A second client of the same server collection sees the first one's memories."""
    config = server_config(chroma_server)
    first = WarmTier(None, config, onnx_embedder, state_dir=tmp_path)
    first.add(corpus())
    first.close()
    again = WarmTier(None, config, onnx_embedder, state_dir=tmp_path)
    try:
        assert again.count() == len(corpus())
        assert again.search("duplicate invoice emails cron", 1)[0].id == "c2"
    finally:
        again.close()


def test_collection_names_follow_chromas_rule() -> None:
    """A collection name Chroma would reject fails at profile validation instead."""
    with pytest.raises(ValueError, match="pattern"):
        WarmConfig(collection="-bad name-")


def test_every_collection_searches_with_the_configured_ef(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """A new collection is made with ``search_ef``; one made with another value (or before the
    setting) is given this tier's when it is opened, passages included."""

    def ef_of(tier: WarmTier) -> list[int]:
        collections = [tier._collection, tier._passages]
        return [c.configuration_json["hnsw"]["ef_search"] for c in collections if c is not None]

    old = WarmTier(tmp_path, WarmConfig(search_ef=100, passage_words=50), onnx_embedder)
    try:
        assert ef_of(old) == [100, 100]
    finally:
        old.close()
    new = WarmTier(tmp_path, WarmConfig(search_ef=400, passage_words=50), onnx_embedder)
    try:
        assert ef_of(new) == [400, 400]
        new.add([Memory(id="a", content="The heron stood still in the shallow water.")])
        assert new.search_ids("a bird by the water", 1)[0][0] == "a"
    finally:
        new.close()
    with pytest.raises(ValueError):
        WarmConfig(search_ef=5)

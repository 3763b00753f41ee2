"""The tiered store without a warm tier: the write path, forgetting, lifecycle, reopening.

Every test runs on both archive backends (SQLite, and PostgreSQL through ``backend``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.tiers.contract import BASE, corpus
from tiers.citations import citation_code
from tiers.config import HotConfig, IngestConfig, LifecycleConfig, TiersConfig
from tiers.errors import (
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    StorageError,
    TierClosedError,
)
from tiers.history import history_line
from tiers.memory import Memory
from tiers.store import TieredStore

pytestmark = pytest.mark.usefixtures("backend")


def words(text: str) -> int:
    return len(text.split())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TieredStore]:
    with TieredStore(tmp_path / "data", line_counter=words) as s:
        yield s


def turn(i: int, text: str | None = None, *, session: str = "s1", minutes: int = 0) -> Memory:
    return Memory(
        id=f"t{i}",
        content=text or f"turn number {i} mentions topic{i}",
        session_id=session,
        timestamp=BASE + timedelta(minutes=minutes or i),
    )


def test_ingest_reports_added_replaced_unchanged(store: TieredStore) -> None:
    """The report counts each outcome; ids lists what was stored or replaced."""
    first = store.ingest(corpus())
    assert (first.added, first.replaced, first.unchanged, first.rejected) == (6, 0, 0, 0)
    assert first.ids == tuple(m.id for m in corpus())
    again = store.ingest([*corpus()[:2], corpus()[2].replace(content="Marco left the team.")])
    assert (again.added, again.replaced, again.unchanged) == (0, 1, 2)
    assert again.ids == ("c2",)
    assert store.count() == 6


def test_new_content_replaces_the_old_version_in_hot_and_cold(store: TieredStore) -> None:
    """After a replacement no tier returns the old text."""
    store.ingest(corpus())
    store.ingest([corpus()[0].replace(content="Billing stays on SQLite in WAL mode.")])
    for tier in ("hot", "cold"):
        hits = store.search(tier, "SQLite WAL billing", 3)  # type: ignore[arg-type]
        assert hits[0].id == "c0" and "WAL" in hits[0].memory.content
        assert not store.search(tier, "Priya Postgres 16", 6) or all(  # type: ignore[arg-type]
            "Postgres" not in h.memory.content
            for h in store.search(tier, "Priya Postgres", 6)  # type: ignore[arg-type]
        )
    assert store.get(["c0"])[0].content.startswith("Billing stays")


def test_same_id_twice_in_one_batch_keeps_the_last(store: TieredStore) -> None:
    """A batch that repeats an id applies its versions in order: the last one wins."""
    report = store.ingest([turn(1, "first draft"), turn(1, "final text")])
    assert (report.added, report.replaced) == (1, 1)
    assert store.get(["t1"])[0].content == "final text"
    assert [h.memory.content for h in store.search("hot", "final text", 2)] == ["final text"]


def test_strict_ingest_rejects_the_whole_batch(store: TieredStore) -> None:
    """An oversized or invalid memory raises a clear error and writes nothing."""
    config = TiersConfig(ingest=IngestConfig(max_content_chars=50))
    with TieredStore(store.data_dir.parent / "strict", config) as strict:
        with pytest.raises(InvalidInputError, match=r"'big'.*60 characters.*limit is 50"):
            strict.ingest([turn(1), Memory(id="big", content="x" * 60)])
        assert strict.count() == 0 and strict.stats().hot == 0
        with pytest.raises(MemoryValidationError, match="item 1: invalid memory: id"):
            strict.ingest([{"id": "ok", "content": "fine"}, {"id": " bad", "content": "x"}])
        with pytest.raises(MemoryValidationError, match="content"):
            strict.ingest([{"id": "empty", "content": "   "}])
        with pytest.raises(InvalidInputError, match="not int"):
            strict.ingest([42])  # type: ignore[list-item]
        with pytest.raises(InvalidInputError, match=r"not a single Memory: pass \[Memory"):
            strict.ingest(turn(1))  # type: ignore[arg-type]
        assert strict.count() == 0


def test_lenient_ingest_skips_and_reports_invalid_items(store: TieredStore) -> None:
    """strict=False stores the valid memories and explains each rejection."""
    report = store.ingest(
        [turn(1), {"id": "", "content": "no id"}, {"id": "fine", "content": "kept"}],
        strict=False,
    )
    assert (report.added, report.rejected) == (2, 1)
    assert "item 1" in report.errors[0] and "id" in report.errors[0]
    assert [m.id for m in store.get(["t1", "fine"])] == ["t1", "fine"]


def test_forget_by_id_and_by_session_everywhere(store: TieredStore) -> None:
    """Forgotten memories leave hot, cold, citations and the timeline; the report lists them."""
    store.ingest([turn(i, session="a" if i < 3 else "b") for i in range(6)])
    codes = store.citation_of(["t1", "t4"])
    report = store.forget(["t1", "nope"], session_id="b")
    assert set(report.ids) == {"t1", "t3", "t4", "t5"}
    assert report.count == 4 and report.sessions == ("a", "b")
    assert codes["t4"] in report.citations
    assert store.get(["t1", "t3", "t4", "t5"]) == []
    assert store.resolve_citation(codes["t1"]) is None
    assert [m.id for m in store.neighbours("t2", 5)] == ["t0", "t2"]
    for tier in ("hot", "cold"):
        found = {h.id for h in store.search(tier, "turn number mentions topic1 topic4", 10)}  # type: ignore[arg-type]
        assert found == {"t0", "t2"}
    assert {h.id for h in store.active(10)} == {"t0", "t2"}
    assert store.pending() == 0  # no warm index was ever attached: nothing to tell it
    with pytest.raises(InvalidInputError, match="single string"):
        store.forget("t0")  # type: ignore[arg-type]


def test_reopening_restores_hot_and_cold(tmp_path: Path) -> None:
    """A reopened store has every memory, its citations, and the newest ones in the hot set."""
    config = TiersConfig(hot=HotConfig(max_items=3))
    with TieredStore(tmp_path, config, line_counter=words) as first:
        first.ingest([turn(i) for i in range(10)])
        codes = first.citation_of(["t0", "t9"])
        total = first.total_line_tokens()
    with TieredStore(tmp_path, config, line_counter=words) as again:
        assert again.count() == 10
        assert sorted(h.id for h in again.active(10)) == ["t7", "t8", "t9"]
        assert again.citation_of(["t0", "t9"]) == codes
        assert again.total_line_tokens() == total
        assert again.search("cold", "topic4", 1)[0].id == "t4"


def test_line_tokens_follow_ingest_replace_and_forget(store: TieredStore) -> None:
    """total_line_tokens always equals the summed counts of the live memories' lines."""
    store.ingest(corpus())
    store.ingest([corpus()[1].replace(content="short now")])
    store.forget(["c2"])
    live = store.get([m.id for m in corpus()])
    assert store.total_line_tokens() == sum(words(history_line(m)) for m in live)


def test_citations_are_seed_codes_and_resolve(store: TieredStore) -> None:
    """Each memory's code is the base64url SHA-256 prefix of its id and resolves back."""
    store.ingest(corpus())
    codes = store.citation_of(["c0", "c3"])
    assert codes == {"c0": citation_code("c0"), "c3": citation_code("c3")}
    assert store.resolve_citation(codes["c3"]) == "c3"


def test_timeline_helpers(store: TieredStore) -> None:
    """neighbours, session, ids_in_session, recent and iter_memories read the archive."""
    store.ingest([turn(i, session="a" if i % 2 else "b") for i in range(8)])
    assert [m.id for m in store.neighbours("t3", 1)] == ["t1", "t3", "t5"]
    assert store.session("t3") == "a"
    assert store.ids_in_session("b") == ["t0", "t2", "t4", "t6"]
    assert [m.id for m in store.recent(2)] == ["t7", "t6"]
    assert len(list(store.iter_memories())) == 8
    with pytest.raises(MemoryNotFoundError):
        store.neighbours("missing", 2)


def test_cold_hits_used_repeatedly_join_the_hot_set(tmp_path: Path) -> None:
    """A memory outside the hot set that is used warm_to_hot_uses times joins it."""
    config = TiersConfig(hot=HotConfig(max_items=2), lifecycle=LifecycleConfig(warm_to_hot_uses=2))
    with TieredStore(tmp_path, config) as store:
        store.ingest([turn(i) for i in range(6)])
        assert "t0" not in store.hot
        store.record_use(["t0"])
        assert "t0" not in store.hot
        store.record_use(["t0", "t0"])  # repeats in one call count once
        assert "t0" in store.hot and store.hot.count() == 2
        assert store.active(1)[0].id == "t0"  # just used: the most active


def test_stats_report_every_tier(store: TieredStore, backend: str) -> None:
    """stats gives per-tier counts, queue length, disk use and engine names."""
    store.ingest(corpus())
    stats = store.stats()
    assert (stats.hot, stats.cold, stats.warm, stats.pending) == (6, 6, None, 0)
    engine = {"sqlite": "fts5", "postgres": "postgres"}[backend]
    assert stats.cold_engine == engine and stats.warm_embedder is None
    assert stats.disk_bytes >= stats.archive_bytes > 0
    assert stats.total_line_tokens == store.total_line_tokens() > 0


def test_one_store_per_directory_unless_every_tier_is_on_a_server(
    store: TieredStore, backend: str
) -> None:
    """SQLite: a second store on an open data directory is refused; after close it opens.
    PostgreSQL without a local warm tier: the store keeps nothing in its directory and takes no
    lock, so a second one opens beside it (as a replica would) and reads what the first wrote."""
    if backend == "sqlite":
        with pytest.raises(StorageError, match="in use by another store"):
            TieredStore(store.data_dir)
        store.close()
        TieredStore(store.data_dir).close()
        return
    assert store.shared
    with TieredStore(store.data_dir) as second:
        store.ingest([turn(1)])
        assert [m.id for m in second.get(["t1"])] == ["t1"]
    assert not store.data_dir.exists()  # nothing of the store is on this host's disk


def test_a_closed_store_refuses_work(store: TieredStore) -> None:
    """Every call after close raises TierClosedError; close is idempotent."""
    store.close()
    store.close()
    with pytest.raises(TierClosedError):
        store.ingest([turn(1)])
    with pytest.raises(TierClosedError):
        store.search("cold", "x", 1)


def test_unknown_tier_name(store: TieredStore) -> None:
    """search names the valid tiers when given an unknown one."""
    with pytest.raises(InvalidInputError, match="hot, warm, cold"):
        store.search("lukewarm", "x", 1)  # type: ignore[arg-type]


def test_speaks_matches_a_speaker_exactly_whatever_their_name_holds(store: TieredStore) -> None:
    """LIKE wildcards, quotes, backslashes and other scripts in a name are matched literally,
    and a name that is only part of another speaker's, or a word in a content, does not count."""
    names = ["Ana_Lu 100%", 'Zoë "Z" O\\Neil', "Bartholomew"]
    store.ingest(
        [Memory(id=f"m{i}", content=f"hello {i}", speaker=n) for i, n in enumerate(names)]
        + [Memory(id="c", content='"speaker":"Bart" is not a speaker', speaker="Carla")]
    )
    for name in names:
        assert store.speaks(name)
    for absent in ("Ana_Lu 100", "AnaXLu 100%", "Zoë", "Bart", "Bartholome", "%", "_"):
        assert not store.speaks(absent), absent
    store.forget(["m2"])
    assert not store.speaks("Bartholomew")

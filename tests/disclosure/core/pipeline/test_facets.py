"""The gathering index: built at ingest, consulted for questions that ask for a kind of answer,
replaced with a memory's content, and emptied of what a forget removes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from analyzers import facets_many
from disclosure.core.controller import DisclosureController
from disclosure.core.pipeline.facets import FILE, FacetIndex, FacetWorker, Indexed
from disclosure.core.profiles import Profile, load_profile
from disclosure.service.host import service_profile
from disclosure.storage.sidetables import SqliteTables
from tests.disk_bytes import files_with
from tiers import Memory, TieredStore

TURNS = [
    {"id": "j1", "content": "Chicago was awesome, the locals were so friendly!", "speaker": "John",
     "session_id": "s1"},
    {"id": "j2", "content": "Seattle is one of my favourite spots to explore.", "speaker": "John",
     "session_id": "s2"},
    {"id": "j3", "content": "Hey Tim, long time no see! How are you?", "speaker": "John",
     "session_id": "s2"},
    {"id": "t1", "content": "I went to London a few years ago with my family.", "speaker": "Tim",
     "session_id": "s3"},
]  # fmt: skip


def index_at(path: Path) -> FacetIndex:
    return FacetIndex(SqliteTables(path / FILE, _schema(), "the gathering index"))


def _schema() -> str:
    from disclosure.core.pipeline.facets import PG_SCHEMA

    return PG_SCHEMA + ";\n"


def test_put_find_of_and_forget(tmp_path: Path) -> None:
    index = index_at(tmp_path)
    try:
        index.put(
            {
                "a": Indexed("John", ("GPE:chicago", "PERSON:tim", "NOUN:local")),
                "b": Indexed("John", ("GPE:seattle", "GPE:portland")),
                "c": Indexed("Tim", ("GPE:london", "GPE2:nowhere")),
                "d": Indexed("Tim", ("PERSON:john",)),
            }
        )
        assert index.find(["GPE"]) == [("b", 2), ("a", 1), ("c", 1)]  # GPE2 is another label
        assert index.find(["GPE"], speaker="john") == [("b", 2), ("a", 1)]
        assert index.find(["PERSON"], exclude=["john", "tim"]) == []
        assert index.find(["PERSON"], exclude=["john"]) == [("a", 1)]
        assert index.of(["a", "zz"]) == {"a": {"GPE:chicago", "PERSON:tim", "NOUN:local"}}
        index.put({"a": Indexed("John", ("LOC:the lake",))})  # new content: rows replaced
        assert index.of(["a"]) == {"a": {"LOC:the lake"}}
        index.forget(["a", "b"])
        assert index.of(["a", "b", "c"]) == {"c": {"GPE:london", "GPE2:nowhere"}}
        assert index.count() == 2
    finally:
        index.close()


def _profile() -> Profile:
    data = load_profile("default").model_dump(mode="json")
    data["tiers"]["warm"]["embedder"] = "none"  # the archive's BM25 and the index suffice
    return Profile.model_validate(data)


def test_a_question_that_gathers_reaches_memories_sharing_no_word(tmp_path: Path) -> None:
    """The question "which cities" shares no word with "Chicago was awesome": the index finds
    it, as John's memory naming a place, and says so (its tier)."""
    with DisclosureController(_profile(), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        assert c.settle(timeout=120)
        assert c.facets is not None
        assert "GPE:chicago" in c.facets.of(["j1"])["j1"]
        result = c.disclose("Which cities has John been to?")
        found = {item.id: item for item in result.items}
        assert {"j1", "j2"} <= set(found)
        assert "facets" in found["j1"].tiers
        assert result.analysis.answer is not None
        assert result.analysis.answer.kind == "place"


def test_forget_leaves_nothing_of_the_memory_in_the_index(tmp_path: Path) -> None:
    with DisclosureController(_profile(), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        assert c.settle(timeout=120)
        assert files_with(tmp_path, "chicago")  # the archive and the index hold it
        c.forget(ids=["j1"])
        assert c.facets is not None
        assert c.facets.of(["j1", "j2"]).keys() == {"j2"}
        c.forget(session_id="s3")
        assert c.facets.of(["t1"]) == {}
        result = c.disclose("Which cities has John been to?")
        assert "j1" not in {item.id for item in result.items}
    assert files_with(tmp_path, "chicago") == []
    assert files_with(tmp_path, "london") == []


def test_new_content_replaces_what_a_memory_is_indexed_under(tmp_path: Path) -> None:
    with DisclosureController(_profile(), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        c.ingest([{**TURNS[0], "content": "Paris in the spring was lovely."}])
        assert c.settle(timeout=120)
        assert c.facets is not None
        facets = c.facets.of(["j1"])["j1"]
        assert "GPE:paris" in facets
        assert not any("chicago" in f for f in facets)


def test_with_deferred_enrichment_the_drain_worker_indexes(tmp_path: Path) -> None:
    """The local service acknowledges before enriching: the index is written by the drain
    worker's enrichment, before embedding, and a memory forgotten meanwhile leaves none."""
    with DisclosureController(service_profile(load_profile("default")), data_dir=tmp_path) as c:
        assert c.store.defers_enrichment
        c.ingest(TURNS)
        assert c.settle(timeout=300)
        assert c.facets is not None
        assert "GPE:london" in c.facets.of(["t1"])["t1"]
        c.forget(ids=["t1"])
        assert c.facets.of(["t1"]) == {}


def _held_reader() -> tuple[
    threading.Event, threading.Event, Callable[[Sequence[str]], list[tuple[str, ...]]]
]:
    """A reader of facets that says when it starts and waits for ``release`` to finish."""
    started, release = threading.Event(), threading.Event()

    def slow(texts: Sequence[str]) -> list[tuple[str, ...]]:
        started.set()
        release.wait(timeout=30)
        return facets_many(texts)

    return started, release, slow


def _worker_parts(tmp_path: Path) -> tuple[FacetIndex, TieredStore]:
    store = TieredStore(tmp_path / "store")
    store.ingest([Memory(id=t["id"], content=t["content"], speaker=t["speaker"]) for t in TURNS])
    return index_at(tmp_path), store


def test_pending_work_survives_a_restart(tmp_path: Path) -> None:
    """Closed before it got to them, a worker leaves the memories pending; the next resumes."""
    index, store = _worker_parts(tmp_path)
    gate = threading.Event()

    def held(texts: Sequence[str]) -> list[tuple[str, ...]]:
        gate.wait(timeout=30)
        return facets_many(texts)

    try:
        first = FacetWorker(index, store.get, held, batch=1)
        first.submit(["j1", "j2"])
        assert not first.settle(timeout=0.2)  # held: nothing indexed yet
        closing = threading.Thread(target=first.close)  # stops after the batch in hand
        closing.start()
        gate.set()
        closing.join(timeout=60)
        assert list(index.pending(10)) == ["j2"]  # what was not reached stays pending
        second = FacetWorker(index, store.get, facets_many)
        assert second.settle(timeout=120)
        second.close()
        assert "GPE:chicago" in index.of(["j1"])["j1"]
        assert "GPE:seattle" in index.of(["j2"])["j2"]
        assert index.pending(10) == {}
    finally:
        gate.set()
        index.close()
        store.close()


def test_a_memory_changed_while_indexed_is_indexed_again(tmp_path: Path) -> None:
    index, store = _worker_parts(tmp_path)
    started, release, slow = _held_reader()
    worker = FacetWorker(index, store.get, slow)
    try:
        worker.submit(["j1"])
        assert started.wait(timeout=30)  # reading Chicago's memory
        store.ingest([Memory(id="j1", content="Paris was lovely.", speaker="John")])
        worker.submit(["j1"])
        release.set()
        assert worker.settle(timeout=120)
        assert "GPE:paris" in index.of(["j1"])["j1"]
        assert not any("chicago" in f for f in index.of(["j1"])["j1"])
    finally:
        release.set()
        worker.close()
        index.close()
        store.close()


def test_a_memory_forgotten_while_indexed_leaves_nothing(tmp_path: Path) -> None:
    index, store = _worker_parts(tmp_path)
    started, release, slow = _held_reader()
    worker = FacetWorker(index, store.get, slow)
    try:
        worker.submit(["t1"])
        assert started.wait(timeout=30)
        store.forget(["t1"])
        index.forget(["t1"])  # what the controller does when the store reports a forget
        release.set()
        assert worker.settle(timeout=120)
        assert index.of(["t1"]) == {}
        assert index.pending(10) == {}
    finally:
        release.set()
        worker.close()
        index.close()
        store.close()


def test_a_failing_read_of_facets_keeps_the_work_for_the_next_ingest(tmp_path: Path) -> None:
    """The index only adds candidates: when reading facets fails, nobody waits forever (settle
    returns), the memories stay pending, and the next submit indexes them."""
    index, store = _worker_parts(tmp_path)
    calls: list[int] = []
    mended = threading.Event()  # a retry (settle wakes the worker too) waits until checked

    def flaky(texts: Sequence[str]) -> list[tuple[str, ...]]:
        calls.append(len(texts))
        if len(calls) == 1:
            raise RuntimeError("the pipeline broke")
        assert mended.wait(timeout=60)
        return facets_many(texts)

    worker = FacetWorker(index, store.get, flaky)
    try:
        worker.submit(["j1"])
        assert worker.settle(timeout=60)
        assert list(index.pending(10)) == ["j1"]
        assert index.of(["j1"]) == {}
        mended.set()
        worker.submit(["j2"])
        assert worker.settle(timeout=120)
        assert index.pending(10) == {}
        assert "GPE:chicago" in index.of(["j1"])["j1"]
        assert "GPE:seattle" in index.of(["j2"])["j2"]
    finally:
        worker.close()
        index.close()
        store.close()


def test_the_worker_runs_at_a_lower_cpu_priority(tmp_path: Path) -> None:
    """Reading facets costs as much as embedding: the worker thread yields the CPU to ingest
    and to queries (its own nice value, ``nice`` steps above the process's)."""
    import os

    index, store = _worker_parts(tmp_path)
    seen: list[int] = []

    def niceness(texts: Sequence[str]) -> list[tuple[str, ...]]:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return [() for _ in texts]

    own = os.getpriority(os.PRIO_PROCESS, 0)
    worker = FacetWorker(index, store.get, niceness, nice=5)
    try:
        worker.submit(["j1"])
        assert worker.settle(timeout=60)
        assert seen == [min(own + 5, 19)]
        assert os.getpriority(os.PRIO_PROCESS, 0) == own  # the process itself is untouched
    finally:
        worker.close()
        index.close()
        store.close()

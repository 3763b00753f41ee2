"""The pipeline's caches: TTLs, bounds, and no stale entry after a write."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import disclosure.core.pipeline.caches as caches_module
from disclosure.core.pipeline.caches import DisclosureCaches
from disclosure.core.profiles import CacheConfig, CacheLimits


def caches(tmp_path: Path, **limits: CacheLimits) -> DisclosureCaches:
    return DisclosureCaches(tmp_path / "cache", CacheConfig(**limits))


def test_values_round_trip_per_cache(tmp_path: Path) -> None:
    """A value set in a cache comes back from that cache only, and hits/misses are counted."""
    c = caches(tmp_path)
    key = c.key("index", "standard", "what did we decide?")
    c.set("index", key, [("m1", 0.9)])
    assert c.get("index", key) == [("m1", 0.9)]
    assert c.get("timeline", key) is None
    assert c.stats()["index"] == {"entries": 1, "hits": 1, "misses": 0, "evictions": 0}
    assert c.stats()["timeline"]["misses"] == 1


def test_entries_expire_after_their_ttl(tmp_path: Path) -> None:
    """An entry older than its cache's TTL is gone."""
    c = caches(tmp_path, index=CacheLimits(ttl_seconds=0.05, max_items=10))
    key = c.key("index", "q")
    c.set("index", key, "v")
    time.sleep(0.1)
    assert c.get("index", key) is None


def test_each_cache_is_bounded_oldest_first(tmp_path: Path) -> None:
    """Past max_items the oldest stored entries are evicted, in each cache."""
    c = caches(tmp_path, detail=CacheLimits(ttl_seconds=60, max_items=3))
    keys = [c.key("detail", f"m{i}") for i in range(5)]
    for i, key in enumerate(keys):
        c.set("detail", key, i)
    assert len(c.by_name["detail"]) == 3
    assert [c.get("detail", k) for k in keys] == [None, None, 2, 3, 4]


def test_a_write_makes_every_dependent_entry_unreachable(tmp_path: Path) -> None:
    """Index entries die on any write, timelines on a write to their session."""
    c = caches(tmp_path)
    index_key = c.key("index", "q")
    timeline_a = c.key("timeline", "m1", 3, session="A")
    timeline_b = c.key("timeline", "m9", 3, session="B")
    for name, key in [("index", index_key), ("timeline", timeline_a), ("timeline", timeline_b)]:
        c.set(name, key, "cached")
    c.invalidate(ids=["m1"], sessions=["A"])
    assert c.get("index", c.key("index", "q")) is None
    assert c.get("timeline", c.key("timeline", "m1", 3, session="A")) is None
    assert c.get("timeline", c.key("timeline", "m9", 3, session="B")) == "cached"


def test_a_detail_is_rendered_once_until_its_memory_or_session_changes(tmp_path: Path) -> None:
    """detail() renders on a miss only; a write to the memory deletes its entry from disk, a
    write to its session makes it unreachable, a write elsewhere changes nothing."""
    c = caches(tmp_path)
    renders: list[str] = []

    def show(memory_id: str, session: str, style: str = "plain") -> str:
        def render() -> str:
            renders.append(memory_id)
            return f"{memory_id} v{len(renders)}"

        return c.detail(memory_id, session, style, render)

    assert show("m1", "A") == show("m1", "A") == "m1 v1"
    assert show("m2", "B") == "m2 v2"
    assert c.stats()["detail"]["hits"] == 1
    c.invalidate(ids=["m9"], sessions=["C"])
    assert (show("m1", "A"), show("m2", "B")) == ("m1 v1", "m2 v2")
    c.invalidate(ids=["m1"], sessions=["A"])
    assert len(c.by_name["detail"]) == 1  # m1's text is gone from disk, m2's stays
    assert show("m1", "A") == "m1 v3"
    c.invalidate(sessions=["B"])  # a neighbour of m2 changed
    assert show("m2", "B") == "m2 v4"
    assert show("m2", "B", style="other") == "m2 v5"


def test_generations_survive_reopening(tmp_path: Path) -> None:
    """A second process (or a restart) sees the same generations, so it cannot read stale data."""
    first = caches(tmp_path)
    first.set("index", first.key("index", "q"), "old")
    first.invalidate(ids=["m1"])
    first.close()
    second = caches(tmp_path)
    assert second.get("index", second.key("index", "q")) is None


def test_disabled_caches_store_nothing(tmp_path: Path) -> None:
    """With caches off, set is a no-op and get always misses."""
    c = DisclosureCaches(tmp_path / "cache", CacheConfig(enabled=False))
    c.set("index", "k", "v")
    assert c.get("index", "k") is None


def test_a_write_left_to_the_writer_is_read_at_once_and_lands_on_disk(tmp_path: Path) -> None:
    """``later=True``: the value is served before the writer stores it, then from the file (a
    new instance on the same directory reads it after close)."""
    c = caches(tmp_path)
    keys = [c.key("index", f"query {i}") for i in range(50)]
    for i, key in enumerate(keys):
        c.set("index", key, [(f"m{i}", 0.5)], later=True)
        assert c.get("index", key) == [(f"m{i}", 0.5)]
    c.set("timeline", keys[0], [], later=True)
    assert c.get("timeline", keys[0]) == []  # an empty timeline is a value, not a miss
    c.close()
    again = caches(tmp_path)
    assert [again.get("index", key) for key in keys] == [[(f"m{i}", 0.5)] for i in range(50)]
    assert again.get("timeline", keys[0]) == []
    again.close()


def test_a_forget_erases_the_writes_queued_before_it(tmp_path: Path) -> None:
    """Entries still queued for the writer when an erase starts do not land after it."""
    c = caches(tmp_path)
    held = threading.Event()
    assert c._writer is not None
    c._writer.submit(held.wait)  # the writer is busy: what follows stays queued
    keys = [c.key("index", f"query {i}") for i in range(20)]
    for key in keys:
        c.set("index", key, [("forgotten-id", 0.5)], later=True)
    threading.Timer(0.2, held.set).start()
    c.erase(["forgotten-id"], [])
    assert all(c.get("index", key) is None for key in keys)
    c.close()
    again = caches(tmp_path)
    assert len(again.by_name["index"]) == 0
    again.close()


def _on_disk(c: DisclosureCaches, key: str) -> object:
    return c.by_name["index"]._cache.get(key)


ENTRY = [("m1", 0.5)]


def _writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delay: float
) -> tuple[DisclosureCaches, str]:
    """Caches whose queued writes wait up to ``delay`` seconds for answers, and a key."""
    monkeypatch.setattr(caches_module, "WRITE_DELAY", delay)
    c = caches(tmp_path)
    return c, c.key("index", "a query")


def _soon(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return False


def test_queued_writes_wait_until_no_answer_is_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer does not compete with an answer: what it queued lands after the answer."""
    c, key = _writer(tmp_path, monkeypatch, 30.0)
    with c.answering():
        c.set("index", key, ENTRY, later=True)
        time.sleep(0.2)
        assert _on_disk(c, key) is None  # still queued ...
        assert c.get("index", key) == ENTRY  # ... and served from memory
    assert _soon(lambda: _on_disk(c, key) == ENTRY)
    c.close()


def test_a_long_answer_or_a_full_queue_does_not_hold_the_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, key = _writer(tmp_path, monkeypatch, 0.05)
    with c.answering():
        c.set("index", key, ENTRY, later=True)
        assert _soon(lambda: _on_disk(c, key) == ENTRY)  # the delay ran out
    monkeypatch.setattr(caches_module, "WRITE_DELAY", 30.0)
    keys = [c.key("index", f"query {i}") for i in range(caches_module.WRITE_BATCH)]
    with c.answering():
        for k in keys:
            c.set("index", k, [(k, 0.5)], later=True)
        assert _soon(lambda: all(_on_disk(c, k) == [(k, 0.5)] for k in keys))  # a full batch
    c.close()


def test_a_flush_during_an_answer_writes_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forget in another thread must not wait for the answer: flush writes the queue now."""
    c, key = _writer(tmp_path, monkeypatch, 30.0)
    with c.answering():
        c.set("index", key, ENTRY, later=True)
        started = time.monotonic()
        c.flush()
        assert time.monotonic() - started < 10.0
        assert _on_disk(c, key) == ENTRY
    c.close()

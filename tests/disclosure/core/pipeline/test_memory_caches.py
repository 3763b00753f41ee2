"""The caches of a replica (a PostgreSQL archive): in memory, with the disk caches' rules."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from disclosure.core.controller import DisclosureController
from disclosure.core.pipeline.caches import DisclosureCaches, MemoryCache
from disclosure.core.profiles import CacheConfig, CacheLimits, Profile
from tests.pg_server import unique_namespace
from tiers.config import DATABASE_URL_VARIABLE
from tiers.memory import Memory


def test_a_memory_cache_keeps_its_bound_oldest_first_and_its_ttl() -> None:
    cache = MemoryCache(CacheLimits(ttl_seconds=0.2, max_items=3))
    cache.set_many([(f"k{i}", i, None) for i in range(5)])
    assert [cache.get(f"k{i}") for i in range(5)] == [None, None, 2, 3, 4]
    assert (len(cache), cache.stats.evictions, cache.stats.hits, cache.stats.misses) == (3, 2, 3, 2)
    time.sleep(0.25)
    assert cache.get("k4") is None and len(cache) == 2  # expired: gone when read


def test_a_memory_cache_hands_out_copies_and_evicts_by_tag() -> None:
    """A caller changing what it got changes nothing stored (values are kept pickled, as on
    disk); entries set with a tag go with it."""
    cache = MemoryCache(CacheLimits(ttl_seconds=60, max_items=10))
    cache.set("a", ["m1", "m2"], tag="m1")
    cache.set("b", ["m3"], tag="m3")
    got = cache.get("a")
    got.append("changed")
    assert cache.get("a") == ["m1", "m2"]
    cache.evict("m1")
    assert cache.get("a") is None and cache.get("b") == ["m3"]


def test_caches_without_a_directory_invalidate_like_those_on_disk() -> None:
    """Generations move on a write: no entry built before it is reachable after."""
    caches = DisclosureCaches(None, CacheConfig())
    try:
        key = caches.key("index", "standard", "q")
        caches.set("index", key, "before", later=True)
        assert caches.get("index", key) == "before"
        caches.flush()
        assert caches.get("index", key) == "before"
        caches.invalidate(ids=["m1"], sessions={"s1"})
        assert caches.get("index", caches.key("index", "standard", "q")) is None
        shown = caches.detail("m1", "s1", "style", lambda: "rendered once")
        assert caches.detail("m1", "s1", "style", lambda: "rendered twice") == shown
        caches.erase(["m1"], ["s1"])
        assert caches.detail("m1", "s1", "style", lambda: "rendered again") == "rendered again"
        assert caches.stats()["detail"]["entries"] == 1
    finally:
        caches.close()


def test_a_controller_on_a_postgresql_archive_keeps_no_file(
    pg_url: str, tmp_path: Path, lean_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its caches are in memory and its store takes no lock: after ingest, disclose, show and
    feedback the data directory is as empty as it was made, and a second controller of the
    same namespace opens beside it (two replicas in one process)."""
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    directory = tmp_path / unique_namespace()
    with DisclosureController(lean_profile, data_dir=directory) as one:
        one.ingest([Memory(id="p1", content="The plum orchard lease renews in May.")])
        result = one.disclose("when does the plum orchard lease renew?")
        assert "p1" in {item.id for item in result.items}
        one.show("p1")
        one.feedback(result, "It renews in May.")
        with DisclosureController(lean_profile, data_dir=directory) as two:
            assert "May" in two.show("p1")
        assert one.caches.stats()["detail"]["entries"] == 1
        assert list(directory.iterdir()) == []


def test_disk_caches_an_earlier_replica_left_are_named_in_a_warning(
    pg_url: str,
    tmp_path: Path,
    lean_profile: Profile,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A replica of an earlier version kept its caches and use counts in the namespace's
    directory: they are neither read nor reached by a forget now, so opening it says so."""
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    directory = tmp_path / unique_namespace()
    (directory / "cache" / "detail").mkdir(parents=True)
    (directory / "warm").mkdir()
    with caplog.at_level("WARNING"), DisclosureController(lean_profile, data_dir=directory):
        pass
    warned = [r.getMessage() for r in caplog.records if "no longer uses" in r.getMessage()]
    assert len(warned) == 1 and "holds cache, warm," in warned[0]
    assert (directory / "cache" / "detail").is_dir()  # left to the operator

"""The hot tier: a bounded working set, blended search, active order, eviction, thread safety."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.tiers.contract import BASE, TierContract, corpus
from tiers.config import HotConfig, HotWeights
from tiers.errors import TierClosedError
from tiers.hot import HotTier
from tiers.memory import Memory


def turn(i: int, text: str = "", *, hours: float = 0.0, importance: float = 0.5) -> Memory:
    return Memory(
        id=f"h{i}",
        content=text or f"turn {i} about topic{i}",
        timestamp=BASE + timedelta(hours=hours, seconds=i),
        importance=importance,
    )


class TestHotContract(TierContract):
    @pytest.fixture
    def tier(self) -> Iterator[HotTier]:
        hot = HotTier(HotConfig())
        yield hot
        hot.close()


def test_capacity_evicts_and_returns_the_least_active() -> None:
    """Beyond max_items the lowest active score leaves, and admit returns it."""
    hot = HotTier(HotConfig(max_items=3))
    assert hot.admit([turn(0), turn(1), turn(2)]) == []
    evicted = hot.admit([turn(3)])
    assert [m.id for m in evicted] == ["h0"]
    assert sorted(hot.ids()) == ["h1", "h2", "h3"]


def test_importance_protects_from_capacity_eviction() -> None:
    """An important memory outlives a slightly newer unimportant one."""
    hot = HotTier(HotConfig(max_items=2))
    hot.admit([turn(0, importance=1.0), turn(1, importance=0.0)])
    evicted = hot.admit([turn(2)])
    assert [m.id for m in evicted] == ["h1"]


def test_age_window_evicts_from_the_latest_memory() -> None:
    """With clock=latest, a memory 25 hours older than the newest leaves the set."""
    hot = HotTier(HotConfig(max_age_hours=24))
    hot.admit([turn(0, hours=0), turn(1, hours=2)])
    evicted = hot.admit([turn(2, hours=25.5)])
    assert [m.id for m in evicted] == ["h0"]
    assert sorted(hot.ids()) == ["h1", "h2"]


def test_memories_older_than_the_window_are_not_admitted() -> None:
    """Importing old history after newer turns leaves the old turns out of the hot set."""
    hot = HotTier(HotConfig(max_age_hours=1))
    hot.admit([turn(1, hours=10)])
    assert hot.admit([turn(0, hours=0)]) == []
    assert hot.ids() == ["h1"]


def test_wall_clock_and_explicit_now() -> None:
    """With clock=wall, ages count from the system clock; an explicit now overrides it."""
    hot = HotTier(HotConfig(clock="wall"))
    now = datetime.now(UTC)
    hot.admit([turn(0).replace(timestamp=now - timedelta(days=30))])
    assert hot.count() == 0  # a month old by the wall clock: never admitted
    hot.admit([turn(1).replace(timestamp=now)])
    assert [h.id for h in hot.active(5)] == ["h1"]
    assert hot.active(5, now=now + timedelta(days=3)) == []
    expired = hot.expire(now=now + timedelta(days=3))
    assert [m.id for m in expired] == ["h1"] and hot.count() == 0


def test_active_order_is_recent_and_important_first() -> None:
    """Active order ranks by recency and importance; scores lie in [0, 1], descending."""
    hot = HotTier(HotConfig(recency_half_life_hours=1))
    hot.admit([turn(0, hours=0, importance=0.5), turn(1, hours=3, importance=0.5)])
    hot.admit([turn(2, hours=2.9, importance=1.0)])
    order = hot.active(3)
    assert [h.id for h in order] == ["h2", "h1", "h0"]
    assert all(0.0 <= h.score <= 1.0 for h in order)
    assert [h.rank for h in order] == [0, 1, 2]
    assert len(hot.active(1)) == 1


def test_search_only_returns_lexical_matches_and_blends() -> None:
    """search ignores non-matching memories; with equal match, the more recent one wins."""
    hot = HotTier(HotConfig())
    hot.admit(
        [
            turn(0, "the deploy script failed on staging", hours=0),
            turn(1, "lunch menu for friday", hours=1),
            turn(2, "the deploy script failed on staging", hours=2),
        ]
    )
    hits = hot.search("deploy script staging", k=5)
    assert [h.id for h in hits] == ["h2", "h0"]
    assert hits[0].score > hits[1].score
    assert hot.search("kubernetes", k=5) == []


def test_lexical_only_weights_give_bm25_coverage() -> None:
    """With only the lexical weight, a memory holding every query word once scores 1.0."""
    hot = HotTier(HotConfig(weights=HotWeights(lexical=1, recency=0, importance=0)))
    fillers = [turn(i, f"standup note {i}") for i in range(2, 10)]
    hot.admit([turn(0, "postgres migration plan"), turn(1, "redis cache eviction"), *fillers])
    hits = hot.search("postgres migration", k=2)
    assert [h.id for h in hits] == ["h0"]
    assert hits[0].score == pytest.approx(1.0)
    partial = hot.search("postgres kafka", k=2)
    assert 0.0 < partial[0].score < 0.7


def test_touch_keeps_a_used_memory_in_the_window() -> None:
    """A touched memory's anchor moves to now, so age no longer evicts it."""
    hot = HotTier(HotConfig(max_age_hours=2))
    hot.admit([turn(0, hours=0)])
    hot.touch(["h0"], now=BASE + timedelta(hours=1.5))
    assert hot.admit([turn(1, hours=3)]) == []
    assert sorted(hot.ids()) == ["h0", "h1"]


def test_promotion_anchor_admits_an_old_memory() -> None:
    """admit(anchor=now) lets an old memory (a promoted cold hit) join the working set."""
    hot = HotTier(HotConfig(max_age_hours=1))
    hot.admit([turn(5, hours=48)])
    assert hot.admit([turn(0, hours=0)], anchor=BASE + timedelta(hours=48)) == []
    assert "h0" in hot


def test_replacing_with_an_out_of_window_version_drops_the_old_one() -> None:
    """A replacement too old for the window still removes the stale version."""
    hot = HotTier(HotConfig(max_age_hours=1))
    hot.admit([turn(0, "old text", hours=10)])
    hot.admit([turn(9, hours=10.5)])
    hot.admit([turn(0, "new text", hours=0).replace(timestamp=BASE)])
    assert "h0" not in hot


def test_closed_tier_raises() -> None:
    """Using a closed hot tier raises TierClosedError."""
    hot = HotTier()
    hot.close()
    with pytest.raises(TierClosedError):
        hot.search("x", k=1)


def test_concurrent_admits_and_searches_stay_consistent() -> None:
    """Threads admitting and searching at once never break the capacity bound or raise."""
    hot = HotTier(HotConfig(max_items=50))
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for i in range(200):
                hot.admit([turn(offset + i, f"worker {offset} says hello number {i}")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(200):
                hits = hot.search("hello worker", k=5)
                assert len(hits) <= 5
                hot.active(3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n * 1000,)) for n in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert hot.count() == 50
    assert len({m.id for m in hot.get(hot.ids())}) == 50


def test_corpus_search_scores_are_bounded() -> None:
    """Every blended score lies in [0, 1], whatever the weights."""
    hot = HotTier(HotConfig(weights=HotWeights(lexical=5, recency=0, importance=3)))
    hot.admit([m.replace(importance=1.0) for m in corpus()])
    assert all(0.0 <= h.score <= 1.0 for h in hot.search("invoice invoice totals", k=6))

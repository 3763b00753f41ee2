"""Reciprocal rank fusion, the session boost and priors."""

from __future__ import annotations

import pytest

from disclosure.core.pipeline.fusion import fuse
from tiers.memory import Memory, ScoredMemory


def hit(memory_id: str, tier: str, score: float, rank: int, session: str = "s") -> ScoredMemory:
    return ScoredMemory(
        Memory(id=memory_id, content=f"text {memory_id}", session_id=session), tier, score, rank
    )


def ranked(tier: str, *ids: str, session: str = "s") -> list[ScoredMemory]:
    return [hit(i, tier, 1.0 - 0.1 * r, r, session) for r, i in enumerate(ids)]


def test_rrf_values_and_dedup_by_id() -> None:
    """fused = sum of weight / (k + rank + 1); a memory found twice counts once, from both."""
    out = fuse(
        {"warm": ranked("warm", "a", "b"), "cold": ranked("cold", "b", "c")},
        weights={"warm": 1.0, "cold": 1.0},
        k=60,
    )
    values = {c.id: c.fused for c in out}
    assert values["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert values["a"] == pytest.approx(1 / 61)
    assert [c.id for c in out] == ["b", "a", "c"]
    b = out[0]
    assert b.tiers == ("warm", "cold") and b.tier == "cold"  # cold ranked it first


def test_weights_and_zero_weights() -> None:
    """A heavier list leads; a list of weight 0 is ignored."""
    out = fuse(
        {"warm": ranked("warm", "a"), "cold": ranked("cold", "b")},
        weights={"warm": 2.0, "cold": 1.0},
        k=60,
    )
    assert [c.id for c in out] == ["a", "b"]
    out = fuse(
        {"warm": ranked("warm", "a"), "cold": ranked("cold", "b")},
        weights={"warm": 0.0, "cold": 1.0},
        k=60,
    )
    assert [c.id for c in out] == ["b"]


def test_confidence_is_the_best_tier_score_not_the_rrf_value() -> None:
    """score is the best normalised tier score, so thresholds read the same across tiers."""
    out = fuse(
        {"warm": [hit("a", "warm", 0.41, 0)], "cold": [hit("a", "cold", 0.93, 3)]}, weights={}, k=60
    )
    assert out[0].score == pytest.approx(0.93)


def test_session_boost_lifts_the_session_of_the_best_hits() -> None:
    """Memories sharing a session with the top hits overtake an equal-ranked loner."""
    lists = {
        "warm": [
            hit("a1", "warm", 0.9, 0, "A"),
            hit("b1", "warm", 0.8, 1, "B"),
            hit("a2", "warm", 0.7, 2, "A"),
            hit("b2", "warm", 0.6, 3, "B"),
            hit("a3", "warm", 0.5, 4, "A"),
        ],
        "cold": [
            hit("b1", "cold", 0.9, 0, "B"),
            hit("a1", "cold", 0.8, 1, "A"),
            hit("c1", "cold", 0.7, 2, "C"),
        ],
    }
    plain = [c.id for c in fuse(lists, weights={}, k=60)]
    boosted = [c.id for c in fuse(lists, weights={}, k=60, session_boost=2.0, session_boost_top=4)]
    assert plain.index("c1") < plain.index("a3")
    assert boosted.index("a3") < boosted.index("c1")


def test_priors_multiply_fused_values() -> None:
    """A prior below 1 sinks a memory under one it used to beat."""
    lists = {"warm": ranked("warm", "a", "b")}
    assert [c.id for c in fuse(lists, weights={}, k=60, priors={"a": 0.5})] == ["b", "a"]

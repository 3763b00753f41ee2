"""The use model: candidates' score-curve signals, and the logistic regression on them."""

from __future__ import annotations

import pytest

from disclosure.core.pipeline.fusion import Candidate
from disclosure.core.pipeline.usemodel import UseModel, UseSignals, fit, signals_of
from tiers.memory import Memory


def candidate(memory_id: str, fused: float, score: float, *tiers: str) -> Candidate:
    memory = Memory(id=memory_id, content=f"memory {memory_id}")
    return Candidate(memory=memory, score=score, fused=fused, tier=tiers[0], tiers=tiers)


def test_signals_place_each_candidate_on_its_query_curve() -> None:
    """Rank, fused value over the leader's, the best and the leader's confidence, agreement."""
    found = signals_of(
        [
            candidate("a", 0.04, 0.6, "warm", "cold"),
            candidate("b", 0.02, 0.9, "cold"),
            candidate("c", 0.01, 0.3, "warm"),
        ]
    )
    assert found["a"] == UseSignals(0, 1.0, 0.6, 0.9, 0.6, True)
    assert found["b"] == UseSignals(1, 0.5, 0.9, 0.9, 0.6, False)
    assert found["c"].relative == pytest.approx(0.25) and found["c"].rank == 2
    assert signals_of([]) == {}


def test_the_vector_scales_rank_and_confidence() -> None:
    """Bias 1; log rank scaled to [0, 1] (capped at 200); confidence over the best one."""
    vector = UseSignals(200, 0.5, 0.3, 0.6, 0.9, True).vector()
    assert vector == pytest.approx((1.0, 1.0, 0.5, 0.3, 0.5, 1.0, 0.9))
    assert UseSignals(1000, 0.5, 0.3, 0.0, 0.9, False).vector()[1:5] == pytest.approx(
        (1.0, 0.5, 0.3, 0.0)
    )


def test_fit_learns_that_the_top_of_the_curve_is_used() -> None:
    """Replies that use ranks 0-1 of 20: high odds at the top, low at the tail; the threshold
    keeps the one and drops the other."""
    rows = [
        (UseSignals(rank, 1 / (1 + 0.05 * rank), 0.8 - 0.03 * rank, 0.8, 0.8, rank < 3), rank < 2)
        for _ in range(30)
        for rank in range(20)
    ]
    model = UseModel(fit(rows, l2=1.0), threshold=0.05)
    top, tail = rows[0][0], rows[15][0]
    assert model.probability(top) > 0.5 > 0.05 > model.probability(tail)
    assert model.keeps(top) and not model.keeps(tail)


def test_a_stronger_ridge_penalty_keeps_the_model_cautious() -> None:
    """With few rows, a large l2 pulls every probability toward one half of the odds scale."""
    rows = [(UseSignals(r, 1 / (1 + r), 0.5, 0.5, 0.5, False), r == 0) for r in range(5)]
    tail = rows[4][0]
    loose = UseModel(fit(rows, l2=0.01), 0.5).probability(tail)
    tight = UseModel(fit(rows, l2=100.0), 0.5).probability(tail)
    assert loose < tight < 0.5


def test_a_row_weighing_k_counts_as_k_copies_and_a_warm_start_converges_alike() -> None:
    """Weights are repetitions (what inverse propensity weighting relies on); starting from a
    previous fit lands on the same weights as starting from zero."""
    rows = [
        (UseSignals(rank, 1 / (1 + 0.1 * rank), 0.8 - 0.03 * rank, 0.8, 0.8, rank < 2), used)
        for rank in range(12)
        for used in (rank < 2, rank in (3, 9))
    ]
    weights = [4.0 if s.rank >= 6 else 1.0 for s, _ in rows]
    repeated = [row for row, w in zip(rows, weights, strict=True) for _ in range(int(w))]
    weighted = fit(rows, l2=1.0, weights=weights)
    assert weighted == pytest.approx(fit(repeated, l2=1.0), abs=1e-6)
    assert weighted != pytest.approx(fit(rows, l2=1.0), abs=1e-3)
    start = fit(rows[:12], l2=1.0)
    assert fit(rows, l2=1.0, weights=weights, start=start) == pytest.approx(weighted, abs=1e-5)

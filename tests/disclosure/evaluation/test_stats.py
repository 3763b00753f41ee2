"""Paired statistics on known inputs: McNemar's exact test and the seeded bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from disclosure.evaluation import QuestionRecord, bootstrap_mean, compare, mcnemar_exact


def test_mcnemar_exact_against_hand_computations() -> None:
    """b=1, c=6: 2 * (C(7,0) + C(7,1)) / 2^7 = 16/128; b=c: p = 1; no discordance: p = 1."""
    assert mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # b=2, c=10: 2 * (1 + 12 + 66) / 4096
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)


def test_mcnemar_exact_stays_exact_for_thousands_of_pairs() -> None:
    """Large counts (2^n beyond float range) still give a probability in (0, 1]."""
    p = mcnemar_exact(600, 700)
    assert 0 < p < 0.01
    assert mcnemar_exact(1000, 1000) == 1.0
    assert mcnemar_exact(1200, 1300) > 0


def test_mcnemar_rejects_negative_counts() -> None:
    """Counts are counts."""
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 2)


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    """Same seed, same interval; the interval contains the sample mean; other seed differs."""
    values = np.random.default_rng(3).normal(0.1, 1.0, size=200)
    first = bootstrap_mean(values, resamples=500, seed=11)
    assert first == bootstrap_mean(values, resamples=500, seed=11)
    assert first.low < first.estimate < first.high
    assert first.estimate == pytest.approx(values.mean())
    assert first != bootstrap_mean(values, resamples=500, seed=12)


def test_bootstrap_of_a_constant_has_zero_width() -> None:
    """Every resample of identical values has the same mean."""
    interval = bootstrap_mean([0.25] * 30, resamples=200)
    assert (interval.low, interval.estimate, interval.high) == pytest.approx((0.25, 0.25, 0.25))
    assert interval.excludes_zero()


def test_cluster_bootstrap_is_wider_when_clusters_differ() -> None:
    """Two clusters with different means: resampling clusters widens the interval."""
    values = [0.0] * 50 + [1.0] * 50
    groups = ["a"] * 50 + ["b"] * 50
    plain = bootstrap_mean(values, resamples=400, seed=1)
    clustered = bootstrap_mean(values, groups=groups, resamples=400, seed=1)
    assert clustered.high - clustered.low > 2 * (plain.high - plain.low)
    with pytest.raises(ValueError, match="group labels"):
        bootstrap_mean(values, groups=["a"], resamples=10)


def rec(
    system: str, qid: str, found: int, gold: int, tokens: int, conv: str = "c"
) -> QuestionRecord:
    ids = tuple(f"g{i}" for i in range(gold))
    return QuestionRecord(
        system=system, question_id=qid, conversation_id=conv, category=None, level=None,
        analyzer_level=None, budget=None, result_budget=0, tokens_used=tokens,
        context_tokens=tokens, full_tokens=1000, items=1, gold=ids, found=ids[:found],
        gold_items=0, latency_ms=1.0,
    )  # fmt: skip


def test_compare_pairs_questions_and_counts_discordant_hits() -> None:
    """B hits q2 and q3 where A misses; A hits q1 where B misses: b=1, c=2, p = 2*(1+3)/8 = 1."""
    a = [rec("A", "q1", 1, 1, 100), rec("A", "q2", 0, 1, 100), rec("A", "q3", 0, 2, 100),
         rec("A", "q4", 0, 0, 100)]  # fmt: skip
    b = [rec("B", "q3", 2, 2, 50), rec("B", "q2", 1, 1, 50), rec("B", "q1", 0, 1, 50),
         rec("B", "q4", 0, 0, 50)]  # fmt: skip
    c = compare(a, b, resamples=300, seed=5)
    assert (c.reference, c.system, c.questions, c.scored) == ("A", "B", 4, 3)
    assert (c.ref_only_hits, c.system_only_hits) == (1, 2)
    assert c.mcnemar_p == pytest.approx(1.0)
    assert c.recall_diff is not None and c.recall_diff.estimate == pytest.approx((1 + 1 - 1) / 3)
    assert c.tokens_diff.estimate == pytest.approx(-50)
    assert c.tokens_diff.low == pytest.approx(-50) and c.tokens_diff.high == pytest.approx(-50)
    assert compare(a, b, resamples=300, seed=5) == c


def test_compare_needs_shared_questions() -> None:
    """Systems that answered different questions cannot be paired."""
    with pytest.raises(ValueError, match="share no questions"):
        compare([rec("A", "q1", 1, 1, 1)], [rec("B", "q2", 1, 1, 1)])

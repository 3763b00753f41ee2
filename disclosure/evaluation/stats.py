"""Paired comparison of two systems on the same questions: bootstrap intervals and McNemar's test.

Both systems answer the same questions, so every comparison works on per-question differences
(system minus reference). The bootstrap resamples those differences:

* ``unit="questions"`` (default): questions with replacement. The interval is conditional on
  these conversations: it says how sure we are about *this* data's questions, the usual reading
  for a fixed benchmark, and the only workable one when there are few conversations (LoCoMo's
  dev split has five: 5**5 resamples of conversations hold only 126 distinct mixes, too coarse
  for a 95% percentile interval).
* ``unit="conversations"``: a two-stage (cluster) bootstrap, conversations with replacement and
  then questions within each, for data with many conversations, where questions of one
  conversation are correlated (same store, same people) and the first unit would be too narrow.

The hit-rate difference is tested with McNemar's exact test (two-sided binomial test on the
discordant pairs), which needs no resampling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from disclosure.evaluation.metrics import QuestionRecord

BootstrapUnit = Literal["questions", "conversations"]
DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a percentile bootstrap interval at ``confidence``."""

    estimate: float
    low: float
    high: float
    confidence: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bootstrap_mean(
    values: Sequence[float] | npt.NDArray[np.float64],
    *,
    groups: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int | Sequence[int] = 0,
) -> Interval:
    """The mean of ``values`` with a percentile bootstrap interval.

    With ``groups`` (one label per value) the bootstrap is two-stage: groups with replacement,
    then values within each drawn group.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("cannot bootstrap zero values")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    if groups is None:
        means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    else:
        means = _cluster_means(data, groups, resamples, rng)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(data.mean()), float(low), float(high), confidence)


def _cluster_means(
    data: npt.NDArray[np.float64], groups: Sequence[str], resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    if len(groups) != data.size:
        raise ValueError(f"{len(groups)} group labels for {data.size} values")
    labels = list(dict.fromkeys(groups))
    members = [np.flatnonzero(np.asarray(groups) == label) for label in labels]
    means = np.empty(resamples)
    for r in range(resamples):
        picked = rng.integers(0, len(members), size=len(members))
        drawn = [data[rng.choice(members[g], size=members[g].size)] for g in picked]
        means[r] = np.concatenate(drawn).mean()
    return means


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``.

    Under the null each discordant pair goes either way with probability 1/2, so the p-value is
    ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``; 1.0 when ``b + c == 0``.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / (1 << n))  # int / int: exact even past float range


@dataclass(frozen=True, slots=True)
class Comparison:
    """``system`` against ``reference`` on the questions both answered (system minus reference)."""

    reference: str
    system: str
    questions: int
    scored: int
    recall_diff: Interval | None
    hit_rate_diff: Interval | None
    tokens_diff: Interval
    ref_only_hits: int
    system_only_hits: int
    mcnemar_p: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(
    reference: Sequence[QuestionRecord],
    other: Sequence[QuestionRecord],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    unit: BootstrapUnit = "questions",
    seed: int = 0,
) -> Comparison:
    """Paired differences on the questions both record sets hold (matched by question id)."""
    by_id = {r.question_id: r for r in reference}
    pairs = [(by_id[r.question_id], r) for r in other if r.question_id in by_id]
    if not pairs:
        raise ValueError("the two systems share no questions")
    scored = [(a, b) for a, b in pairs if a.scored and b.scored]

    def interval(
        values: list[float], paired: list[tuple[QuestionRecord, QuestionRecord]], salt: int
    ) -> Interval:
        groups = [a.conversation_id for a, _ in paired] if unit == "conversations" else None
        return bootstrap_mean(
            values, groups=groups, resamples=resamples, confidence=confidence, seed=[seed, salt]
        )

    tokens = interval([b.context_tokens - a.context_tokens for a, b in pairs], pairs, 0)
    recall = hit = None
    p_value = None
    ref_only = sys_only = 0
    if scored:
        recall = interval([(b.recall or 0.0) - (a.recall or 0.0) for a, b in scored], scored, 1)
        hit = interval([float(bool(b.hit)) - float(bool(a.hit)) for a, b in scored], scored, 2)
        ref_only = sum(bool(a.hit) and not b.hit for a, b in scored)
        sys_only = sum(bool(b.hit) and not a.hit for a, b in scored)
        p_value = mcnemar_exact(ref_only, sys_only)
    return Comparison(
        reference=reference[0].system,
        system=other[0].system,
        questions=len(pairs),
        scored=len(scored),
        recall_diff=recall,
        hit_rate_diff=hit,
        tokens_diff=tokens,
        ref_only_hits=ref_only,
        system_only_hits=sys_only,
        mcnemar_p=p_value,
    )

"""The use model: how likely a reply is to use a candidate, learned from feedback.

Every candidate of a disclosure carries retrieval *signals* that say where it sat on its query's
score curve: its rank in the fused order, its fused value relative to the leader's, its
confidence (the best normalised tier score) absolute and relative to the best confidence among
the candidates, whether two or more lists found it, and the leader's confidence. Feedback labels
each disclosed candidate used or not; a logistic regression on those signals (ridge-penalised,
fit by iteratively reweighted least squares) predicts the chance that a reply uses a candidate.

The signals are the per-query part: a question with one sharp match has a steep curve, and its
second-tier candidates get low odds; a question whose candidates all look alike keeps going
deeper. What the model learns is which of those shapes the replies of this profile and level
actually used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from disclosure.core.pipeline.fusion import Candidate

RANK_SCALE = 200  # ranks past this read as this one
_ITERATIONS = 25
_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class UseSignals:
    """Where one candidate sat on its query's score curve."""

    rank: int  # 0-based position in the fused order
    relative: float  # fused value / the leader's fused value
    score: float  # confidence: the best normalised tier score
    top_score: float  # the best confidence among the query's candidates
    lead_score: float  # the leader's (rank 0) confidence
    agree: bool  # two or more lists found it

    def vector(self) -> tuple[float, ...]:
        """The model's inputs: a bias, then the signals on comparable scales."""
        rank = math.log1p(min(self.rank, RANK_SCALE)) / math.log1p(RANK_SCALE)
        share = self.score / self.top_score if self.top_score > 0 else 0.0
        return (1.0, rank, self.relative, self.score, share, float(self.agree), self.lead_score)


def signals_of(candidates: Sequence[Candidate]) -> dict[str, UseSignals]:
    """Each candidate's signals, by id (``candidates`` best first, as fused)."""
    if not candidates:
        return {}
    best = candidates[0].fused
    top = max(c.score for c in candidates)
    lead = candidates[0].score
    return {
        c.id: UseSignals(
            rank=rank,
            relative=c.fused / best if best > 0 else 0.0,
            score=c.score,
            top_score=top,
            lead_score=lead,
            agree=len(c.tiers) >= 2,
        )
        for rank, c in enumerate(candidates)
    }


@dataclass(frozen=True, slots=True)
class UseModel:
    """A fitted use model and the chance of use a candidate needs to be disclosed."""

    weights: tuple[float, ...]
    threshold: float

    def probability(self, signals: UseSignals) -> float:
        """The predicted chance that a reply uses a candidate with these signals."""
        z = sum(w * x for w, x in zip(self.weights, signals.vector(), strict=True))
        return 1.0 / (1.0 + math.exp(-min(max(z, -50.0), 50.0)))

    def keeps(self, signals: UseSignals) -> bool:
        return self.probability(signals) >= self.threshold


def fit(
    rows: Sequence[tuple[UseSignals, bool]],
    *,
    l2: float,
    weights: Sequence[float] | None = None,
    start: Sequence[float] | None = None,
) -> tuple[float, ...]:
    """Logistic-regression weights for ``rows`` (signals, used), with ridge penalty ``l2``;
    ``weights``: each row's weight (1 each by default); ``start``: where the fit begins."""
    x = np.array([s.vector() for s, _ in rows], dtype=float)
    y = np.array([used for _, used in rows], dtype=float)
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
    return fit_arrays(x, y, w, l2=l2, start=start)


def fit_arrays(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, *, l2: float, start: Sequence[float] | None = None
) -> tuple[float, ...]:
    """:func:`fit` on ready arrays: ``x`` the rows' vectors, ``y`` 1 where used, ``w`` weights.
    Weighted iteratively reweighted least squares; a ``start`` near the answer (the previous
    fit, one reply ago) converges in a few steps."""
    b = np.zeros(x.shape[1]) if start is None else np.array(start, dtype=float)
    penalty = l2 * np.eye(x.shape[1])
    for _ in range(_ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ b, -50.0, 50.0)))
        hessian = x.T @ (x * (w * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, x.T @ (w * (p - y)) + l2 * b)
        b -= step
        if float(np.abs(step).max()) < _TOLERANCE:
            break
    return tuple(float(v) for v in b)

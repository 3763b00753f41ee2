"""Spending by need: how many tokens a question gets, from what it asks and what the first pass
found.

After the candidates are ranked (each with its chance of being evidence,
:mod:`disclosure.core.pipeline.ranking`) and ordered as they will be packed (chance per
token^``fusion.token_cost``), a small fitted model predicts, for each budget of a grid, the share
of what this question's candidates can give that the budget would hold: from the shape of the
chances (a sure leader, a flat curve, how much chance lies beyond the budget, how many sessions
the best candidates come from) and from the question (it asks for a set or a count, for a kind
of thing, names a time, names one participant or two). The budget is the one of the grid that
gives the most predicted share less its price, ``budget.need.price`` of the share for every
thousand tokens, never above the level's ceiling: tokens go on while another thousand is
predicted to add at least that share of what the question can get. One price for every
question spends where it pays, which a uniform budget cannot: a question with a sure answer
stops after a few hundred tokens; one whose candidates look alike, or that gathers ("which
cities has John been to?"), goes on.

The model is a logistic regression over :data:`FEATURES` (weights in ``budget.need.weights``,
fitted on LoCoMo's and LongMemEval's dev questions and checked across them by
``python -m benchmarks.fit_spend``). Its inputs are computed here, by :func:`need_features`, for
the product and the fitting alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from analyzers import QueryAnalysis

# What a packed line costs beyond its content (citation, speaker, newline), what a new session
# and day heading costs, and the context's own frame: as the full_content formatter writes them.
# The model was fitted with base64url citation codes; a line cited in digits is about two tokens
# cheaper, so a budget holds a little more than the model counts.
ITEM_OVERHEAD = 11
HEADER = 12
FRAME = 25
GRID = (100, 150, 200, 300, 400, 500, 650, 800, 1000, 1300, 1600, 2000, 2600, 3200, 4000)
GATHERING = frozenset({"place", "person", "thing", "event"})
_TOP = 10
FEATURES = (
    "share",
    "rest",
    "budget",
    "leader",
    "runner_up",
    "mass",
    "sessions",
    "enumeration",
    "gathers",
    "temporal",
    "one_named",
    "two_named",
    "words",
    "enumeration_budget",
    "gathers_budget",
    "temporal_budget",
    "one_named_budget",
    "two_named_budget",
    "words_budget",
    "leader_budget",
    "mass_budget",
)
_QUERY = ("enumeration", "gathers", "temporal", "one_named", "two_named", "words")
# A question that reckons time across events: a duration or a count of time units, the time
# between or since events, or their order.
_RECKONS = re.compile(
    r"\bhow (?:many|much) (?:days|weeks|months|years|hours|minutes|time)\b"
    r"|\bhow long\b"
    r"|\b(?:days|weeks|months|years) (?:had |have )?(?:passed|elapsed|between)\b"
    r"|\bin what order\b|\bthe order of\b|\bhappened first\b"
    r"|\bwhich (?:\w+ ){0,3}(?:first|earlier|later|last)\b",
    re.IGNORECASE,
)


def reckons(query: str) -> bool:
    """Whether ``query`` reckons time across events ("how many days passed between the move and
    the wedding?", "how long had I been ...", "in what order ..."): its answer needs every event
    it reckons with, often from different sessions, so it is worth more tokens."""
    return _RECKONS.search(query) is not None


def question_price(query: str, price: float, reckoning_price: float) -> float:
    """The price ``query`` is spent at: ``price``, times ``reckoning_price`` for a question
    that reckons time across events (:func:`reckons`)."""
    return price * reckoning_price if reckoning_price < 1.0 and reckons(query) else price


@dataclass(frozen=True, slots=True)
class Shape:
    """What the model reads of one question: its candidates' chances in packing order, what
    each costs packed (content tokens plus the line's overhead), their (session, day) groups,
    and the question's own signals."""

    chances: np.ndarray
    costs: np.ndarray
    groups: Sequence[tuple[str, str]]
    query: Mapping[str, float]


def query_signals(analysis: QueryAnalysis, named: int) -> dict[str, float]:
    """The question's part of the model's inputs."""
    signals = analysis.detected_signals
    answer = analysis.answer
    return {
        "enumeration": float("enumeration" in signals),
        "gathers": float(answer is not None and answer.kind in GATHERING),
        "temporal": float(any(s.startswith("temporal:") for s in signals)),
        "one_named": float(named == 1),
        "two_named": float(named >= 2),
        "words": min(analysis.word_count, 30) / 30,
    }


def packed_shares(shape: Shape, grid: Sequence[int]) -> np.ndarray:
    """For each budget of ``grid``: the share of all the candidates' chance held by those that
    fit in it, packed in order (a line that does not fit is passed over, as rendering does)."""
    total = float(shape.chances.sum())
    out = np.ones(len(grid))
    if total <= 0:
        return out
    for n, budget in enumerate(grid):
        used, held, seen = FRAME, 0.0, set()
        for chance, cost, group in zip(shape.chances, shape.costs, shape.groups, strict=True):
            extra = cost + (HEADER if group not in seen else 0)
            if used + extra <= budget:
                used += extra
                held += chance
                seen.add(group)
        out[n] = held / total
    return out


def need_features(shape: Shape, grid: Sequence[int]) -> np.ndarray:
    """One row of :data:`FEATURES` per budget of ``grid``."""
    chances = shape.chances
    top = np.sort(chances)[::-1]
    leader = float(top[0]) if len(top) else 0.0
    runner = float(top[1]) / leader if len(top) > 1 and leader > 0 else 0.0
    mass = math.log(float(chances.sum()) + 1e-3)
    sessions = len({g[0] for g in list(shape.groups)[:_TOP]}) / _TOP
    lead = math.log(leader + 1e-3)
    shares = packed_shares(shape, grid)
    rows = []
    for budget, share in zip(grid, shares, strict=True):
        scale = math.log(max(budget, 1) / 1000)
        q = shape.query
        rows.append(
            [share, math.log(1 - share + 0.01), scale, lead, runner, mass, sessions]
            + [q.get(k, 0.0) for k in _QUERY]
            + [q.get(k, 0.0) * scale for k in _QUERY]
            + [lead * scale, mass * scale]
        )
    return np.array(rows, dtype=float).reshape(len(grid), len(FEATURES))


def predict(shape: Shape, grid: Sequence[int], weights: Mapping[str, float]) -> np.ndarray:
    """The predicted share of what the candidates can give, at each budget of ``grid``."""
    coef = np.array([weights.get(name, 0.0) for name in FEATURES])
    logits = need_features(shape, grid) @ coef + weights.get("bias", 0.0)
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0))), dtype=float)


@dataclass(frozen=True, slots=True)
class Need:
    """The budget a question needs, and why."""

    tokens: int
    predicted: float
    reason: str


def choose(predicted: np.ndarray, grid: Sequence[int], price: float) -> int:
    """The index of the budget of ``grid`` with the most predicted share less ``price`` per
    thousand tokens (the smaller budget on a tie)."""
    value = predicted - price * np.asarray(grid, dtype=float) / 1000
    return int(np.argmax(value))


def decide(shape: Shape, weights: Mapping[str, float], *, price: float, ceiling: int) -> Need:
    """The budget of the grid (up to ``ceiling``, the last) worth its price (see the module)."""
    if ceiling < 1:  # a prompt that fills the model's window leaves nothing to spend
        return Need(0, 0.0, f"by need: nothing to spend (the ceiling is {ceiling} tokens)")
    grid = [b for b in GRID if b < ceiling] + [ceiling]
    predicted = predict(shape, grid, weights)
    n = choose(predicted, grid, price)
    more = float(predicted[n + 1] - predicted[n]) if n + 1 < len(grid) else None
    return Need(grid[n], float(predicted[n]), _reason(shape, grid, n, predicted, more))


def _reason(
    shape: Shape, grid: Sequence[int], n: int, predicted: np.ndarray, more: float | None
) -> str:
    chances = shape.chances
    top = np.sort(chances)[::-1]
    leader = float(top[0]) if len(top) else 0.0
    runner = float(top[1]) if len(top) > 1 else 0.0
    sessions = len({g[0] for g in list(shape.groups)[:_TOP]})
    asks = [
        label
        for key, label in (
            ("enumeration", "asks for a set or a count"),
            ("gathers", "asks for a kind of thing"),
            ("temporal", "names a time"),
        )
        if shape.query.get(key)
    ]
    tokens = grid[n]
    then = f"{grid[n + 1]} would add {more:+.0%}" if more is not None else "the ceiling: no more"
    return (
        f"by need: {tokens} tokens, predicted to hold {float(predicted[n]):.0%} of what the "
        f"{len(chances)} candidates can give ({then}); leader {leader:.0%} likely, runner-up "
        f"{runner:.0%}, best {min(len(chances), _TOP)} from {sessions} "
        f"session{'s' if sessions != 1 else ''}"
        + (f"; the question {', '.join(asks)}" if asks else "")
    )

"""The adaptive token budget: seed 002's AdaptiveTokenBudget, taken further.

For each query the budget is::

    start   = budget.default x (0.5 + complexity)                 seed 002's complexity scaling
    learned = start x factor[profile, level]                        from usage (1.0 at first)
    ceiling = min(level.max_tokens, budget.max,
                  (context_window - prompt_tokens) x (1 - reply_share))
    budget  = clamp(learned, budget.min, ceiling)                   (the ceiling wins over the min)

The factor learns *how deep the used items sat*. After the model answers, ``feedback`` reports
which disclosed items the reply used; the depth of a reply is the token position (in packing
order, the context's frame included) where its deepest used item ends. In units of the start
budget, each reply gives ``x = depth / start``, seen only because it was at most
``t = budget / start``, the factor that reply was given: a useful item past the cut is never
seen, so the depths a shrunken budget reports are *truncated*. The factor is the ``quantile`` of
``x`` estimated with the Lynden-Bell product-limit estimator, which accounts for that truncation
(each depth counts against the replies whose budgets could have shown it), plus a ``margin``.

Truncation alone would still let a budget shrink forever: what lies past every recent budget is
unseen. So once a level has learned, every ``probe_every``-th budget of that level is a *probe*:
``max(1, factor x probe_scale)`` times the start, which shows what the unshrunk budget would
have shown (or, once the factor has grown, what sits just past the learned cut). Where useful
items keep sitting past the cut, probes see them and the factor grows; where they sit shallow,
it shrinks. Replies that used nothing carry no depth. Observations persist in SQLite in the data
directory, per profile and level; probe counters are per process.

Measured on LoCoMo (``configs/ab/adaptive-budget.yaml``): the depths at which evidence sits
there are heavy-tailed and do not depend on complexity, so the defaults trade little: see the
README's Results.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzers import DisclosureLevel
from disclosure.profiles import BudgetConfig, LevelConfig
from tiers.errors import InvalidInputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    profile TEXT NOT NULL,
    level TEXT NOT NULL,
    at REAL NOT NULL,
    budget INTEGER NOT NULL,
    tokens_used INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    used INTEGER NOT NULL,
    disclosed INTEGER NOT NULL,
    cut INTEGER NOT NULL,
    factor REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_by_level ON usage (profile, level, seq);
"""


@dataclass(frozen=True, slots=True)
class Usage:
    """What one reply used of one disclosure.

    ``start``: the disclosure's start budget (``default x (0.5 + complexity)``, see
    :meth:`AdaptiveBudget.start`); without it the factor in force when recorded stands in.
    """

    budget: int
    tokens_used: int
    depth: int  # token position (packing order) where the deepest used item ends; 0 if none
    used: int  # items the reply used
    disclosed: int  # items disclosed
    cut: bool  # candidates were left out for lack of budget
    start: float | None = None


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """The budget for one query, and why."""

    tokens: int
    factor: float
    observations: int
    ceiling: int
    reason: str
    probe: bool = False


class AdaptiveBudget:
    """Budgets per profile and level, learned from what replies used."""

    def __init__(self, config: BudgetConfig, *, profile: str, path: Path | None = None) -> None:
        self.config = config
        self.profile = profile
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._factors: dict[DisclosureLevel, tuple[float, int]] = {}
        self._decisions: dict[DisclosureLevel, int] = {}

    def start(self, complexity: float) -> float:
        """Seed 002's budget before learning: ``default x (0.5 + complexity)``."""
        return self.config.default * (0.5 + complexity)

    def decide(
        self,
        level: DisclosureLevel,
        level_config: LevelConfig,
        complexity: float,
        *,
        override: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> BudgetDecision:
        """The budget for a query of this level and complexity."""
        ceiling = self._ceiling(level_config, context_window, prompt_tokens)
        if override is not None:
            if override <= 0:
                raise InvalidInputError(f"budget must be a positive token count, not {override}")
            return BudgetDecision(override, 1.0, 0, ceiling, f"budget {override} given by caller")
        if not self.config.adaptive:
            tokens = max(min(level_config.max_tokens, ceiling), 0)
            return BudgetDecision(tokens, 1.0, 0, ceiling, f"fixed: level ceiling {ceiling}")
        factor, observations = self.factor(level)
        probe = self._is_probe(level, observations)
        used = self._probe_factor(factor) if probe else factor
        start = self.start(complexity)
        tokens = min(max(round(start * used), self.config.min), ceiling)
        learned = f"learned x{factor:.2f} from {observations} replies"
        if probe:
            learned += f"; probe x{used:.2f} to see past the learned cut"
        reason = (
            f"{self.config.default} x (0.5 + complexity {complexity:.2f}) = {start:.0f}; "
            f"{learned}; ceiling {ceiling} -> {tokens}"
        )
        return BudgetDecision(tokens, used, observations, ceiling, reason, probe)

    def record(self, level: DisclosureLevel, usage: Usage) -> None:
        """Remember one reply's usage and relearn the level's factor."""
        if usage.start is not None and usage.start > 0:
            factor = usage.budget / usage.start  # the factor this reply's budget amounted to
        else:
            factor, _ = self.factor(level)
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO usage (profile, level, at, budget, tokens_used, depth, used,"
                " disclosed, cut, factor) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    self.profile,
                    level.value,
                    time.time(),
                    usage.budget,
                    usage.tokens_used,
                    usage.depth,
                    usage.used,
                    usage.disclosed,
                    int(usage.cut),
                    factor,
                ),
            )
            self._db.execute(
                "DELETE FROM usage WHERE profile = ? AND level = ? AND seq NOT IN (SELECT seq "
                "FROM usage WHERE profile = ? AND level = ? ORDER BY seq DESC LIMIT ?)",
                (
                    self.profile,
                    level.value,
                    self.profile,
                    level.value,
                    self.config.learning.history,
                ),
            )
            self._factors.pop(level, None)

    def factor(self, level: DisclosureLevel) -> tuple[float, int]:
        """The learned factor for ``level`` and how many observations it rests on."""
        with self._lock:
            if level not in self._factors:
                self._factors[level] = self._learn(self._observations(level))
            return self._factors[level]

    def history(self, level: DisclosureLevel) -> list[tuple[Usage, float]]:
        """The kept observations of ``level``, oldest first, with each one's factor."""
        with self._lock:
            return self._observations(level)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _ceiling(
        self, level_config: LevelConfig, context_window: int | None, prompt_tokens: int
    ) -> int:
        window = context_window or self.config.context_window
        room = math.floor(max(window - prompt_tokens, 0) * (1 - self.config.reply_share))
        return min(level_config.max_tokens, self.config.max, room)

    def _is_probe(self, level: DisclosureLevel, observations: int) -> bool:
        """Every ``probe_every``-th budget of a level that has started learning."""
        every = self.config.learning.probe_every
        if not every or observations < self.config.learning.min_observations:
            return False
        with self._lock:
            count = self._decisions.get(level, 0) + 1
            self._decisions[level] = count
        return count % every == 0

    def _probe_factor(self, factor: float) -> float:
        rules = self.config.learning
        return min(max(1.0, factor * rules.probe_scale), rules.max_factor)

    def _observations(self, level: DisclosureLevel) -> list[tuple[Usage, float]]:
        rows = self._db.execute(
            "SELECT budget, tokens_used, depth, used, disclosed, cut, factor FROM usage "
            "WHERE profile = ? AND level = ? ORDER BY seq",
            (self.profile, level.value),
        ).fetchall()
        return [(Usage(b, t, d, u, n, bool(c)), f) for b, t, d, u, n, c, f in rows]

    def _learn(self, observations: Sequence[tuple[Usage, float]]) -> tuple[float, int]:
        rules = self.config.learning
        seen = [
            (min(f * u.depth / u.budget, f), f)
            for u, f in observations
            if u.used and u.budget > 0 and u.depth > 0
        ]
        if len(seen) < rules.min_observations:
            return 1.0, len(observations)
        factor = truncated_quantile(seen, rules.quantile) * (1 + rules.margin)
        return min(max(factor, rules.min_factor), rules.max_factor), len(observations)


def truncated_quantile(observations: Sequence[tuple[float, float]], q: float) -> float:
    """The ``q`` quantile of ``x`` from ``(x, t)`` pairs, each seen only because ``x <= t``.

    The Lynden-Bell product-limit estimator for right-truncated data: going down from the
    largest ``x``, the share of mass at or below each value is multiplied by
    ``1 - d / n``, where ``d`` pairs sit at that value and ``n`` pairs could have been seen
    there (``x <= value <= t``). Returns the smallest seen value with at least ``q`` of the mass
    (relative to what the largest ``t`` could show) at or below it: the smallest cut that keeps
    at least ``q``. With every ``t`` equal it is the plain empirical quantile.
    """
    values = sorted({x for x, _ in observations}, reverse=True)
    share = 1.0  # estimated P(X <= value), relative to the largest window
    for value in values:
        at_risk = sum(1 for x, t in observations if x <= value <= t)
        here = sum(1 for x, _ in observations if x == value)
        share *= 1 - here / at_risk
        if share < q:
            return value
    return values[-1]

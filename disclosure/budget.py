"""The adaptive token budget: seed 002's AdaptiveTokenBudget, taken further.

For each query the budget is::

    start   = budget.default x (0.5 + complexity)                 seed 002's complexity scaling
    learned = start x factor[profile, level]                        from usage (1.0 at first)
    ceiling = min(level.max_tokens, budget.max,
                  (context_window - prompt_tokens) x (1 - reply_share))
    budget  = clamp(learned, budget.min, ceiling)                   (the ceiling wins over the min)

The factor learns *how deep the used items sat*. After the model answers, ``feedback`` reports
which disclosed items the reply used; the depth of a reply is the token position (in rank order)
where its deepest used item ends. Each observation says which factor would have sufficed::

    needed = factor_then x depth / budget_then

and the new factor is the ``quantile`` of ``needed`` over the last ``history`` observations, plus a
``margin``. So budgets shrink where used items sit shallow. When at least ``grow_share`` of the
replies used an item that ended past ``near_cut`` of a context that had to leave candidates out,
the useful item probably sat just past the cut, and the factor grows by ``grow_factor`` instead.
Replies that used nothing carry no depth and do not move the factor. Observations persist in
SQLite in the data directory, per profile and level.
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
    """What one reply used of one disclosure."""

    budget: int
    tokens_used: int
    depth: int  # token position (rank order) where the deepest used item ends; 0 if none
    used: int  # items the reply used
    disclosed: int  # items disclosed
    cut: bool  # candidates were left out for lack of budget


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """The budget for one query, and why."""

    tokens: int
    factor: float
    observations: int
    ceiling: int
    reason: str


class AdaptiveBudget:
    """Budgets per profile and level, learned from what replies used."""

    def __init__(self, config: BudgetConfig, *, profile: str, path: Path | None = None) -> None:
        self.config = config
        self.profile = profile
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._factors: dict[DisclosureLevel, tuple[float, int]] = {}

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
        start = self.config.default * (0.5 + complexity)
        tokens = min(max(round(start * factor), self.config.min), ceiling)
        reason = (
            f"{self.config.default} x (0.5 + complexity {complexity:.2f}) = {start:.0f}; "
            f"learned x{factor:.2f} from {observations} replies; ceiling {ceiling} -> {tokens}"
        )
        return BudgetDecision(tokens, factor, observations, ceiling, reason)

    def record(self, level: DisclosureLevel, usage: Usage) -> None:
        """Remember one reply's usage and relearn the level's factor."""
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
        """The kept observations of ``level``, oldest first, with the factor in force then."""
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

    def _observations(self, level: DisclosureLevel) -> list[tuple[Usage, float]]:
        rows = self._db.execute(
            "SELECT budget, tokens_used, depth, used, disclosed, cut, factor FROM usage "
            "WHERE profile = ? AND level = ? ORDER BY seq",
            (self.profile, level.value),
        ).fetchall()
        return [(Usage(b, t, d, u, n, bool(c)), f) for b, t, d, u, n, c, f in rows]

    def _learn(self, observations: Sequence[tuple[Usage, float]]) -> tuple[float, int]:
        rules = self.config.learning
        used = [(u, f) for u, f in observations if u.used and u.budget > 0]
        if len(used) < rules.min_observations:
            return 1.0, len(observations)
        needed = sorted(f * u.depth / u.budget for u, f in used)
        factor = _quantile(needed, rules.quantile) * (1 + rules.margin)
        near_cut = sum(1 for u, _ in used if u.cut and u.depth >= rules.near_cut * u.tokens_used)
        if near_cut / len(used) >= rules.grow_share:
            mean_factor = sum(f for _, f in used) / len(used)
            factor = max(factor, mean_factor * rules.grow_factor)
        return min(max(factor, rules.min_factor), rules.max_factor), len(observations)


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values."""
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    weight = position - low
    return sorted_values[low] * (1 - weight) + sorted_values[high] * weight

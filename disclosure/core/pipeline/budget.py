"""The adaptive budget: how many tokens a query gets, and later which candidates, learned from
what replies use.

For each query::

    start   = budget.default x (0.5 + complexity)       more for a more complex query
    ceiling = min(level.max_tokens, budget.max,
                  (context_window - prompt_tokens) x (1 - reply_share))

Until the profile has learned, its budget is ``clamp(start, budget.min, ceiling)`` (the ceiling
wins over the min) and the level's own cut-off (``cutoff``, ``cutoff_floor``) decides which
candidates go in. After the model answers, ``feedback`` labels every disclosed candidate used or
not, with the signals that say where it sat on its query's score curve
(``disclosure.core.pipeline.usemodel``). Once ``min_observations`` of the kept replies used
something, a *use model* fit on them decides instead: a candidate is disclosed when its
predicted chance of use is at least ``threshold``, whatever its rank, and the budget is the
ceiling (the model, not a token count, sets the length; the ceiling still bounds it). A
question with one sharp match stops early; one whose candidates look alike goes deeper, as far
as the replies showed that such candidates get used.

One model serves every level (``pool_levels``): the signals describe a score curve, which reads
the same at any level, and pooling learns from every reply instead of a level's share of them.
It learns from the last ``history`` replies, refit after each one from the previous fit.

What the learned cut leaves out, no reply can use, so the labels alone would only ever confirm
it. Every ``probe_every``-th learned budget is a *probe*: the level's unlearned cut-off at the
ceiling, whose replies label the candidates the model would have dropped. Those labels come from
one budget in ``probe_every``, the kept candidates' from every budget, so a probe's dropped
candidates weigh ``probe_every`` in the fit (inverse propensity weighting): the model sees what
it cuts at the rate it occurs, not at the rate probes happen to show it.

The replies and their candidates' signals (no content) persist in SQLite, per profile, in the
data directory or in the file ``learning.path`` names; several data directories (a deployment's
users or namespaces) sharing one file learn from each other's replies. With a PostgreSQL archive
the same tables live in the namespace's schema (:data:`PG_SCHEMA`), so every replica serving the
namespace learns from the replies all of them saw. Probe counters are per process.

What it saves, and at what cost in recall, is measured by ``disclosure eval --experiment
configs/ab/adaptive-budget.yaml``; docs/results.md gives the figures.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np

from analyzers import DisclosureLevel
from disclosure.core.pipeline.usemodel import UseModel, UseSignals, fit_arrays
from disclosure.core.profiles import BudgetConfig, LevelConfig
from disclosure.storage.sidefiles import open_or_rebuild
from tiers.errors import InvalidInputError
from tiers.sql import SideDb

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    profile TEXT NOT NULL,
    level TEXT NOT NULL,
    at REAL NOT NULL,
    budget INTEGER NOT NULL,
    tokens_used INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    used INTEGER NOT NULL,
    disclosed INTEGER NOT NULL,
    cut INTEGER NOT NULL  -- Usage.truncated (the column keeps its first name for stored files)
);
CREATE INDEX IF NOT EXISTS replies_by_level ON replies (profile, level, seq);
CREATE INDEX IF NOT EXISTS replies_by_profile ON replies (profile, seq);
CREATE TABLE IF NOT EXISTS signals (
    reply INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    relative REAL NOT NULL,
    score REAL NOT NULL,
    top_score REAL NOT NULL,
    lead_score REAL NOT NULL,
    agree INTEGER NOT NULL,
    used INTEGER NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0
);
CREATE INDEX IF NOT EXISTS signals_by_reply ON signals (reply);
"""
# The same tables in PostgreSQL (the archive's schema of the namespace).
PG_SCHEMA = (
    _SCHEMA.replace("seq INTEGER PRIMARY KEY AUTOINCREMENT", "seq BIGSERIAL PRIMARY KEY")
    .replace(" REAL ", " DOUBLE PRECISION ")
    .replace("reply INTEGER", "reply BIGINT")
)
REPLY_FIELDS = ("profile", "level", "at", "budget", "tokens_used", "depth", "used", "disclosed",
                "cut")  # fmt: skip
SIGNAL_FIELDS = ("rank", "relative", "score", "top_score", "lead_score", "agree", "used", "weight")
_POOLED = "*"  # the scope of a use model shared by every level
_WIDTH = len(UseSignals(0, 1.0, 0.0, 0.0, 0.0, False).vector())  # the model's inputs


@dataclass(frozen=True, slots=True)
class Usage:
    """What one reply used of one disclosure.

    ``signals``: each disclosed candidate's signals and whether the reply used it (items named
    by id, or brought back by "tell me more", are no candidates and carry none). ``probe``: the
    disclosure was a probe (the level's own cut-off shown in place of the learned cut).
    """

    budget: int
    tokens_used: int
    depth: int  # token position (packing order) where the deepest used item ends; 0 if none
    used: int  # items the reply used
    disclosed: int  # items disclosed
    truncated: bool  # the formatter left candidates out (or cut one short) for lack of budget
    signals: tuple[tuple[UseSignals, bool], ...] = ()
    probe: bool = False


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """The budget for one query, and why. ``use_model``: the learned model that picks the
    candidates (None: the level's own cut-off does). ``by_need``: the budget is the starting
    one, which spending by need (``disclosure.core.pipeline.spend``) may set from the candidates."""

    tokens: int
    ceiling: int
    reason: str
    observations: int = 0
    probe: bool = False
    use_model: UseModel | None = None
    by_need: bool = False


@dataclass
class _Reply:
    """One kept reply, ready for fitting: its candidates' vectors, labels and weights."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray

    @property
    def used_something(self) -> bool:
        return bool(self.y.any())


@dataclass
class _Scope:
    """The replies one use model learns from (a level's, or every level's when pooled), as
    read so far from the store, and the model fit on them."""

    replies: deque[_Reply] = field(default_factory=deque)
    last_seq: int = 0
    model: UseModel | None = None
    weights: tuple[float, ...] | None = None  # the last fit: where the next one starts
    stale: bool = True


class AdaptiveBudget:
    """Budgets and learned cuts per profile (and level, unless pooled), from what replies used.

    The store may be shared: several budgets (namespaces, processes) writing one file each
    read the others' replies before they decide."""

    def __init__(
        self,
        config: BudgetConfig,
        *,
        profile: str,
        path: Path | None = None,
        db: SideDb | None = None,
    ) -> None:
        """``path``: the SQLite file of the history (None: in memory); ``db``: a database that
        already holds :data:`PG_SCHEMA`'s tables instead (the PostgreSQL archive's, shared by
        every replica)."""
        self.config = config
        self.profile = profile
        self._lock = threading.Lock()
        self._db: SideDb
        if db is not None:
            self._db = db
        elif path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = open_or_rebuild(path, lambda: self._open(path))
        else:
            self._db = self._open(None)
        self._scopes: dict[str, _Scope] = {}
        self._decisions: dict[str, int] = {}

    def _open(self, path: Path | None) -> SideDb:
        """The history file, checked (a damaged one raises sqlite3.DatabaseError: the history
        is advisory, so the caller moves it aside and starts a new one)."""
        db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False, timeout=30)
        try:
            if path is not None:
                db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            self._db = db
            self._migrate()
            db.execute("SELECT count(*) FROM replies").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def start(self, complexity: float) -> float:
        """The budget before learning: ``default x (0.5 + complexity)``."""
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
            return BudgetDecision(override, ceiling, f"budget {override} given by caller")
        if not self.config.adaptive:
            tokens = max(min(level_config.max_tokens, ceiling), 0)
            return BudgetDecision(tokens, ceiling, f"fixed: level ceiling {ceiling}")
        start = self.start(complexity)
        formula = f"{self.config.default} x (0.5 + complexity {complexity:.2f}) = {start:.0f}"
        model, observations = self.model(level)
        if model is None:
            tokens = min(max(round(start), self.config.min), ceiling)
            told = "not learned yet" if self.config.learning.enabled else "learning off"
            reason = f"{formula}; {told} ({observations} replies); ceiling {ceiling} -> {tokens}"
            need = self.config.need.enabled
            if need and level is DisclosureLevel.COMPREHENSIVE:  # asked for breadth: the overview
                need, reason = False, f"{reason}; comprehensive: not spent by need"
            return BudgetDecision(tokens, ceiling, reason, observations, by_need=need)
        if self._is_probe(level):
            reason = (
                f"probe: the level's own cut-off at the ceiling {ceiling}, to see what the "
                f"learned cut leaves out ({observations} replies)"
            )
            return BudgetDecision(ceiling, ceiling, reason, observations, probe=True)
        reason = (
            f"learned cut from {observations} replies: candidates at least "
            f"{model.threshold:.1%} likely to be used, within the ceiling {ceiling}"
        )
        return BudgetDecision(ceiling, ceiling, reason, observations, use_model=model)

    def record(self, level: DisclosureLevel, usage: Usage) -> None:
        """Remember one reply's usage; the use model relearns before the next decision.

        A probe's candidates that the learned cut would have left out are seen only on probes,
        one budget in ``probe_every``: they count ``probe_every`` times (inverse propensity
        weighting), so the model learns their use at its true rate, not at the rate probes
        happen to show them."""
        model = self.model(level)[0] if usage.probe else None
        every = float(self.config.learning.probe_every)
        rows = [
            (s, used, every if model is not None and not model.keeps(s) else 1.0)
            for s, used in usage.signals
        ]
        with self._lock, self._db:
            reply = self._db.execute(
                "INSERT INTO replies (profile, level, at, budget, tokens_used, depth, used,"
                " disclosed, cut) VALUES (?,?,?,?,?,?,?,?,?) RETURNING seq",
                (self.profile, level.value, time.time(), usage.budget, usage.tokens_used,
                 usage.depth, usage.used, usage.disclosed, int(usage.truncated)),
            ).fetchone()[0]  # fmt: skip
            self._db.executemany(
                "INSERT INTO signals (reply, rank, relative, score, top_score, lead_score,"
                " agree, used, weight) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (reply, s.rank, s.relative, s.score, s.top_score, s.lead_score,
                     int(s.agree), int(used), weight)
                    for s, used, weight in rows
                ],
            )  # fmt: skip
            self._forget_old(level)

    def model(self, level: DisclosureLevel) -> tuple[UseModel | None, int]:
        """The use model that decides for ``level`` (None until enough replies used
        something, or with learning off) and how many replies it learns from."""
        with self._lock:
            scope = self._sync(level)
            if scope.stale:
                scope.model = self._learn(scope)
                scope.stale = False
            return scope.model, len(scope.replies)

    def history(self, level: DisclosureLevel) -> list[Usage]:
        """The kept replies ``level`` learns from, oldest first, with their candidates'
        signals (every level's when pooled)."""
        with self._lock:
            return self._history(level)

    def export_replies(self) -> list[dict[str, Any]]:
        """Every kept reply of every profile sharing this history, oldest first, with its
        candidates' signals (for export)."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT seq, {', '.join(REPLY_FIELDS)} FROM replies ORDER BY seq"
            ).fetchall()
            signals: dict[int, list[list[Any]]] = {}
            for reply, *values in self._db.execute(
                f"SELECT reply, {', '.join(SIGNAL_FIELDS)} FROM signals ORDER BY reply, rank"
            ):
                signals.setdefault(reply, []).append(values)
        return [
            {**dict(zip(REPLY_FIELDS, values, strict=True)), "signals": signals.get(seq, [])}
            for seq, *values in rows
        ]

    def import_replies(self, replies: Sequence[Mapping[str, Any]]) -> int:
        """Append exported replies (skipping any already here exactly); how many were added.
        The oldest beyond ``learning.history`` are dropped as usual."""
        present = {
            json.dumps(r, sort_keys=True) for r in self.export_replies()
        }  # exact duplicates: a second import of the same file adds nothing
        added = 0
        with self._lock, self._db:
            for reply in replies:
                if json.dumps(dict(reply), sort_keys=True) in present:
                    continue
                marks = ", ".join("?" * len(REPLY_FIELDS))
                seq = self._db.execute(  # RETURNING: SQLite and PostgreSQL alike
                    f"INSERT INTO replies ({', '.join(REPLY_FIELDS)}) VALUES ({marks})"
                    " RETURNING seq",
                    tuple(reply[f] for f in REPLY_FIELDS),
                ).fetchone()[0]
                self._db.executemany(
                    f"INSERT INTO signals (reply, {', '.join(SIGNAL_FIELDS)}) "
                    f"VALUES (?, {', '.join('?' * len(SIGNAL_FIELDS))})",
                    [(seq, *row) for row in reply["signals"]],
                )
                added += 1
            for level in DisclosureLevel:
                self._forget_old(level)
        return added

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _scope_of(self, level: DisclosureLevel) -> str:
        return _POOLED if self.config.learning.pool_levels else level.value

    def _where(self, level: DisclosureLevel) -> tuple[str, tuple[str, ...]]:
        """The SQL condition (on ``replies``) and arguments of ``level``'s scope."""
        if self.config.learning.pool_levels:
            return "profile = ?", (self.profile,)
        return "profile = ? AND level = ?", (self.profile, level.value)

    def _ceiling(
        self, level_config: LevelConfig, context_window: int | None, prompt_tokens: int
    ) -> int:
        window = context_window or self.config.context_window
        room = math.floor(max(window - prompt_tokens, 0) * (1 - self.config.reply_share))
        return min(level_config.max_tokens, self.config.max, room)

    def _is_probe(self, level: DisclosureLevel) -> bool:
        """Every ``probe_every``-th budget of a learned scope."""
        every = self.config.learning.probe_every
        if not every:
            return False
        key = self._scope_of(level)
        with self._lock:
            count = self._decisions.get(key, 0) + 1
            self._decisions[key] = count
        return count % every == 0

    def _migrate(self) -> None:
        """Stores written before replies were weighted: every row weighs 1."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(signals)")}
        if "weight" not in columns:
            with self._db:
                self._db.execute("ALTER TABLE signals ADD COLUMN weight REAL NOT NULL DEFAULT 1.0")

    def _forget_old(self, level: DisclosureLevel) -> None:
        where, args = self._where(level)
        kept = f"SELECT seq FROM replies WHERE {where} ORDER BY seq DESC LIMIT ?"
        old = f"SELECT seq FROM replies WHERE {where} AND seq NOT IN ({kept})"
        keep = (*args, *args, self.config.learning.history)
        self._db.execute(f"DELETE FROM signals WHERE reply IN ({old})", keep)
        self._db.execute(f"DELETE FROM replies WHERE seq IN ({old})", keep)

    def _sync(self, level: DisclosureLevel) -> _Scope:
        """``level``'s scope with every reply stored since it last looked (by this budget or
        another one sharing the store), and only the last ``history`` of them."""
        scope = self._scopes.setdefault(self._scope_of(level), _Scope())
        where, args = self._where(level)
        new = self._db.execute(
            f"SELECT seq FROM replies WHERE {where} AND seq > ? ORDER BY seq",
            (*args, scope.last_seq),
        ).fetchall()
        if not new:
            return scope
        rows: dict[int, list[tuple[UseSignals, bool, float]]] = {seq: [] for (seq,) in new}
        rows.update(self._signals(where, args, after=scope.last_seq))
        for found in rows.values():
            scope.replies.append(
                _Reply(
                    np.array([s.vector() for s, _, _ in found]).reshape(len(found), _WIDTH),
                    np.array([u for _, u, _ in found], dtype=float),
                    np.array([w for _, _, w in found], dtype=float),
                )
            )
        while len(scope.replies) > self.config.learning.history:
            scope.replies.popleft()
        scope.last_seq = new[-1][0]
        scope.stale = True
        return scope

    def _history(self, level: DisclosureLevel) -> list[Usage]:
        where, args = self._where(level)
        replies = self._db.execute(
            "SELECT seq, budget, tokens_used, depth, used, disclosed, cut FROM replies "
            f"WHERE {where} ORDER BY seq",
            args,
        ).fetchall()
        signals = self._signals(where, args)
        return [
            Usage(
                budget=b,
                tokens_used=t,
                depth=d,
                used=u,
                disclosed=n,
                truncated=bool(c),
                signals=tuple((f, used) for f, used, _ in signals.get(seq, ())),
            )
            for seq, b, t, d, u, n, c in replies
        ]

    def _signals(
        self, where: str, args: tuple[str, ...], *, after: int = 0
    ) -> dict[int, list[tuple[UseSignals, bool, float]]]:
        """The stored candidates (signals, used, weight) of the replies matching ``where`` past
        seq ``after``, by reply."""
        found: dict[int, list[tuple[UseSignals, bool, float]]] = {}
        for reply, *values, used, weight in self._db.execute(
            "SELECT s.reply, s.rank, s.relative, s.score, s.top_score, s.lead_score, s.agree, "
            f"s.used, s.weight FROM signals s JOIN replies r ON r.seq = s.reply WHERE {where} "
            "AND r.seq > ?",
            (*args, after),
        ):
            rank, relative, score, top, lead, agree = values
            signals = UseSignals(rank, relative, score, top, lead, bool(agree))
            found.setdefault(reply, []).append((signals, bool(used), weight))
        return found

    def _learn(self, scope: _Scope) -> UseModel | None:
        rules = self.config.learning
        if not rules.enabled:
            return None
        if sum(r.used_something for r in scope.replies) < rules.min_observations:
            return None
        kept = [r for r in scope.replies if len(r.y)]
        x = np.concatenate([r.x for r in kept])
        y = np.concatenate([r.y for r in kept])
        w = np.concatenate([r.w for r in kept])
        scope.weights = fit_arrays(x, y, w, l2=rules.l2, start=scope.weights)
        return UseModel(scope.weights, rules.threshold)


def usage_summary(budget: AdaptiveBudget) -> dict[str, dict[str, Any]]:
    """Per level: replies recorded, mean budget, tokens used, depth of the deepest used item,
    the share of replies that used anything, and whether the learned cut applies."""
    summary: dict[str, dict[str, Any]] = {}
    for level in DisclosureLevel:
        usages = budget.history(level)
        model, _ = budget.model(level)
        summary[level.value] = {
            "replies": len(usages),
            "mean_budget": round(fmean(u.budget for u in usages), 1) if usages else None,
            "mean_tokens_used": round(fmean(u.tokens_used for u in usages), 1) if usages else None,
            "mean_depth": round(fmean(u.depth for u in usages), 1) if usages else None,
            "used_share": round(sum(1 for u in usages if u.used) / len(usages), 3)
            if usages
            else None,
            "learned": model is not None,
        }
    return summary

"""Answers without a store: what a read of a namespace nothing was ever written to gets.

Such a read creates nothing (no directory, no open controller) and fails nothing: it answers
empty, with a warning saying why, and a disclosure still carries the level and budget the
query would get (the profile's analyzer and an unlearned adaptive budget, built once per
:class:`EmptyAnswers` and shared by its namespaces). The query checks and the analyzer's
construction live here so the controller and these answers agree on them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tiers.errors import InvalidInputError, ProfileError
from tiers.memory import as_utc

if TYPE_CHECKING:
    from analyzers import DisclosureLevel, QueryComplexityAnalyzer
    from disclosure.core.pipeline.budget import AdaptiveBudget
    from disclosure.core.profiles import Profile
    from disclosure.core.result import DisclosureResult
    from disclosure.storage.namespaces import Namespace

__all__ = [
    "MAX_QUERY_CHARS",
    "EmptyAnswers",
    "analyzer_of",
    "check_query",
    "nothing_stored",
    "user_turns",
]

MAX_QUERY_CHARS = 20_000


def nothing_stored(namespace: Namespace, *, root: object = None, first: str = "write") -> str:
    """The warning of a read of a namespace that does not exist (``root``: where it was looked
    for, when the reader chose it; ``first``: what creates one, in the reader's words)."""
    where = f" under {root}" if root is not None else ""
    return f"nothing is stored for {namespace}{where}; a namespace is created by its first {first}"


def analyzer_of(profile: Profile) -> QueryComplexityAnalyzer:
    """The profile's query analyzer (a profile naming an unknown pipeline is an error)."""
    from analyzers import QueryComplexityAnalyzer

    try:
        return QueryComplexityAnalyzer(profile.analyzer)
    except LookupError as exc:
        raise ProfileError(f"profile {profile.name!r}: analyzer: {exc}") from None


def check_query(query: object) -> str:
    """``query`` if it is a non-blank string within MAX_QUERY_CHARS, else InvalidInputError."""
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        raise InvalidInputError("query must not be empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}"
        )
    return query


def user_turns(history: Sequence[str | Mapping[str, Any]]) -> list[str]:
    """Earlier user turns, oldest first, from strings or OpenAI-style messages."""
    turns: list[str] = []
    for turn in history:
        if isinstance(turn, str):
            turns.append(turn)
        elif isinstance(turn, Mapping) and turn.get("role", "user") == "user":
            content = turn.get("content")
            if isinstance(content, str):
                turns.append(content)
    return turns


class EmptyAnswers:
    """The answers of reads of namespaces that do not exist, under one profile. Thread-safe;
    the analyzer and the budget are built on first use (a process that never sees such a read
    never pays for them, and importing this module loads neither)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._analyzer: QueryComplexityAnalyzer | None = None
        self._budget: AdaptiveBudget | None = None

    def disclose(
        self,
        query: str,
        *,
        warning: str,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        """An empty context for ``query``, with its real analysis, level and budget."""
        from analyzers import DisclosureLevel
        from disclosure.core.result import DisclosureResult

        query = check_query(query)
        started = time.perf_counter()
        analyzer, adaptive = self._parts()
        when = as_utc(now) if now is not None else datetime.now(UTC)
        analysis = analyzer.analyze(query, history=user_turns(history), now=when)
        chosen = DisclosureLevel.parse(level) if level is not None else analysis.level
        decision = adaptive.decide(
            chosen,
            self.profile.levels[chosen],
            analysis.complexity,
            override=budget,
            context_window=context_window,
            prompt_tokens=prompt_tokens,
        )
        return DisclosureResult(
            text="",
            level=chosen,
            analysis=analysis,
            budget=decision.tokens,
            tokens_used=0,
            full_history_tokens=0,
            timings_ms={"analyze": round((time.perf_counter() - started) * 1000, 3)},
            budget_reason=decision.reason,
            profile=self.profile.name,
            warnings=(warning,),
        )

    def stats(self, warning: str) -> dict[str, Any]:
        """``stats()`` of an empty store, in the controller's shape, with ``warnings``."""
        from analyzers import DisclosureLevel
        from disclosure.core.pipeline.budget import usage_summary

        _, adaptive = self._parts()
        store = dict.fromkeys(
            ("hot", "warm", "cold", "cold_only", "pending", "disk_bytes", "archive_bytes"), 0
        )
        return {
            "profile": self.profile.name,
            "data_dir": None,
            "store": store
            | {
                "cold_engine": self.profile.tiers.cold.engine,
                "warm_embedder": None,
                "total_line_tokens": 0,
            },
            "caches": {},
            "budget": {
                level.value: {"learned": False, "observations": 0} for level in DisclosureLevel
            },
            "usage": usage_summary(adaptive),
            "full_history_tokens": 0,
            "summaries": {},
            "warnings": [warning],
        }

    def close(self) -> None:
        with self._lock:
            if self._budget is not None:
                self._budget.close()
                self._budget = None

    def _parts(self) -> tuple[QueryComplexityAnalyzer, AdaptiveBudget]:
        from disclosure.core.pipeline.budget import AdaptiveBudget

        with self._lock:
            if self._analyzer is None:
                self._analyzer = analyzer_of(self.profile)
            if self._budget is None:  # in memory: it learns nothing, it only decides
                self._budget = AdaptiveBudget(self.profile.budget, profile=self.profile.name)
            return self._analyzer, self._budget

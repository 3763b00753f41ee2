"""One store's consolidation, as the controller holds it: the summaries, their search, the
consolidator, and the overview that summaries add to a disclosure."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeVar

from disclosure.consolidation.config import ConsolidationConfig
from disclosure.consolidation.consolidator import ConsolidationReport, Consolidator
from disclosure.consolidation.search import SummaryHit, SummaryIndex
from disclosure.consolidation.store import Summary, SummaryStore
from disclosure.consolidation.summarize import SummarizerFn
from disclosure.storage.sidetables import SideTables
from formatters.base import Rendered
from formatters.tokens import TokenCounter
from safeguards.filter import neutralize
from tiers.store import TieredStore

OVERVIEW_HEADER = "## Overview (consolidated summaries; cited sources hold the detail)"


@dataclass(frozen=True, slots=True)
class Overview:
    """Summaries put ahead of a disclosure's detail: their text, tokens and ids."""

    text: str
    tokens: int
    summaries: tuple[str, ...]


class Hit(Protocol):
    """An index line of a search: the session it belongs to is all collapsing needs."""

    @property
    def session_id(self) -> str: ...


H = TypeVar("H", bound=Hit)


@dataclass(frozen=True)
class CollapsedSession:
    """Several hits of one consolidated session, shown as the session's summary line."""

    summary: Summary
    hits: tuple[Hit, ...] = field(default_factory=tuple)


class Consolidation:
    """Summaries of one namespace. Thread-safe."""

    def __init__(
        self,
        data_dir: Path,
        store: TieredStore,
        config: ConsolidationConfig,
        *,
        citation_prefix: str,
        summarizer: SummarizerFn | None = None,
        tables: SideTables | None = None,
        redact_secrets: bool = False,
    ) -> None:
        """``tables``: where the summaries live when not in ``data_dir`` (the namespace's
        PostgreSQL schema, shared by every replica); ``redact_secrets``: summaries are written
        with their secrets replaced (see :class:`SummaryStore`)."""
        self.config = config
        self.summaries = SummaryStore(data_dir, tables=tables, redact_secrets=redact_secrets)
        self.index = SummaryIndex(self.summaries, store.tokenizer)
        self.consolidator = Consolidator(
            store,
            self.summaries,
            config,
            citation_prefix=citation_prefix,
            summarizer=summarizer,
        )

    def run(
        self, *, include_working_set: bool = False, now: datetime | None = None
    ) -> ConsolidationReport:
        return self.consolidator.run(include_working_set=include_working_set, now=now)

    def run_if_due(self, now: datetime | None = None) -> ConsolidationReport | None:
        """Run when a profile trigger fires (and something is waiting); else None."""
        fired = self.consolidator.due(now)
        if fired is None:
            return None
        return self.consolidator.run(now=now, trigger=fired)

    def search(self, query: str, k: int = 10) -> list[SummaryHit]:
        return self.index.search(query, k)

    def get(self, summary_id: str) -> Summary | None:
        return self.summaries.get(summary_id)

    def citing(self, memory_id: str) -> list[Summary]:
        return self.summaries.citing(memory_id)

    def of_session(self, session_id: str) -> list[Summary]:
        return self.summaries.of_session(session_id)

    def serves(self, level: str) -> bool:
        return self.config.serve.enabled and level in self.config.serve.levels

    def overview(self, query: str, budget: int, counter: TokenCounter) -> Overview | None:
        """The best-matching topic summaries' paragraphs, within ``max_share`` of ``budget``
        (whole paragraphs only; None when nothing matches or nothing fits)."""
        serve = self.config.serve
        limit = int(budget * serve.max_share)
        hits = [h for h in self.search(query, serve.max_summaries) if h.score >= serve.min_score]
        if not hits or limit <= 0:
            return None
        lines = [OVERVIEW_HEADER]
        used: list[str] = []
        for hit in hits:
            safe, _ = neutralize(hit.summary.paragraph)
            candidate = [*lines, f"- {_lead(hit.summary)}{safe}"]
            if counter("\n".join(candidate) + "\n\n") > limit:
                continue
            lines, used = candidate, [*used, hit.summary.id]
        if not used:
            return None
        text = "\n".join(lines) + "\n\n"
        return Overview(text, counter(text), tuple(used))

    def collapse(self, hits: Sequence[H]) -> list[H | CollapsedSession]:
        """``hits`` in order, where a consolidated session has ``collapse_min`` or more of them
        shown once, as its session summary (at its best hit's place) with those hits."""
        by_session: dict[str, list[H]] = {}
        for hit in hits:
            by_session.setdefault(hit.session_id, []).append(hit)
        lines: dict[str, Summary] = {}
        for session, found in by_session.items():
            if len(found) >= self.config.serve.collapse_min:
                summaries = self.of_session(session)
                if summaries and summaries[0].kind == "session":
                    lines[session] = summaries[0]
        out: list[H | CollapsedSession] = []
        for hit in hits:
            if hit.session_id not in lines:
                out.append(hit)
            elif hit is by_session[hit.session_id][0]:  # the session's best hit: its place
                out.append(
                    CollapsedSession(lines[hit.session_id], tuple(by_session[hit.session_id]))
                )
        return out

    def stats(self) -> dict[str, int]:
        return {**self.summaries.count(), "waiting": self.consolidator.waiting()}

    def forgotten(self, ids: Sequence[str], sessions: Sequence[str]) -> int:
        return self.consolidator.forgotten(ids, sessions)

    def close(self) -> None:
        self.summaries.close()


def _lead(summary: Summary) -> str:
    day = f"{summary.start.day} {summary.start:%b %Y}"
    return f"{summary.session_id}, {day}: "


def with_overview(
    rendered: Rendered, overview: Overview | None, budget: int, counter: TokenCounter
) -> Rendered:
    """``rendered`` with ``overview`` ahead of it, recounted; as it was if it would not fit."""
    if overview is None:
        return rendered
    text = overview.text + rendered.text
    tokens = counter(text)
    if tokens > budget:
        return rendered
    return dataclasses.replace(rendered, text=text, tokens=tokens)

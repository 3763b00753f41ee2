"""Consolidation: memories that left the working set become long-term summaries.

A run finds the archived memories outside the hot working set that no summary covers yet (or
whose content changed since), and rebuilds each session they belong to: its memories outside
the working set split into topics (:mod:`.grouping`), one summary per topic and one for the
session, each at three detail levels (:mod:`.summarize`), linked to their sources. The sources
stay in the archive, untouched and citable. Summary ids derive from the session and the topic's
first memory, and the text from the memories alone, so re-running changes nothing.

Forgetting a memory rebuilds the summaries built on it from what remains (or removes them), so
nothing forgotten survives in a summary.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from disclosure.consolidation.config import ConsolidationConfig
from disclosure.consolidation.grouping import split_topics
from disclosure.consolidation.store import Summary, SummaryStore
from disclosure.consolidation.summarize import (
    PLUGIN_ERRORS,
    Extractive,
    OpenAISummarizer,
    SummarizerFn,
    SummaryText,
    apply_plugin,
    head_of,
)
from formatters.citations import format_citation
from tiers.cold import content_sha
from tiers.memory import Memory
from tiers.store import TieredStore

log = logging.getLogger(__name__)

LAST_RUN = "last_run_us"


@dataclass(frozen=True)
class ConsolidationReport:
    """What one run did: sessions rebuilt, summaries written / unchanged / removed, memories
    newly covered, and why it ran (``trigger``: on demand, or which trigger fired)."""

    sessions: tuple[str, ...] = ()
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    memories: int = 0
    trigger: str = "on demand"
    warnings: tuple[str, ...] = field(default_factory=tuple)


class Consolidator:
    """Builds and maintains the summaries of one store. Thread-safe (one run at a time)."""

    def __init__(
        self,
        store: TieredStore,
        summaries: SummaryStore,
        config: ConsolidationConfig,
        *,
        citation_prefix: str = "mem",
        summarizer: SummarizerFn | None = None,
    ) -> None:
        self.store = store
        self.summaries = summaries
        self.config = config
        self.prefix = citation_prefix
        self.extractive = Extractive(config.detail, store.tokenizer)
        self.plugin: SummarizerFn | None = summarizer
        self.plugin_name = getattr(summarizer, "__name__", type(summarizer).__name__)
        if summarizer is None and config.summarizer.kind == "openai":
            self.plugin = OpenAISummarizer(config.summarizer)
            self.plugin_name = "openai"
        self._lock = threading.Lock()
        self._last_write = datetime.now(UTC)

    # -- when ---------------------------------------------------------------------------------

    def wrote(self, now: datetime | None = None) -> None:
        """Note a write to the store (the idle trigger counts from the last one)."""
        self._last_write = now or datetime.now(UTC)

    def due(self, now: datetime | None = None) -> str | None:
        """Which trigger fires now (None: none), given that some memory is waiting."""
        if not self.config.enabled:
            return None
        now = now or datetime.now(UTC)
        triggers = self.config.triggers
        fired = None
        last = self.summaries.meta(LAST_RUN)
        since_run = (now.timestamp() - int(last) / 1e6) if last else None
        if triggers.working_set_size and self.store.hot.count() >= triggers.working_set_size:
            fired = f"working set holds {self.store.hot.count()} memories"
        elif triggers.every_seconds and (since_run is None or since_run >= triggers.every_seconds):
            fired = "time since the last run"
        elif triggers.idle_seconds and (
            (now - self._last_write).total_seconds() >= triggers.idle_seconds
        ):
            fired = "idle"
        if fired is None or not self.waiting():
            return None
        return fired

    def waiting(self) -> int:
        """How many memories outside the working set no summary covers yet (or covers an
        older version of)."""
        pending, gone = self._changes(include_working_set=False)
        return len(pending) + len(gone)

    # -- running ------------------------------------------------------------------------------

    def run(
        self,
        *,
        include_working_set: bool = False,
        now: datetime | None = None,
        trigger: str = "on demand",
    ) -> ConsolidationReport:
        """Consolidate what is waiting; ``include_working_set`` takes the hot memories too."""
        now = now or datetime.now(UTC)
        with self._lock:
            pending, gone = self._changes(include_working_set=include_working_set)
            sessions = sorted({s for s, _ in pending.values()} | {s for s, _ in gone.values()})
            hot = set() if include_working_set else set(self.store.hot.ids())
            totals = _Totals()
            for session in sessions:
                self._rebuild(session, exclude=hot, totals=totals, now=now)
            self.summaries.set_meta(LAST_RUN, str(int(now.timestamp() * 1e6)))
        return ConsolidationReport(
            sessions=tuple(sessions),
            written=totals.written,
            unchanged=totals.unchanged,
            removed=totals.removed,
            memories=len(pending),
            trigger=trigger,
            warnings=tuple(totals.warnings),
        )

    def forgotten(self, ids: Sequence[str], sessions: Sequence[str] = ()) -> int:
        """Rebuild (or remove) the summaries built on forgotten memories; returns how many
        sessions were touched."""
        covered = self.summaries.consolidated()
        touched = {covered[i][0] for i in ids if i in covered}
        touched |= {s for s in sessions if self.summaries.of_session(s)}
        if not touched:
            return 0
        with self._lock:
            hot = set(self.store.hot.ids())  # covered ones stay: _rebuild keeps them
            totals = _Totals()
            for session in sorted(touched):
                self._rebuild(session, exclude=hot, totals=totals, now=datetime.now(UTC))
            self.summaries.checkpoint()
        return len(touched)

    # -- internals ----------------------------------------------------------------------------

    def _changes(
        self, *, include_working_set: bool
    ) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
        """(memories waiting: id -> (session, hash); covered memories the archive lost)."""
        covered = self.summaries.consolidated()
        hot = set() if include_working_set else set(self.store.hot.ids())
        pending: dict[str, tuple[str, str]] = {}
        present: set[str] = set()
        for memory in self.store.iter_memories():
            present.add(memory.id)
            sha = content_sha(memory.content)
            known = covered.get(memory.id)
            if known is not None and known[1] == sha:
                continue
            if memory.id in hot and known is None:
                continue
            pending[memory.id] = (memory.session_id, sha)
        gone = {m: v for m, v in covered.items() if m not in present}
        return pending, gone

    def _rebuild(self, session: str, *, exclude: set[str], totals: _Totals, now: datetime) -> None:
        covered = self.summaries.consolidated()
        ids = self.store.ids_in_session(session)
        members = [
            m
            for m in self.store.get(ids)
            if m.id not in exclude or covered.get(m.id, ("", ""))[1] == content_sha(m.content)
        ]
        before = {s.id: s for s in self.summaries.of_session(session)}
        if not members:
            self.summaries.drop_session(session)
            totals.removed += len(before)
            return
        built = self._build(session, members, totals)
        after = {s.id: s for s in built}
        totals.removed += len(set(before) - set(after))
        same = [i for i, s in after.items() if i in before and before[i].same_as(s)]
        totals.unchanged += len(same)
        totals.written += len(after) - len(same)
        if len(same) == len(after) == len(before) and self._covers(members, covered):
            return  # nothing a reader would see changes: leave the rows as they are
        covered_now = [(m.id, content_sha(m.content)) for m in members]
        self.summaries.replace_session(session, built, covered_now, now=now)

    def _covers(self, members: Sequence[Memory], covered: Mapping[str, tuple[str, str]]) -> bool:
        return all(covered.get(m.id, ("", ""))[1] == content_sha(m.content) for m in members)

    def _build(self, session: str, members: Sequence[Memory], totals: _Totals) -> list[Summary]:
        topics = split_topics(members, self.config.grouping, self.store.tokenizer)
        codes = self.store.citation_of([m.id for m in members])
        cites = {i: format_citation(c, self.prefix) for i, c in codes.items()}
        built = [
            self._topic(session, position, group, cites, totals)
            for position, group in enumerate(topics)
        ]
        return [self._session(session, built, members), *built]

    def _topic(
        self,
        session: str,
        position: int,
        group: Sequence[Memory],
        cites: Mapping[str, str],
        totals: _Totals,
    ) -> Summary:
        words, text = self.extractive.summarize(group, cites, session=session)
        name = "extractive"
        if self.plugin is not None:
            head = head_of(group, session, words.split(", ") if words else [])
            try:
                text = apply_plugin(self.plugin, group, text, head, self.config.detail.index_chars)
                name = self.plugin_name
            except PLUGIN_ERRORS as exc:
                message = f"summarizer {self.plugin_name} failed ({exc}); kept the extractive one"
                log.warning("consolidation: %s", message)
                totals.warnings.append(message)
        return _summary(
            f"sum:{_digest(session, group[0].id)}",
            kind="topic",
            session=session,
            position=position,
            topic=words,
            members=group,
            text=text,
            summarizer=name,
        )

    def _session(
        self, session: str, topics: Sequence[Summary], members: Sequence[Memory]
    ) -> Summary:
        ordered = sorted(members, key=lambda m: (m.timestamp, m.id))
        words = "; ".join(t.topic for t in topics if t.topic)
        head = head_of(ordered, session, [])
        count = f"{_plural(len(ordered), 'memory', 'memories')}, " + _plural(
            len(topics), "topic", "topics"
        )
        line = f"{head} · {count}" + (f" · {words}" if words else "")
        limit = self.config.detail.index_chars
        text = SummaryText(
            index_line=line if len(line) <= limit else line[: limit - 1].rstrip() + "…",
            paragraph="\n".join(t.index_line for t in topics),
            full_text="\n\n".join(t.paragraph for t in topics),
        )
        return _summary(
            f"ses:{_digest(session)}",
            kind="session",
            session=session,
            position=-1,
            topic=words,
            members=ordered,
            text=text,
            summarizer=topics[0].summarizer if topics else "extractive",
        )


@dataclass
class _Totals:
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    warnings: list[str] = field(default_factory=list)


def _summary(
    summary_id: str,
    *,
    kind: str,
    session: str,
    position: int,
    topic: str,
    members: Sequence[Memory],
    text: SummaryText,
    summarizer: str,
) -> Summary:
    return Summary(
        id=summary_id,
        kind="session" if kind == "session" else "topic",
        session_id=session,
        position=position,
        topic=topic,
        start=min(m.timestamp for m in members),
        end=max(m.timestamp for m in members),
        index_line=text.index_line,
        paragraph=text.paragraph,
        full_text=text.full_text,
        sources=tuple(m.id for m in members),
        summarizer=summarizer,
    )


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"

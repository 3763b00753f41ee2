"""The DisclosureController: for each query, the most useful memory in the fewest tokens.

Ingest: privacy filter (``<private>`` spans never stored) -> enrichment (entities, summary) ->
the tiered store (archive first, then hot, then the warm index through its outbox) -> cache
invalidation. Disclose: analyze -> level -> budget -> gather from the tiers the level enables,
concurrently (layer-1 cache) -> fuse -> expansion -> neighbours for timelines (layer-2 cache) ->
render with the level's formatter inside the exact budget -> result. Feedback: what the reply
used -> the adaptive budget and the lifecycle.

The public surface (``from_profile``, ``ingest``, ``disclose``, ``adisclose``, ``show``,
``feedback``, ``forget``, ``stats``, ``close``, context manager) is a contract: parameters may be
added, never removed or renamed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from analyzers import DisclosureLevel, QueryAnalysis, QueryComplexityAnalyzer
from disclosure.budget import AdaptiveBudget, BudgetDecision, Usage
from disclosure.cache import DisclosureCaches
from disclosure.expansion import decide
from disclosure.feedback import FeedbackReport, measure
from disclosure.fusion import Candidate
from disclosure.gather import Gatherer
from disclosure.ingest import prepare
from disclosure.participants import Participants
from disclosure.profiles import LevelConfig, Profile, load_profile
from disclosure.result import DisclosedItem, DisclosureResult
from formatters import (
    Layer,
    Rendered,
    RenderItem,
    WrapperInfo,
    format_citation,
    get_formatter,
    get_token_counter,
    render_context,
)
from formatters.citations import parse_citations
from tiers import Memory, TieredStore, get_embedder
from tiers.base import Embedder
from tiers.errors import InvalidInputError, MemoryNotFoundError, ProfileError
from tiers.memory import as_utc
from tiers.reports import ForgetReport, IngestReport

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 20_000
_LINE_OVERHEAD = 4  # speaker, separator, newline: what a content line costs beyond the content
_POOL_BUDGETS = 3  # candidates worth this many budgets of content reach the formatter
_SHOW_BUDGET = 1_000_000
_NO_EMBEDDER = "none"


class DisclosureController:
    """Progressive disclosure over a tiered memory store. Thread-safe; a context manager."""

    def __init__(
        self,
        profile: Profile,
        *,
        data_dir: Path | str,
        embedder: Embedder | str | None = None,
    ) -> None:
        self.profile = profile
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.counter = get_token_counter(profile.tokens.encoding)
        self.analyzer = _analyzer(profile)
        self._closed = False
        self._lock = threading.Lock()
        self._last_ids: tuple[str, ...] = ()
        self._last_analysis: QueryAnalysis | None = None
        self.store = TieredStore(
            self.data_dir,
            profile.tiers,
            embedder=self._embedder(embedder),
            line_counter=self.counter,
            citation_length=profile.citations.length,
        )
        try:
            self.caches = DisclosureCaches(self.data_dir / "cache", profile.caches)
            self.budget = AdaptiveBudget(
                profile.budget, profile=profile.name, path=self.data_dir / "usage.sqlite3"
            )
            self.participants = Participants(self.data_dir / "participants.json", self.store)
            self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="disclosure")
            self.gatherer = Gatherer(self.store, profile.fusion, self.caches, self._pool)
        except BaseException:
            self.store.close()
            raise

    @classmethod
    def from_profile(
        cls,
        name_or_path: str | Path | Profile,
        *,
        data_dir: Path | str,
        embedder: Embedder | str | None = None,
    ) -> DisclosureController:
        """A controller on a built-in profile name, a YAML path, or a Profile."""
        return cls(load_profile(name_or_path), data_dir=data_dir, embedder=embedder)

    def _embedder(self, embedder: Embedder | str | None) -> Embedder | None:
        if embedder is not None and not isinstance(embedder, str):
            return embedder
        name = embedder or self.profile.tiers.warm.embedder
        if name == _NO_EMBEDDER:
            return None
        return get_embedder(name)

    # -- writing -----------------------------------------------------------------------------

    def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        """Store memories (Memory objects or mappings of their fields) in every tier."""
        self._check_open()
        prepared, private = prepare(memories, self.profile.analyzer)
        report = self.store.ingest(prepared)
        if report.ids:
            changed = {m.id: m for m in prepared}
            sessions = {changed[i].session_id for i in report.ids if i in changed}
            self.caches.invalidate(ids=report.ids, sessions=sessions)
            self.participants.add(changed[i].speaker for i in report.ids if i in changed)
        if private:
            log.info("ingest: %d memories were entirely private and were not stored", private)
        return report

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        """Remove memories by id and/or a whole session from every tier and cache."""
        self._check_open()
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        report = self.store.forget(list(ids or ()), session_id=session_id)
        self.caches.invalidate(ids=report.ids, sessions=report.sessions)
        return report

    # -- disclosing ---------------------------------------------------------------------------

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        """The context to give the model for ``query``. ``level`` and ``budget`` override the
        analyzer and the adaptive budget; ``context_window`` and ``prompt_tokens`` (what the
        conversation already takes) bound the budget by the model's window."""
        self._check_open()
        query = _check_query(query)
        timings: dict[str, float] = {}
        started = clock = time.perf_counter()
        when = as_utc(now) if now is not None else datetime.now(UTC)
        turns = _user_turns(history)
        analysis = self.analyzer.analyze(
            query, history=turns, now=when, previous=self._previous(turns)
        )
        chosen = DisclosureLevel.parse(level) if level is not None else analysis.level
        config = self.profile.levels[chosen]
        decision = self.budget.decide(
            chosen,
            config,
            analysis.complexity,
            override=budget,
            context_window=context_window,
            prompt_tokens=prompt_tokens,
        )
        clock = _lap(timings, "analyze", clock)
        explicit = self._resolve_references(analysis.explicit_ids)
        warnings: list[str] = []
        hits = self.gatherer.gather(
            query,
            analysis,
            chosen,
            config,
            now=when,
            named=self.participants.named_in(query),
            timings=timings,
            warnings=warnings,
        )
        candidates = self._shortlist(hits, config, decision.tokens)
        clock = time.perf_counter()
        expansion = decide(
            candidates,
            analysis,
            self.profile.expansion,
            explicit=[m.id for m in explicit],
            requested=self._requested(analysis, turns),
        )
        items = self._render_items(explicit, candidates, expansion.layers)
        clock = _lap(timings, "expand", clock)
        rendered = self._render(
            items,
            config=config,
            analysis=analysis,
            level=chosen,
            budget=decision.tokens,
            now=when,
        )
        _lap(timings, "render", clock)
        timings["total"] = round((time.perf_counter() - started) * 1000, 3)
        result = self._result(
            rendered,
            items=items,
            analysis=analysis,
            level=chosen,
            decision=decision,
            reason=expansion.reason,
        )
        with self._lock:
            self._last_ids = tuple(i.id for i in result.items)
            self._last_analysis = analysis
        return result.model_copy(update={"timings_ms": timings, "warnings": tuple(warnings)})

    async def adisclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        """:meth:`disclose` in a worker thread, for async callers."""
        return await asyncio.to_thread(
            self.disclose,
            query,
            history=history,
            now=now,
            level=level,
            budget=budget,
            context_window=context_window,
            prompt_tokens=prompt_tokens,
        )

    def show(self, id_or_citation: str) -> str:
        """One memory in full detail, with its neighbours' citations (``mem:a7Bc3x`` or an id)."""
        self._check_open()
        memory = self._resolve(id_or_citation)
        if memory is None:
            raise MemoryNotFoundError(f"no memory has the id or citation {id_or_citation!r}")
        neighbours = self.gatherer.neighbours(memory, 1)
        cites = self._citations([memory.id, *(n.id for n in neighbours)])
        item = self._item(memory, 1.0, "cold", Layer.DETAIL, neighbours=neighbours, cites=cites)
        fmt = get_formatter("detail", self.profile.formatting)
        return fmt.render([item], budget=_SHOW_BUDGET, counter=self.counter).text

    def resolve(self, id_or_citation: str) -> Memory | None:
        """The memory an id or a citation (``mem:a7Bc3x``, ``[mem:a7Bc3x]``) names, or None."""
        self._check_open()
        return self._resolve(id_or_citation)

    def feedback(self, result: DisclosureResult, reply: str) -> FeedbackReport:
        """Record what ``reply`` used of ``result``: it teaches the budget and the lifecycle."""
        self._check_open()
        memories = {m.id: m for m in self.store.get([i.id for i in result.items])}
        report = measure(
            result,
            reply,
            memories,
            tokenizer=self.store.tokenizer,
            min_overlap=self.profile.feedback.min_overlap,
            min_shared_words=self.profile.feedback.min_shared_words,
        )
        usage = Usage(
            result.budget,
            result.tokens_used,
            report.depth,
            len(report.used),
            len(result.items),
            bool(result.omitted),
            start=self.budget.start(result.analysis.complexity),
        )
        self.budget.record(result.level, usage)
        if report.used:
            self.store.record_use(report.used)
        return report

    def stats(self) -> dict[str, Any]:
        """Counts per tier, pending embeddings, disk, caches and the learned budgets."""
        self._check_open()
        factors = {
            level.value: {"factor": round(f, 3), "observations": n}
            for level in DisclosureLevel
            for f, n in [self.budget.factor(level)]
        }
        return {
            "profile": self.profile.name,
            "data_dir": str(self.data_dir),
            "store": asdict(self.store.stats()),
            "caches": self.caches.stats(),
            "budget": factors,
            "full_history_tokens": self.store.total_line_tokens(),
        }

    def close(self) -> None:
        """Release the tiers, caches and threads. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True)
        self.store.close()
        self.caches.close()
        self.budget.close()

    def __enter__(self) -> DisclosureController:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInputError("this DisclosureController is closed")

    def _previous(self, turns: Sequence[str]) -> QueryAnalysis | None:
        with self._lock:
            last = self._last_analysis
        return last if last is not None and turns and turns[-1] == last.query else None

    def _requested(self, analysis: QueryAnalysis, turns: Sequence[str]) -> list[str]:
        """What "tell me more" points at: the previous disclosure's items, within a dialogue."""
        if not analysis.expansion_request or not turns:
            return []
        with self._lock:
            return list(self._last_ids)

    def _resolve_references(self, references: Sequence[str]) -> list[Memory]:
        found = [self._resolve(ref) for ref in references]
        return list({m.id: m for m in found if m is not None}.values())

    def _resolve(self, reference: str) -> Memory | None:
        text = reference.strip().strip("[]")
        codes = [c.rsplit(":", 1)[-1] for c in parse_citations(text, self.profile.citations.prefix)]
        candidates = [self.store.resolve_citation(c) for c in codes]
        candidates += [text, self.store.resolve_citation(text)]
        for memory_id in candidates:
            if memory_id:
                hit = self.store.get([memory_id])
                if hit:
                    return hit[0]
        return None

    def _shortlist(
        self, hits: Sequence[Candidate], config: LevelConfig, budget: int
    ) -> list[Candidate]:
        """The candidates worth handing to the formatter, best first.

        Drops those under ``min_score``; applies the score-adaptive cut-off once
        ``cutoff_floor`` tokens of content are in; and stops once the candidates' content adds
        up to a few budgets (the formatter only needs enough to fill one).
        """
        kept: list[Candidate] = []
        best = max((c.fused for c in hits), default=0.0)
        used = 0
        for candidate in hits:
            if candidate.score < config.min_score:
                continue
            if (
                config.cutoff
                and used >= config.cutoff_floor
                and (candidate.fused < config.cutoff * best)
            ):
                break
            kept.append(candidate)
            used += self.counter(candidate.memory.content) + _LINE_OVERHEAD
            if used >= _POOL_BUDGETS * budget:
                break
        return kept

    def _render_items(
        self,
        explicit: Sequence[Memory],
        candidates: Sequence[Candidate],
        layers: Mapping[str, Layer],
    ) -> list[RenderItem]:
        """Priority order: named memories first, then the expanded ones in the order the
        expansion chose them, then the rest by rank."""
        window = self.profile.expansion.timeline_window
        plan: list[tuple[Memory, float, str, Layer, int]] = [
            (m, 1.0, "cold", Layer.DETAIL, min(window, 1)) for m in explicit
        ]
        seen = {m.id for m in explicit}
        found = {c.id: c for c in candidates}
        chosen = [i for i in layers if i not in seen]
        fetched = {m.id: m for m in self.store.get([i for i in chosen if i not in found])}
        for memory_id in chosen:
            hit = found.get(memory_id)
            memory = hit.memory if hit else fetched.get(memory_id)
            if memory is not None:
                score, tier = (hit.score, hit.tier) if hit else (1.0, "cold")
                plan.append((memory, score, tier, layers[memory_id], window))
                seen.add(memory_id)
        plan += [
            (c.memory, c.score, c.tier, Layer.INDEX, window) for c in candidates if c.id not in seen
        ]
        around = {
            m.id: self.gatherer.neighbours(m, w)
            for m, _, _, layer, w in plan
            if layer is not Layer.INDEX and w > 0
        }
        ids = [m.id for m, *_ in plan] + [n.id for ns in around.values() for n in ns]
        cites = self._citations(ids)  # one lookup for the whole context
        return [
            self._item(m, score, tier, layer, neighbours=around.get(m.id, []), cites=cites)
            for m, score, tier, layer, _ in plan
        ]

    def _item(
        self,
        memory: Memory,
        score: float,
        tier: str,
        layer: Layer,
        *,
        neighbours: Sequence[Memory],
        cites: Mapping[str, str],
    ) -> RenderItem:
        return RenderItem(
            memory=memory,
            citation=cites.get(memory.id, ""),
            score=min(max(score, 0.0), 1.0),
            tier=tier,
            layer=layer,
            neighbours=tuple(neighbours),
            neighbour_citations=tuple(cites.get(n.id, "") for n in neighbours) if cites else (),
        )

    def _citations(self, ids: Sequence[str]) -> dict[str, str]:
        if not self.profile.citations.enabled:
            return {}
        prefix = self.profile.citations.prefix
        return {i: format_citation(c, prefix) for i, c in self.store.citation_of(ids).items()}

    def _render(
        self,
        items: Sequence[RenderItem],
        *,
        config: LevelConfig,
        analysis: QueryAnalysis,
        level: DisclosureLevel,
        budget: int,
        now: datetime,
    ) -> Rendered:
        fmt = get_formatter(config.formatter, self.profile.formatting)
        info = WrapperInfo(
            level=level.value,
            signals=analysis.detected_signals,
            complexity=analysis.complexity,
            full_history_tokens=self.store.total_line_tokens(),
            exact=self.counter.exact,
        )
        return render_context(
            fmt,
            items,
            budget=budget,
            counter=self.counter,
            now=now,
            info=info,
            options=self.profile.formatting,
        )

    def _result(
        self,
        rendered: Rendered,
        *,
        items: Sequence[RenderItem],
        analysis: QueryAnalysis,
        level: DisclosureLevel,
        decision: BudgetDecision,
        reason: str,
    ) -> DisclosureResult:
        priority = {item.id: rank for rank, item in enumerate(items)}
        shown = sorted(rendered.items, key=lambda r: priority.get(r.id, len(priority)))
        disclosed = tuple(
            DisclosedItem(
                id=r.id,
                citation=r.citation,
                tier=r.tier,
                layer=r.layer,
                score=r.score,
                tokens=r.tokens,
            )
            for r in shown
        )
        return DisclosureResult(
            text=rendered.text,
            items=disclosed,
            level=level,
            analysis=analysis,
            budget=decision.tokens,
            tokens_used=rendered.tokens,
            full_history_tokens=self.store.total_line_tokens(),
            expansion_reason=reason if disclosed else None,
            tokens_exact=self.counter.exact,
            budget_reason=decision.reason,
            profile=self.profile.name,
            omitted=rendered.omitted,
        )


def _analyzer(profile: Profile) -> QueryComplexityAnalyzer:
    try:
        return QueryComplexityAnalyzer(profile.analyzer)
    except LookupError as exc:
        raise ProfileError(f"profile {profile.name!r}: analyzer: {exc}") from None


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        raise InvalidInputError("query must not be empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}"
        )
    return query


def _user_turns(history: Sequence[str | Mapping[str, Any]]) -> list[str]:
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


def _lap(timings: dict[str, float], stage: str, since: float) -> float:
    now = time.perf_counter()
    timings[stage] = round((now - since) * 1000, 3)
    return now

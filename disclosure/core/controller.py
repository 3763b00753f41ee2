"""The DisclosureController: for each query, the most useful memory in the fewest tokens.

Ingest: privacy filter (``<private>`` spans never stored; secrets become ``[redacted:<kind>]``
markers, see :mod:`safeguards.secrets`) -> enrichment (entities, summary) ->
the tiered store (archive first, then hot, then the warm index through its outbox) -> cache
invalidation. With a background drain (the local service) the store's worker does the
enrichment instead, just before embedding, and the caches are invalidated again.
Disclose: analyze -> level -> budget -> gather from the tiers the level enables, concurrently,
and fuse (the index cache) -> shortlist -> expansion -> neighbours for timelines (the timeline
cache) -> render with the level's formatter inside the exact budget -> result.
Feedback: what the reply used -> the adaptive budget and the lifecycle. Each stage is a module
of :mod:`disclosure.core.pipeline`.

The public surface (``from_profile``, ``ingest``, ``disclose``, ``adisclose``, ``show``,
``feedback``, ``forget``, ``stats``, ``close``, context manager) is a contract: parameters may be
added, never removed or renamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from analyzers import DisclosureLevel, QueryAnalysis, facets_many
from disclosure.consolidation.faces import LongTermMemory
from disclosure.consolidation.service import Consolidation, with_overview
from disclosure.consolidation.store import PG_SCHEMA as SUMMARIES_PG
from disclosure.consolidation.summarize import SummarizerFn
from disclosure.core.citation_styles import restyle
from disclosure.core.empty import analyzer_of, check_query, user_turns
from disclosure.core.pipeline.budget import PG_SCHEMA, AdaptiveBudget, Usage, usage_summary
from disclosure.core.pipeline.caches import DisclosureCaches
from disclosure.core.pipeline.compose import Composer
from disclosure.core.pipeline.expansion import decide
from disclosure.core.pipeline.facets import FacetIndex, FacetReader, FacetWorker
from disclosure.core.pipeline.feedback import FeedbackReport, measure
from disclosure.core.pipeline.gather import Gatherer
from disclosure.core.pipeline.ingest import enrich, prepare_memories, redacted_text
from disclosure.core.pipeline.participants import PG_SCHEMA as PARTICIPANTS_PG
from disclosure.core.pipeline.participants import Participants
from disclosure.core.pipeline.trace import Trace
from disclosure.core.pipeline.usemodel import UseSignals, signals_of
from disclosure.core.profiles import Profile, load_profile
from disclosure.core.result import DisclosedItem, DisclosureResult
from disclosure.storage.citation_usage import PG_SCHEMA as CITATIONS_PG
from disclosure.storage.citation_usage import CitationLog
from disclosure.storage.scan_verdicts import PG_SCHEMA as VERDICTS_PG
from disclosure.storage.scan_verdicts import ScanVerdicts
from disclosure.storage.sidetables import shared_tables
from formatters import (
    Rendered,
    RenderItem,
    get_token_counter,
)
from formatters.citations import parse_citations
from safeguards.filter import known_verdicts
from tiers import Memory, TieredStore, get_embedder
from tiers.base import Embedder
from tiers.errors import InvalidInputError, MemoryNotFoundError
from tiers.memory import as_utc
from tiers.reports import ForgetReport, IngestReport

log = logging.getLogger(__name__)

_NO_EMBEDDER = "none"


#: An ingest of more memories than this is not scanned ahead in the background. A thread
#: scanning a bulk import holds the GIL in long regex runs, and every call of the answering
#: thread that releases it (token counts, SQLite, the embedder) then waits its turn: measured
#: on LongMemEval's haystacks, a disclose right after an import of ~500 turns took 1.4 s
#: instead of ~0.1 s. Live chat ingests a turn or two at a time, and those are what the next
#: answers show.
SCAN_AHEAD_MAX = 64
_SETTLE_MAX = 3600.0  # settle(): how long the warm tier's queue may take, when no timeout is given


class DisclosureController(LongTermMemory):
    """Progressive disclosure over a tiered memory store. Thread-safe; a context manager."""

    def __init__(
        self,
        profile: Profile,
        *,
        data_dir: Path | str,
        embedder: Embedder | str | None = None,
        summarizer: SummarizerFn | None = None,
        facets: FacetReader | None = None,
    ) -> None:
        """``facets``: reads memories' facets for the gathering index in place of
        ``analyzers.facets_many`` (same signature; an evaluation passes one that remembers)."""
        self.profile = profile
        self._facet_reader: FacetReader = facets or facets_many
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.counter = get_token_counter(profile.tokens.encoding)
        self.analyzer = analyzer_of(profile)
        self._closed = False
        self._lock = threading.Lock()
        self._last_ids: tuple[str, ...] = ()
        self._last_analysis: QueryAnalysis | None = None
        self._enriched_lock = threading.Lock()
        self._enriched_early: list[Memory] = []
        self.facets: FacetIndex | None = None
        self._facet_worker: FacetWorker | None = None
        self.store = TieredStore(
            self.data_dir,
            profile.tiers,
            embedder=self._embedder(embedder),
            line_counter=self.counter,
            citation_length=profile.citations.length,
            citation_alphabet=profile.citations.alphabet,
            enricher=lambda memories: enrich(memories, profile.analyzer),
            on_enriched=self._enriched_later,
            on_forgotten=self._forgotten_by_store,
        )
        self.verdicts: ScanVerdicts | None = None
        self._scans: ThreadPoolExecutor | None = None
        try:
            with self._enriched_lock:  # with a shared archive, in memory (see the caches)
                shared = self.store.database_url is not None
                cache_dir = None if shared else self.data_dir / "cache"
                self.caches = DisclosureCaches(cache_dir, profile.caches)
                early, self._enriched_early = self._enriched_early, []
            if early:
                self._enriched_later(early)
            self.budget = self._adaptive_budget(profile)
            self.participants = Participants(
                self.data_dir / "participants.json",
                self.store,
                tables=shared_tables(self.store, PARTICIPANTS_PG, "participants"),
            )
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="disclosure")
            # kept verdicts (a file, or the schema): see disclosure.storage.scan_verdicts
            self.verdicts = ScanVerdicts(
                self.data_dir, tables=shared_tables(self.store, VERDICTS_PG, "scan_verdicts")
            )
            self._scans = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan")
            self._open_facets()
            self.gatherer = Gatherer(
                self.store,
                profile.fusion,
                self.caches,
                self._pool,
                facets=self.facets,
                participants=self.participants,
            )
            self.composer = Composer(profile, self.store, self.gatherer, self.counter)
            self._detail_style = _style_of(profile)
            self.consolidation = Consolidation(
                self.data_dir,
                self.store,
                profile.consolidation,
                citation_prefix=profile.citations.prefix,
                summarizer=summarizer,
                tables=shared_tables(self.store, SUMMARIES_PG, "summaries"),
                redact_secrets=profile.tiers.ingest.redact_secrets,
            )
            self.citation_log = CitationLog(
                self.data_dir, tables=shared_tables(self.store, CITATIONS_PG, "citations")
            )
            if self.citation_log.engine == "postgres":
                _warn_of_unused_side_files(self.data_dir, shared=self.store.shared)
        except BaseException:
            if self.verdicts is not None:
                self.verdicts.close()
            self._close_facets()
            self.store.close()
            raise

    @classmethod
    def from_profile(
        cls,
        name_or_path: str | Path | Profile,
        *,
        data_dir: Path | str,
        embedder: Embedder | str | None = None,
        summarizer: SummarizerFn | None = None,
        facets: FacetReader | None = None,
    ) -> DisclosureController:
        """A controller on a built-in profile name, a YAML path, or a Profile (``summarizer``:
        a callable writing consolidated summaries instead of the profile's; ``facets``: see
        the constructor)."""
        return cls(
            load_profile(name_or_path),
            data_dir=data_dir,
            embedder=embedder,
            summarizer=summarizer,
            facets=facets,
        )

    def _adaptive_budget(self, profile: Profile) -> AdaptiveBudget:
        """With a PostgreSQL archive (and no ``budget.learning.path`` of its own), the replies
        live in the namespace's schema: the budget learns from what every replica saw."""
        shared = None
        if profile.budget.learning.path is None and self.store.cold is not None:
            shared = self.store.cold.side_connection(PG_SCHEMA)
        if shared is not None:
            return AdaptiveBudget(profile.budget, profile=profile.name, db=shared)
        return AdaptiveBudget(profile.budget, profile=profile.name, path=self._usage_path(profile))

    def _usage_path(self, profile: Profile) -> Path:
        """Where the adaptive budget keeps its replies: ``budget.learning.path`` (relative to
        the data directory; a file shared by several data directories makes one profile learn
        from all of them), or ``usage.sqlite3`` in the data directory."""
        chosen = profile.budget.learning.path
        if chosen is None:
            return self.data_dir / "usage.sqlite3"
        return self.data_dir / Path(chosen).expanduser()

    def _embedder(self, embedder: Embedder | str | None) -> Embedder | None:
        if embedder is not None and not isinstance(embedder, str):
            return embedder
        name = embedder or self.profile.tiers.warm.embedder
        if name == _NO_EMBEDDER:
            return None
        return get_embedder(name)

    # -- writing -----------------------------------------------------------------------------

    def ingest(
        self, memories: Iterable[Memory | Mapping[str, Any]], *, refresh: bool = False
    ) -> IngestReport:
        """Store memories (Memory objects or mappings of their fields) in every tier.

        ``refresh``: a stored memory whose content is the same but whose other fields (such as
        its metadata) differ is rewritten too (by default only new content replaces one).
        """
        self._check_open()
        ready = prepare_memories(
            memories,
            self.profile.analyzer,
            max_content_chars=self.profile.tiers.ingest.max_content_chars,
            # the store's drain worker enriches new content before embedding it (a refresh
            # may rewrite a stored record, so it is enriched now, as compared)
            enrich=refresh or not self.store.defers_enrichment,
            redact_secrets=self.profile.tiers.ingest.redact_secrets,
        )
        prepared = ready.memories
        report = replace(
            self.store.ingest(prepared, refresh=refresh),
            private=ready.private,
            secrets=ready.secrets,
        )
        if report.ids:
            changed = {m.id: m for m in prepared}
            if self._facet_worker is not None:  # their facets, off the ingest path
                self._facet_worker.submit(report.ids)
            sessions = {changed[i].session_id for i in report.ids if i in changed}
            self.caches.invalidate(ids=report.ids, sessions=sessions)
            self.participants.add(changed[i].speaker for i in report.ids if i in changed)
            self.consolidation.consolidator.wrote()
            if not self.store.defers_enrichment:  # else after the drain worker's enrichment,
                # off the path that acknowledges ingest (see _enriched_later)
                self._keep_verdicts([changed[i] for i in report.ids if i in changed])
        if ready.private:
            log.info("ingest: %d memories were entirely private and were not stored", ready.private)
        if ready.secrets:
            log.info("ingest: %d secrets were replaced by markers before storing", ready.secrets)
        return report

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        """Remove memories by id or citation (``mem:a7Bc3x``) and/or a whole session from
        every tier and cache."""
        self._check_open()
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        if isinstance(ids, str):
            raise InvalidInputError("forget takes a sequence of ids, not a single string")
        report = self.store.forget(self._ids_of(ids or ()), session_id=session_id)
        self.caches.erase(report.ids, report.sessions)
        self.consolidation.forgotten(report.ids, report.sessions)
        self.citation_log.forget(report.ids)
        self.participants.forgotten(self.store, report.speakers)
        return report

    def _close_facets(self) -> None:
        if self._facet_worker is not None:
            self._facet_worker.close()
        if self.facets is not None:
            self.facets.close()

    def _open_facets(self) -> None:
        """The gathering index and its worker (which resumes what a previous process left)."""
        self.facets = FacetIndex.open(self.data_dir, self.store)
        analyzer, reader = self.profile.analyzer, self._facet_reader
        self._facet_worker = FacetWorker(
            self.facets,
            self.store.get,
            lambda texts: reader(texts, config=analyzer),
            indexed=self._facets_indexed,
        )

    def _facets_indexed(self, memories: list[Memory]) -> None:
        """Answers cached before these memories' facets were indexed ranked them without: a new
        generation makes them unreachable (a memory's detail and its session's timeline do not
        depend on facets, and stay)."""
        caches: DisclosureCaches | None = getattr(self, "caches", None)
        if caches is not None and memories:
            caches.invalidate()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until what was ingested is indexed everywhere: the warm tier's queue drained
        and the gathering index caught up (False: ``timeout`` seconds passed first)."""
        self._check_open()
        started = time.monotonic()
        if self.store.flush(timeout=_SETTLE_MAX if timeout is None else timeout) != 0:
            return False
        left = None if timeout is None else max(timeout - (time.monotonic() - started), 0.0)
        return self._facet_worker is None or self._facet_worker.settle(left)

    def _enriched_later(self, memories: list[Memory]) -> None:
        """The store filled in entities and summaries after ingest: caches built on the
        records before go (during the store's opening, once the caches exist)."""
        with self._enriched_lock:
            caches: DisclosureCaches | None = getattr(self, "caches", None)
            if caches is None:
                self._enriched_early.extend(memories)
                return
        caches.invalidate(ids=[m.id for m in memories], sessions={m.session_id for m in memories})
        self._keep_verdicts(memories)

    def _keep_verdicts(self, memories: Sequence[Memory], *, shown: bool = False) -> None:
        """Scan the texts of ``memories`` in the background and keep the clean verdicts, so
        rendering them later does not scan them (``shown``: just rendered, their verdicts are
        in the process's scan cache)."""
        verdicts, scans = getattr(self, "verdicts", None), getattr(self, "_scans", None)
        if verdicts is None or scans is None or not memories or self._closed:
            return
        if not shown and len(memories) > SCAN_AHEAD_MAX:
            return  # a bulk import: its texts get their verdicts as they are first shown
        with contextlib.suppress(RuntimeError):  # closing: the verdicts are an optimisation
            scans.submit(self._record_verdicts, verdicts, list(memories), shown)

    def _record_verdicts(self, verdicts: ScanVerdicts, memories: list[Memory], shown: bool) -> None:
        try:
            verdicts.record(memories, self._still_stored, shown=shown, stop=self._is_closing)
        except Exception as exc:  # never worth failing anything for
            log.warning("keeping scan verdicts failed (they are scanned when shown): %s", exc)

    def _is_closing(self) -> bool:
        return self._closed

    def _still_stored(self, ids: Sequence[str]) -> list[str]:
        return [m.id for m in self.store.get(ids)]

    def _forgotten_by_store(self, memories: list[Memory]) -> None:
        verdicts = getattr(self, "verdicts", None)
        if verdicts is not None:
            verdicts.forget(memories)
        index = getattr(self, "facets", None)
        if index is not None:
            index.forget(m.id for m in memories)

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
        with self.caches.answering():  # the caches' writes wait until it is done
            self._follow_replicas()
            query = check_query(query)
            trace = Trace()
            when = as_utc(now) if now is not None else datetime.now(UTC)
            turns = user_turns(history)
            named = self.participants.named_in(query)
            self.gatherer.prefetch(query, named)  # the query's embedding overlaps the analysis
            with trace.stage("analyze"):
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
            explicit = self._resolve_references(analysis.explicit_ids)
            hits = self.gatherer.gather(
                query,
                analysis,
                chosen,
                config,
                now=when,
                named=named,
                trace=trace,
            )
            decision = self.composer.by_need(decision, hits, analysis, len(named))
            signals = signals_of(hits)
            candidates = self.composer.shortlist(
                hits, config, decision.tokens, use_model=decision.use_model, signals=signals
            )
            shown = [*explicit, *(c.memory for c in candidates)]
            verdicts = self.verdicts.for_answer(shown) if self.verdicts is not None else None
            with known_verdicts(verdicts):  # texts scanned before are not scanned again
                with trace.stage("expand"):
                    expansion = decide(
                        candidates,
                        analysis,
                        self.profile.expansion,
                        explicit=[m.id for m in explicit],
                        requested=self._requested(analysis, turns),
                    )
                    items = self.composer.render_items(
                        explicit, candidates, expansion.layers, query=query
                    )
                full = (
                    self.store.total_line_tokens()
                )  # one reading: the savings line and the field agree
                with trace.stage("render"):
                    overview = None
                    if self.consolidation.serves(chosen.value):
                        overview = self.consolidation.overview(query, decision.tokens, self.counter)
                    space = decision.tokens - (overview.tokens if overview else 0)

                    def render(these: Sequence[RenderItem]) -> Rendered:
                        return self.composer.render(
                            these,
                            config=config,
                            analysis=analysis,
                            level=chosen,
                            budget=space,
                            now=when,
                            full_history_tokens=full,
                        )

                    uncut = {m.id: m for m in shown}
                    items, rendered = self.composer.whole_first(items, render, whole=uncut)
                    items, rendered = self.composer.whole_if_room(
                        items, rendered, render, whole=uncut
                    )
                    rendered = with_overview(rendered, overview, decision.tokens, self.counter)
                    rendered = restyle(
                        rendered, self.profile.citations, decision.tokens, self.counter
                    )
            named_ids = {m.id for m in explicit}
            result = self.composer.result(
                rendered,
                items=items,
                analysis=analysis,
                level=chosen,
                decision=decision,
                reason=expansion.reason,
                signals={c.id: signals[c.id] for c in candidates if c.id not in named_ids},
                tiers={c.id: c.tiers for c in candidates},
                full_history_tokens=full,
                trace=trace,
            )
            with self._lock:
                self._last_ids = tuple(i.id for i in result.items)
                self._last_analysis = analysis
            if verdicts is not None and verdicts.missed:
                self._keep_verdicts([i.memory for i in items], shown=True)
            return result

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
        """One memory in full detail, with its neighbours' citations (``mem:a7Bc3x`` or an id);
        a summary's id (``sum:...``, ``ses:...``) shows the summary at its three levels."""
        self._check_open()
        self._follow_replicas()
        memory = self._resolve(id_or_citation)
        if memory is None:
            summary = self.consolidation.get(id_or_citation.strip().strip("[]"))
            if summary is not None:  # a consolidated summary is citable too: its three levels
                return f"{summary.index_line}\n\n{summary.paragraph}\n\n{summary.full_text}"
            raise MemoryNotFoundError(f"no memory has the id or citation {id_or_citation!r}")
        return self.caches.detail(
            memory.id, memory.session_id, self._detail_style, lambda: self.composer.detail(memory)
        )

    def _follow_replicas(self) -> None:
        """Another replica wrote to this namespace's PostgreSQL archive: the store reloaded
        its hot set; the caches, built on what this replica saw before, start afresh."""
        if self.store.follow_other_writers():
            self.caches.clear()

    def resolve(self, id_or_citation: str) -> Memory | None:
        """The memory an id or a citation (``mem:a7Bc3x``, ``[mem:a7Bc3x]``) names, or None."""
        self._check_open()
        return self._resolve(id_or_citation)

    def feedback(
        self, result: DisclosureResult, reply: str, *, session_id: str | None = None
    ) -> FeedbackReport:
        """Record what ``reply`` used of ``result``: it teaches the budget and the lifecycle,
        and the citation log keeps which memories it used (``session_id``: the caller's)."""
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
        used = set(report.used)
        usage = Usage(
            budget=result.budget,
            tokens_used=result.tokens_used,
            depth=report.depth,
            used=len(used),
            disclosed=len(result.items),
            truncated=bool(result.omitted),
            probe=result.budget_probe,
            signals=tuple(
                (signals, item.id in used)
                for item in result.items
                if (signals := _signals(item, result)) is not None
            ),
        )
        self.budget.record(result.level, usage)
        if report.used:
            self.store.record_use(report.used)
        citations = {item.id: item.citation for item in result.items}
        self.citation_log.record(
            used=[(i, citations.get(i, ""), i in report.cited) for i in report.used],
            query=redacted_text(
                result.analysis.query, redact_secrets=self.profile.tiers.ingest.redact_secrets
            ),
            level=result.level.value,
            session_id=session_id,
            budget=result.budget,
            tokens_used=result.tokens_used,
            full_history_tokens=result.full_history_tokens,
        )
        return report

    def stats(self) -> dict[str, Any]:
        """Counts per tier, pending embeddings, disk, caches, learned budgets, replies per level."""
        self._check_open()
        factors = {
            level.value: {"learned": model is not None, "observations": n}
            for level in DisclosureLevel
            for model, n in [self.budget.model(level)]
        }
        return {
            "profile": self.profile.name,
            "data_dir": str(self.data_dir),
            "store": asdict(self.store.stats()),
            "caches": self.caches.stats(),
            "budget": factors,
            "usage": usage_summary(self.budget),
            "full_history_tokens": self.store.total_line_tokens(),
            "summaries": self.consolidation.stats(),
        }

    def close(self) -> None:
        """Release the tiers, caches and threads. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True)
        if self._scans is not None:
            # a bulk import must not hold up close while its texts are scanned: what is left
            # unscanned is scanned when first shown, as verdicts are only an optimisation
            self._scans.shutdown(wait=True, cancel_futures=True)
        if self._facet_worker is not None:  # before the store it reads: what is left stays pending
            self._facet_worker.close()
        self.store.close()
        if self.verdicts is not None:
            self.verdicts.close()
        self._close_facets()
        self.caches.close()
        self.budget.close()
        self.consolidation.close()
        self.citation_log.close()

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

    def _ids_of(self, references: Sequence[str]) -> list[str]:
        """Ids for ids or citations: a stored id is taken as is, else a citation is resolved
        (an unknown reference is kept: forgetting it removes nothing)."""
        stored = {m.id for m in self.store.get(list(references))}
        resolved = []
        for ref in references:
            memory = None if ref in stored else self._resolve(ref)
            resolved.append(ref if memory is None else memory.id)
        return resolved

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


_LOCAL_SIDE_FILES = ("citations.sqlite3", "summaries.sqlite3", "participants.json")
_REPLICA_FILES = ("cache", "warm")  # a replica's disk caches and warm use counts, before


def _warn_of_unused_side_files(data_dir: Path, *, shared: bool = False) -> None:
    """With a PostgreSQL archive the citation log, summaries and participants live in the
    namespace's schema (and, with every tier on a server, ``shared``, a replica's caches and use
    counts in its memory). Files a replica kept before (or an embedded store in this directory)
    are no longer read, nor erased by a forget: say so, leave them to the operator."""
    names = _LOCAL_SIDE_FILES + (_REPLICA_FILES if shared else ())
    found = [name for name in names if (data_dir / name).exists()]
    if found:
        log.warning(
            "%s holds %s, which this namespace no longer uses: with a PostgreSQL archive its "
            "citation log, summaries and participants live in the database, and a replica keeps "
            "its caches in memory (files a forget does not reach; export them from an embedded "
            "store first if you need them, then delete them)",
            data_dir,
            ", ".join(found),
        )


def _style_of(profile: Profile) -> str:
    """What besides the memory and its session shapes a rendered detail: a cached one is only
    reused under the same formatting and citation settings."""
    settings = (profile.formatting.model_dump_json(), profile.citations.model_dump_json())
    return hashlib.sha256("\x1f".join(settings).encode("utf-8")).hexdigest()[:16]


def _signals(item: DisclosedItem, result: DisclosureResult) -> UseSignals | None:
    """Where a disclosed candidate sat on its query's score curve (None: no candidate)."""
    if item.rank is None or item.relative is None or result.top_score is None:
        return None
    return UseSignals(
        rank=item.rank,
        relative=item.relative,
        score=item.score,
        top_score=result.top_score,
        lead_score=result.lead_score if result.lead_score is not None else 0.0,
        agree=len(item.tiers) >= 2,
    )

"""Gathering: search the tiers a level enables, concurrently, and fuse what they find.

Per level (the profile's ``levels``): ``hot_items`` matches from the working set (topped up with
its "active context", recent and important items, when the query matches fewer), ``warm_items``
nearest vectors, and ``cold_items`` BM25 hits from the archive when ``cold_search`` is on; and,
when the question asks for a kind of answer (places, people, things, dates) and the gathering
index is kept (:mod:`disclosure.core.pipeline.facets`), up to ``fusion.gather_items`` memories
naming an entity of that kind (its named participant's). The lists are fused
(:mod:`disclosure.core.pipeline.fusion`) and the fused order is kept in the index cache under the
corpus's generation, so a repeated query skips the searches and the query embedding; any write
makes the entry unreachable.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future
from datetime import datetime

from analyzers import DisclosureLevel, QueryAnalysis
from disclosure.core.pipeline.alternatives import lift_sides, sides
from disclosure.core.pipeline.caches import DisclosureCaches
from disclosure.core.pipeline.facets import FacetIndex
from disclosure.core.pipeline.fusion import Candidate, fuse
from disclosure.core.pipeline.ranking import Ask, rank
from disclosure.core.pipeline.trace import Trace
from disclosure.core.profiles import FusionConfig, LevelConfig
from tiers import Memory, TieredStore
from tiers.errors import StorageError, TierUnavailableError
from tiers.memory import ScoredMemory

log = logging.getLogger(__name__)

Search = Callable[[], list[ScoredMemory]]
_SIDE_ITEMS = 10  # BM25 hits read for each side of a question that weighs two things


class Gatherer:
    """Concurrent tier searches, fusion, and the index and timeline caches."""

    def __init__(
        self,
        store: TieredStore,
        fusion: FusionConfig,
        caches: DisclosureCaches,
        pool: Executor,
        *,
        facets: FacetIndex | None = None,
        participants: Iterable[str] = (),
    ) -> None:
        """``facets``: the gathering index, if kept; ``participants``: the speakers' names
        (a live collection: read at each query)."""
        self.store = store
        self.fusion = fusion
        self.caches = caches
        self.pool = pool
        self.facets = facets
        self.participants = participants

    def gather(
        self,
        query: str,
        analysis: QueryAnalysis,
        level: DisclosureLevel,
        config: LevelConfig,
        *,
        now: datetime,
        named: Collection[str],
        trace: Trace | None = None,
    ) -> list[Candidate]:
        """Fused candidates for ``query`` at ``level``, best first. ``named``: participants
        the query names (their memories keep their weight; others take the prior). ``trace``
        gets the stage's timings; a tier that fails is a warning there and the others answer
        (a failed warm search is replaced by a cold one); such a degraded answer is not cached."""
        trace = trace or Trace()
        with trace.stage("gather"):
            shape = (config.hot_items, config.warm_items, config.cold_search, config.cold_items)
            key = self.caches.key(
                "index", level.value, query, shape, f"{now:%Y%m%d%H%M}", sorted(named)
            )
            cached = self.caches.get("index", key)
            if cached is not None:
                return self._revive(cached)
            warned = len(trace.warnings)
            lists = self.search_lists(
                query, config, now=now, named=named, trace=trace, analysis=analysis
            )
            candidates = self._rank(lists, query, analysis, config, named)
            if len(trace.warnings) == warned:
                self.caches.set("index", key, [_freeze(c) for c in candidates], later=True)
            return candidates

    def _rank(
        self,
        lists: dict[str, list[ScoredMemory]],
        query: str,
        analysis: QueryAnalysis,
        config: LevelConfig,
        named: Collection[str],
    ) -> list[Candidate]:
        """One ranking of every list: the learned model's, or reciprocal rank fusion."""
        priors = self._priors(lists, named, analysis.entities)
        if self.fusion.method == "learned":
            ask = self.ask(lists, query, analysis, config, named)
            floor = chance_floors(self.fusion, analysis, lists)
            ranked = rank(lists, ask, self.fusion.learned, priors=priors, floor=floor)
            weighed = sides(query) if self.fusion.cover_alternatives else None
            if weighed is not None and config.cold_search:
                return lift_sides(ranked, weighed, self._side_search(config))
            return ranked
        return fuse(
            lists,
            weights=self.fusion.weights,
            k=self.fusion.rrf_k,
            priors=priors,
            session_boost=self.fusion.session_boost,
            session_boost_top=self.fusion.session_boost_top,
        )

    def _side_search(self, config: LevelConfig) -> Callable[[str], list[ScoredMemory]]:
        """The archive's BM25 for one side of a question that weighs two things."""
        depth = max(1, min(config.cold_items, _SIDE_ITEMS))
        return lambda side: self.store.search("cold", side, depth)

    def ask(
        self,
        lists: Mapping[str, Sequence[ScoredMemory]],
        query: str,
        analysis: QueryAnalysis,
        config: LevelConfig,
        named: Collection[str],
    ) -> Ask:
        """What the ranking model reads of the query, the candidates' facets included when the
        query asks for a kind of answer."""
        depths = {"warm": config.warm_items, "cold": config.cold_items}
        facets: Mapping[str, Collection[str]] = {}
        answer = analysis.answer
        if self.facets is not None and answer is not None and answer.labels:
            ids = list(dict.fromkeys(h.memory.id for hits in lists.values() for h in hits))
            facets = self.facets.of(ids)
        return Ask(
            query=query,
            named=tuple(named),
            analysis=analysis,
            depths=depths,
            facets=facets,
            participants=self._participant_names(),
        )

    def _participant_names(self) -> frozenset[str]:
        """Every participant's first name, case-folded: a name answers no "which people"."""
        return frozenset(n.split()[0].casefold() for n in list(self.participants) if n.split())

    def gathered(
        self, analysis: QueryAnalysis, named: Collection[str], limit: int
    ) -> list[ScoredMemory]:
        """The memories naming an entity of a kind the question asks for (a named participant's
        only, when it names one), from the gathering index; [] without one."""
        answer = analysis.answer
        if self.facets is None or answer is None or not answer.labels or limit <= 0:
            return []
        speaker = next(iter(named)) if len(named) == 1 else None
        try:
            found = self.facets.find(
                answer.labels, speaker=speaker, exclude=self._participant_names(), limit=limit
            )
        except StorageError as exc:  # the index only adds candidates: the tiers still answer
            log.warning("the gathering index failed; disclosing without it: %s", exc)
            return []
        memories = {m.id: m for m in self.store.get([i for i, _ in found])}
        hits = [(memories[i], n) for i, n in found if i in memories]
        return [ScoredMemory(m, "facets", 0.0, rank) for rank, (m, _) in enumerate(hits)]

    def neighbours(
        self, memory: Memory, window: int, *, known: Mapping[str, Memory] | None = None
    ) -> list[Memory]:
        """The memories around ``memory`` in its session (itself excluded), through the
        timeline cache. ``known``: memories already in hand, by id, not read again."""
        key = self.caches.key("timeline", memory.id, window, session=memory.session_id)
        ids = self.caches.get("timeline", key)
        if ids is None:
            around = [m for m in self.store.neighbours(memory.id, window) if m.id != memory.id]
            self.caches.set("timeline", key, [m.id for m in around], later=True)
            return around
        have = dict(known or {})
        missing = [i for i in ids if i not in have]
        if missing:
            have.update((m.id, m) for m in self.store.get(missing))
        return [have[i] for i in ids if i in have]

    def prefetch(self, query: str, named: Collection[str]) -> None:
        """Embed the query the warm tier will search in the background, while the caller
        analyses it: the search then finds the vector ready (or waits for it)."""
        if self.fusion.strip_participants:
            query = strip_names(query, named)
        self.pool.submit(self.store.prefetch, query)

    def search_lists(
        self,
        query: str,
        config: LevelConfig,
        *,
        now: datetime,
        named: Collection[str],
        trace: Trace,
        analysis: QueryAnalysis | None = None,
    ) -> dict[str, list[ScoredMemory]]:
        """Each tier's own ranked list for ``query`` at ``config`` (before any fusion), and
        the gathering index's when ``analysis`` asks for a kind of answer."""
        if self.fusion.strip_participants:
            query = strip_names(query, named)
        jobs: dict[str, Search] = {}
        if config.hot_items:
            jobs["hot"] = lambda: self.store.search("hot", query, config.hot_items, now=now)
        if config.warm_items:
            jobs["warm"] = lambda: self.store.search("warm", query, config.warm_items)
        if config.cold_search and config.cold_items:
            jobs["cold"] = lambda: self.store.search("cold", query, config.cold_items)
        if analysis is not None and self.fusion.gather_items and self.facets is not None:
            gather = self.fusion.gather_items
            jobs["facets"] = lambda: self.gathered(analysis, named, gather)
        futures: dict[str, Future[tuple[list[ScoredMemory], float]]] = {
            name: self.pool.submit(_timed, job) for name, job in jobs.items()
        }
        lists: dict[str, list[ScoredMemory]] = {}
        for name, future in futures.items():
            try:
                lists[name], seconds = future.result()
                trace.record(f"search_{name}", seconds)
            except TierUnavailableError as exc:
                log.warning("the %s tier failed; disclosing from the others: %s", name, exc)
                trace.warn(f"{name} tier unavailable ({exc}); answered from the others")
                if name == "warm" and "cold" not in jobs:
                    with trace.stage("search_cold"):
                        lists["cold"] = self.store.search("cold", query, config.warm_items)
        hot = lists.get("hot", [])
        if config.hot_items and len(hot) < config.hot_items:
            taken = {h.id for h in hot}
            active = self.store.active(config.hot_items, now=now)
            lists["active"] = [h for h in active if h.id not in taken][
                : config.hot_items - len(hot)
            ]
        return lists

    def _priors(
        self,
        lists: dict[str, list[ScoredMemory]],
        named: Collection[str],
        entities: Collection[str],
    ) -> dict[str, float]:
        """Per-memory factors: the participant prior and the entity boost, multiplied."""
        memories = {hit.memory.id: hit.memory for hits in lists.values() for hit in hits}
        factors: dict[str, float] = {}
        prior = self.fusion.participant_prior
        if prior < 1.0 and len(named) == 1:  # "what did X say": only when one person is named
            wanted = {n.casefold() for n in named}
            for memory_id, memory in memories.items():
                if (memory.speaker or "").casefold() not in wanted:
                    factors[memory_id] = prior
        sought = _sought(entities, named) if self.fusion.entity_boost > 0 else []
        for memory_id, memory in memories.items():
            share = _mentioned(memory, sought)
            if share:
                boost = 1 + self.fusion.entity_boost * share
                factors[memory_id] = factors.get(memory_id, 1.0) * boost
        return factors

    def _revive(
        self, frozen: Sequence[tuple[str, float, float, str, tuple[str, ...]]]
    ) -> list[Candidate]:
        memories = {m.id: m for m in self.store.get([row[0] for row in frozen])}
        return [
            Candidate(memories[i], score, fused, tier, tuple(tiers))
            for i, score, fused, tier, tiers in frozen
            if i in memories
        ]


def strip_names(query: str, names: Collection[str]) -> str:
    """``query`` without the given names (whole words, any case, possessives included)."""
    if not names:
        return query
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    stripped = re.sub(rf"\b(?:{pattern})(?:'s|\u2019s)?\b", " ", query, flags=re.IGNORECASE)
    stripped = re.sub(r"\s+", " ", stripped).strip()
    return stripped or query


def _freeze(c: Candidate) -> tuple[str, float, float, str, tuple[str, ...]]:
    return (c.id, c.score, c.fused, c.tier, c.tiers)


def _timed(job: Search) -> tuple[list[ScoredMemory], float]:
    """The job's hits and the seconds it took (timed in the worker that runs it)."""
    started = time.perf_counter()
    hits = job()
    return hits, time.perf_counter() - started


def _sought(entities: Collection[str], named: Collection[str]) -> list[str]:
    """The query's entities worth matching: case-folded, participants left to their prior."""
    people = {n.casefold() for n in named}
    return sorted({e.casefold() for e in entities if len(e) >= 2} - people)


def _mentioned(memory: Memory, sought: Sequence[str]) -> float:
    """The share of ``sought`` that ``memory`` names (in its entities or its content)."""
    if not sought:
        return 0.0
    own = {e.casefold() for e in memory.entities}
    text = memory.content.casefold()
    return sum(1 for e in sought if e in own or e in text) / len(sought)


def chance_floors(
    fusion: FusionConfig, analysis: QueryAnalysis, lists: Mapping[str, Sequence[object]]
) -> tuple[float, float] | None:
    """The learned ranking's ``(absolute, relative)`` chance floors for this query, or None.

    None when both floors are 0, or when the vector or the BM25 list is missing or empty: with a
    tier disabled or down every chance is underestimated and a floor would drop too much. A
    query that asks for a set or a count has both floors times ``fusion.gather_floor_scale``."""
    if not (fusion.min_chance or fusion.relative_chance):
        return None
    if not (lists.get("warm") and lists.get("cold")):
        return None
    scale = fusion.gather_floor_scale if "enumeration" in analysis.detected_signals else 1.0
    return (fusion.min_chance * scale, fusion.relative_chance * scale)

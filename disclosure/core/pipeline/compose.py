"""Composing a disclosure: which candidates go to the formatter, as which items, and the
result that accounts for every token.

The controller gathers and decides the expansion; the :class:`Composer` turns that into
:class:`~formatters.RenderItem` s (named memories first, then the expanded ones, then the rest
by rank), renders them with the level's formatter inside the exact budget, and builds the
:class:`~disclosure.core.result.DisclosureResult`. It works from the memories fusion already holds:
the store is read only for what is not in hand (an earlier disclosure's items that "tell me
more" asks about, neighbours for timelines) and once for the context's citations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

import numpy as np

from analyzers import DisclosureLevel, QueryAnalysis
from disclosure.core.pipeline.budget import BudgetDecision
from disclosure.core.pipeline.excerpts import excerpt
from disclosure.core.pipeline.fusion import Candidate
from disclosure.core.pipeline.gather import Gatherer
from disclosure.core.pipeline.spend import (
    ITEM_OVERHEAD,
    Shape,
    decide,
    query_signals,
    question_price,
)
from disclosure.core.pipeline.trace import Trace
from disclosure.core.pipeline.usemodel import UseModel, UseSignals, signals_of
from disclosure.core.profiles import LevelConfig, Profile
from disclosure.core.result import DisclosedItem, DisclosureResult
from formatters import (
    Layer,
    Rendered,
    RenderItem,
    TokenCounter,
    WrapperInfo,
    format_citation,
    get_formatter,
    render_context,
)
from tiers import Memory, TieredStore

_LINE_OVERHEAD = 4  # speaker, separator, newline: what a content line costs beyond the content
_POOL_BUDGETS = 3  # candidates worth this many budgets of content reach the formatter
_UNBOUNDED = 1_000_000  # a detail shown on request is shown whole


class Composer:
    """From candidates and layers to rendered text and its accounting."""

    def __init__(
        self, profile: Profile, store: TieredStore, gatherer: Gatherer, counter: TokenCounter
    ) -> None:
        self.profile = profile
        self.store = store
        self.gatherer = gatherer
        self.counter = counter

    def shortlist(
        self,
        hits: Sequence[Candidate],
        config: LevelConfig,
        budget: int,
        *,
        use_model: UseModel | None = None,
        signals: Mapping[str, UseSignals] | None = None,
    ) -> list[Candidate]:
        """The candidates worth handing to the formatter, best first.

        Drops those under ``min_score``. With a learned ``use_model`` (the adaptive budget's,
        reading each candidate's ``signals``), keeps the candidates it expects a reply to
        use, whatever their rank; otherwise applies the level's score-adaptive cut-off once
        ``cutoff_floor`` tokens of content are in. Either way stops once the candidates' content
        adds up to a few budgets (the formatter only needs enough to fill one).
        """
        if use_model is not None:
            found = signals if signals is not None else signals_of(hits)
            hits = [c for c in hits if c.id in found and use_model.keeps(found[c.id])]
        hits, costs = self.packing(hits)
        kept: list[Candidate] = []
        best = max((c.fused for c in hits), default=0.0)
        used = 0
        for candidate in hits:
            if candidate.score < config.min_score:
                continue
            if (
                use_model is None
                and config.cutoff
                and used >= config.cutoff_floor
                and (candidate.fused < config.cutoff * best)
            ):
                break
            kept.append(candidate)
            used += costs[candidate.id]
            if used >= _POOL_BUDGETS * budget:
                break
        return kept

    def packing(self, hits: Sequence[Candidate]) -> tuple[list[Candidate], dict[str, int]]:
        """``hits`` in the order they are packed (chance per token^``fusion.token_cost``) and
        what each one's line costs (content and speaker; the citation comes on top)."""
        costs = self._costs(hits)
        return self._by_value(hits, costs), costs

    def by_need(
        self,
        decision: BudgetDecision,
        hits: Sequence[Candidate],
        analysis: QueryAnalysis,
        named: int,
    ) -> BudgetDecision:
        """``decision`` with its budget set by need (:mod:`disclosure.core.pipeline.spend`) when it
        is a starting budget and the profile spends by need; else as it is. A query that says how
        much it wants ("quick: ...", "give me the full context") keeps the starting budget its
        words give: an explicit ask is not second-guessed (no dev question has one)."""
        need = self.profile.budget.need
        if not decision.by_need or not need.enabled or not hits:
            return decision
        if analysis.override is not None:
            asked = f"; asked for in so many words ({analysis.override!r}): not spent by need"
            return replace(decision, reason=decision.reason + asked, by_need=False)
        ordered, costs = self.packing(hits)
        shape = Shape(
            chances=np.array([c.fused for c in ordered], dtype=float),
            costs=np.array([costs[c.id] - _LINE_OVERHEAD + ITEM_OVERHEAD for c in ordered]),
            groups=[(c.memory.session_id, f"{c.memory.timestamp:%Y%m%d}") for c in ordered],
            query=query_signals(analysis, named),
        )
        price = question_price(analysis.query, need.price, need.reckoning_price)
        found = decide(shape, need.weights, price=price, ceiling=decision.ceiling)
        tokens, reason = found.tokens, found.reason
        if price != need.price:
            reason += (
                f"; the question reckons time across events: priced at {price:.3g} "
                f"(budget.need.reckoning_price {need.reckoning_price:g})"
            )
        least = min(need.gather_min, decision.ceiling)
        if tokens < least and "enumeration" in analysis.detected_signals:
            tokens = least
            reason += f"; raised to {least}: a set or a count is asked for (budget.need.gather_min)"
        return replace(decision, tokens=tokens, reason=f"{reason}; ceiling {decision.ceiling}",
                       by_need=False)  # fmt: skip

    def _costs(self, hits: Sequence[Candidate]) -> dict[str, int]:
        """What each candidate's line costs: the archive's count, else counted here."""
        known = self.store.line_tokens([c.id for c in hits])
        # counted only when the archive has no count (a default argument would count them all)
        return {
            c.id: (known[c.id] if c.id in known else self.counter(c.memory.content))
            + _LINE_OVERHEAD
            for c in hits
        }

    def _by_value(self, hits: Sequence[Candidate], costs: Mapping[str, int]) -> list[Candidate]:
        """Candidates by chance of use per token (``fusion.token_cost`` the token's exponent);
        the order as ranked when the exponent is 0."""
        exponent = self.profile.fusion.token_cost
        if exponent <= 0 or not hits:
            return list(hits)

        def value(candidate: Candidate) -> float:
            chance = max(candidate.fused, 1e-12)
            return math.log(chance) - exponent * math.log(costs[candidate.id])

        return sorted(hits, key=value, reverse=True)

    def render_items(
        self,
        explicit: Sequence[Memory],
        candidates: Sequence[Candidate],
        layers: Mapping[str, Layer],
        *,
        query: str = "",
    ) -> list[RenderItem]:
        """Priority order: named memories first, then the expanded ones in the order the
        expansion chose them, then the rest by rank. Index-layer memories longer than
        ``formatting.excerpt_tokens`` become their excerpt about ``query``."""
        window = self.profile.expansion.timeline_window
        plan: list[tuple[Memory, float, str, Layer, int]] = [
            (m, 1.0, "cold", Layer.DETAIL, min(window, 1)) for m in explicit
        ]
        seen = {m.id for m in explicit}
        found = {c.id: c for c in candidates}
        chosen = [i for i in layers if i not in seen]
        in_hand = {c.id: c.memory for c in candidates} | {m.id: m for m in explicit}
        missing = [i for i in chosen if i not in found]  # "tell me more" about earlier items
        in_hand |= {m.id: m for m in self.store.get(missing)} if missing else {}
        for memory_id in chosen:
            hit = found.get(memory_id)
            memory = in_hand.get(memory_id)
            if memory is not None:
                score, tier = (hit.score, hit.tier) if hit else (1.0, "cold")
                plan.append((memory, score, tier, layers[memory_id], window))
                seen.add(memory_id)
        plan += [
            (c.memory, c.score, c.tier, Layer.INDEX, window) for c in candidates if c.id not in seen
        ]
        around = {
            m.id: self.gatherer.neighbours(m, w, known=in_hand)
            for m, _, _, layer, w in plan
            if layer is not Layer.INDEX and w > 0
        }
        ids = [m.id for m, *_ in plan] + [n.id for ns in around.values() for n in ns]
        cites = self.citations(ids)  # one lookup for the whole context
        cut = self._excerpts([m for m, _, _, layer, _ in plan if layer is Layer.INDEX], query)
        return [
            self.item(
                cut[m.id][0] if m.id in cut else m,
                score,
                tier,
                layer,
                neighbours=around.get(m.id, []),
                cites=cites,
                omitted_tokens=cut[m.id][1] if m.id in cut else 0,
            )
            for m, score, tier, layer, _ in plan
        ]

    def _excerpts(self, memories: Sequence[Memory], query: str) -> dict[str, tuple[Memory, int]]:
        """Per long memory: a copy holding its excerpt about ``query``, and the tokens cut."""
        cap = self.profile.formatting.excerpt_tokens
        if not cap or not query or not memories:
            return {}
        lines = self.store.line_tokens([m.id for m in memories])
        long = [m for m in memories if lines.get(m.id, cap + 1) > cap]
        if not long:
            return {}
        terms = self.store.tokenizer.query(query)
        out = {}
        for memory in long:
            found = excerpt(
                memory.content,
                terms,
                tokenizer=self.store.tokenizer,
                counter=self.counter,
                limit=cap,
            )
            if found is not None:
                copy = memory.model_copy(update={"content": found.text})
                out[memory.id] = (copy, found.omitted_tokens)
        return out

    def item(
        self,
        memory: Memory,
        score: float,
        tier: str,
        layer: Layer,
        *,
        neighbours: Sequence[Memory],
        cites: Mapping[str, str],
        omitted_tokens: int = 0,
    ) -> RenderItem:
        return RenderItem(
            memory=memory,
            citation=cites.get(memory.id, ""),
            score=min(max(score, 0.0), 1.0),
            tier=tier,
            layer=layer,
            neighbours=tuple(neighbours),
            neighbour_citations=tuple(cites.get(n.id, "") for n in neighbours) if cites else (),
            omitted_tokens=omitted_tokens,
        )

    def detail(self, memory: Memory) -> str:
        """``memory`` in full, with its neighbours' citations (what ``show`` answers)."""
        neighbours = self.gatherer.neighbours(memory, 1)
        cites = self.citations([memory.id, *(n.id for n in neighbours)])
        item = self.item(memory, 1.0, "cold", Layer.DETAIL, neighbours=neighbours, cites=cites)
        fmt = get_formatter("detail", self.profile.formatting)
        return fmt.render([item], budget=_UNBOUNDED, counter=self.counter).text

    def citations(self, ids: Sequence[str]) -> dict[str, str]:
        if not self.profile.citations.enabled:
            return {}
        prefix = self.profile.citations.prefix
        return {i: format_citation(c, prefix) for i, c in self.store.citation_of(ids).items()}

    def render(
        self,
        items: Sequence[RenderItem],
        *,
        config: LevelConfig,
        analysis: QueryAnalysis,
        level: DisclosureLevel,
        budget: int,
        now: datetime,
        full_history_tokens: int,
    ) -> Rendered:
        fmt = get_formatter(config.formatter, self.profile.formatting)
        info = WrapperInfo(
            level=level.value,
            signals=analysis.detected_signals,
            complexity=analysis.complexity,
            full_history_tokens=full_history_tokens,
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

    def whole_first(
        self,
        items: Sequence[RenderItem],
        render: Callable[[Sequence[RenderItem]], Rendered],
        *,
        whole: Mapping[str, Memory],
    ) -> tuple[list[RenderItem], Rendered]:
        """Excerpts shown whole where they fit in packing order (``excerpt_whole_first``).

        The candidates' order and the budget chosen by need both count a long memory at its
        whole length, so packing its excerpt instead frees room that goes to candidates after
        it, while the memory itself is shown only in part. Here each excerpted memory is put
        back whole and the items packed; those that then no longer fit (or fit only cut)
        go back to their excerpt and the items are packed once more. ``whole``: the memories in
        hand, uncut, by id (others are read from the archive)."""
        cut = [n for n, item in enumerate(items) if item.omitted_tokens]
        if not cut or not self.profile.formatting.excerpt_whole_first:
            return list(items), render(items)
        found = self._uncut([items[n].memory.id for n in cut], whole)
        grown = list(items)
        for n in cut:
            memory = found.get(items[n].memory.id)
            if memory is not None:
                grown[n] = replace(grown[n], memory=memory, omitted_tokens=0)
        again = render(grown)
        fitted = {i.id for i in again.items if not i.truncated}
        back = [n for n in cut if grown[n].memory.id not in fitted and not grown[n].omitted_tokens]
        if back:
            for n in back:
                grown[n] = items[n]
            again = render(grown)
        return grown, again

    def _uncut(self, ids: Sequence[str], whole: Mapping[str, Memory]) -> Mapping[str, Memory]:
        """``whole`` (the memories in hand, uncut, by id) with those of ``ids`` it lacks read
        from the archive."""
        missing = [i for i in ids if i not in whole]
        return {**whole, **{m.id: m for m in self.store.get(missing)}} if missing else whole

    def whole_if_room(
        self,
        items: Sequence[RenderItem],
        rendered: Rendered,
        render: Callable[[Sequence[RenderItem]], Rendered],
        *,
        whole: Mapping[str, Memory],
    ) -> tuple[list[RenderItem], Rendered]:
        """Excerpts shown whole again where the budget the packing left unspent holds the rest.

        An excerpt keeps a long memory from crowding out other candidates; once everything that
        was to be shown is in and the budget still has room, the rest of the likeliest excerpted
        memories goes in too (the text around the part the query named is often what answers
        it). ``render`` packs items as the first rendering did; the second rendering is kept
        only if it shows every item the first showed, within the same budget. ``whole``: the
        memories in hand, uncut, by id (others are read from the archive)."""
        if not self.profile.formatting.excerpt_whole_if_room:
            return list(items), rendered
        room = rendered.budget - rendered.tokens
        shown = {i.id for i in rendered.items}
        grown = list(items)
        wanted: dict[str, int] = {}
        for n, item in enumerate(items):
            omitted = item.omitted_tokens
            if omitted and item.memory.id in shown and omitted <= room:
                wanted[item.memory.id] = n
                room -= omitted
        if not wanted:
            return list(items), rendered
        found = self._uncut(list(wanted), whole)
        for memory_id, n in wanted.items():
            if memory_id in found:
                grown[n] = replace(grown[n], memory=found[memory_id], omitted_tokens=0)
        again = render(grown)
        if shown <= {i.id for i in again.items} and again.tokens <= rendered.budget:
            return grown, again
        return list(items), rendered

    def result(
        self,
        rendered: Rendered,
        *,
        items: Sequence[RenderItem],
        analysis: QueryAnalysis,
        level: DisclosureLevel,
        decision: BudgetDecision,
        reason: str,
        signals: Mapping[str, UseSignals],
        tiers: Mapping[str, tuple[str, ...]],
        full_history_tokens: int,
        trace: Trace,
    ) -> DisclosureResult:
        """The result; ``signals`` and ``tiers`` of the candidates among the items (not of
        those named by id); the stage timings and warnings from ``trace``."""
        priority = {item.id: rank for rank, item in enumerate(items)}
        omitted = {item.id: item.omitted_tokens for item in items if item.omitted_tokens}
        shown = sorted(rendered.items, key=lambda r: priority.get(r.id, len(priority)))
        disclosed = tuple(
            DisclosedItem(
                id=r.id,
                citation=r.citation,
                tier=r.tier,
                layer=r.layer,
                score=r.score,
                tokens=r.tokens,
                rank=s.rank if (s := signals.get(r.id)) else None,
                relative=s.relative if s else None,
                tiers=tiers.get(r.id, ()),
                excerpt=r.id in omitted,
                omitted_tokens=omitted.get(r.id, 0),
            )
            for r in shown
        )
        curve = next(iter(signals.values()), None)
        return DisclosureResult(
            text=rendered.text,
            items=disclosed,
            level=level,
            analysis=analysis,
            budget=decision.tokens,
            tokens_used=rendered.tokens,
            full_history_tokens=full_history_tokens,
            expansion_reason=reason if disclosed else None,
            tokens_exact=self.counter.exact,
            budget_reason=decision.reason,
            budget_probe=decision.probe,
            profile=self.profile.name,
            omitted=rendered.omitted,
            top_score=curve.top_score if curve else None,
            lead_score=curve.lead_score if curve else None,
            timings_ms=trace.finish(),
            warnings=tuple(trace.warnings),
        )

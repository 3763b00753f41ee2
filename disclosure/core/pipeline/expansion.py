"""When to disclose more than an index line: the expansion rules.

Layer 1 (index) is always there. The rules, in order, each on normalised confidences:

1. ``explicit_id``: the query names memories (``show mem_12``, ``[mem:a7Bc3x]``): full detail for
   each, with its timeline; these do not count against ``max_auto_expansions``.
2. ``user_request``: "tell me more" and the like: full detail for the items it points at (the
   previous disclosure's best items when there is one, else this query's best).
3. ``high_confidence``: the best candidate scores >= ``high_confidence`` and no other does: detail.
4. ``clear_winner``: the best scores >= ``clear_winner`` and leads the second by
   ``clear_winner_gap``: detail.
5. ``ambiguous_results``: the third best still scores >= ``ambiguity``: several near-equal
   answers, so the timeline around the top three shows how they relate.
6. ``temporal_proximity``: the query names a time and nothing above fired: the timeline around
   the best candidate that falls in the named range.
7. otherwise ``low_confidence``: index only.

At most ``max_auto_expansions`` items are expanded by rules 2-6.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from analyzers import QueryAnalysis
from disclosure.core.pipeline.fusion import Candidate
from disclosure.core.profiles import ExpansionConfig
from formatters.base import Layer


@dataclass(frozen=True)
class Expansion:
    """Which candidates read beyond the index layer, and why."""

    layers: dict[str, Layer] = field(default_factory=dict)
    reason: str = "low_confidence"

    def layer(self, memory_id: str) -> Layer:
        return self.layers.get(memory_id, Layer.INDEX)


def decide(
    candidates: Sequence[Candidate],
    analysis: QueryAnalysis,
    config: ExpansionConfig,
    *,
    explicit: Sequence[str] = (),
    requested: Sequence[str] = (),
) -> Expansion:
    """The expansion for this query. ``explicit``: ids the query named (resolved);
    ``requested``: what a "tell me more" points at (the previous disclosure's best ids)."""
    layers = {memory_id: Layer.DETAIL for memory_id in explicit}
    reasons = ["explicit_id"] if explicit else []
    limit = config.max_auto_expansions
    automatic = _automatic(candidates, analysis, config, requested, limit)
    if automatic is not None:
        reason, ids, layer = automatic
        for memory_id in ids[:limit]:
            layers.setdefault(memory_id, layer)
        reasons.append(reason)
    return Expansion(layers, "+".join(reasons) if reasons else "low_confidence")


def _automatic(
    candidates: Sequence[Candidate],
    analysis: QueryAnalysis,
    config: ExpansionConfig,
    requested: Sequence[str],
    limit: int,
) -> tuple[str, list[str], Layer] | None:
    if limit <= 0 or (not candidates and not requested):
        return None
    if analysis.expansion_request and not analysis.explicit_ids:
        targets = list(requested) or [c.id for c in candidates[:limit]]
        return "user_request", targets, Layer.DETAIL
    scores = sorted((c.score for c in candidates), reverse=True)
    by_score = sorted(candidates, key=lambda c: -c.score)
    top = by_score[0] if by_score else None
    if top is None:
        return None
    second = scores[1] if len(scores) > 1 else 0.0
    if scores[0] >= config.high_confidence and second < config.high_confidence:
        return "high_confidence", [top.id], Layer.DETAIL
    if scores[0] >= config.clear_winner and scores[0] - second >= config.clear_winner_gap:
        return "clear_winner", [top.id], Layer.DETAIL
    if len(scores) >= 3 and scores[2] >= config.ambiguity:
        return "ambiguous_results", [c.id for c in by_score[:3]], Layer.TIMELINE
    temporal = analysis.temporal
    if temporal is not None and temporal.start is not None and temporal.end is not None:
        in_range = [c for c in candidates if temporal.start <= c.memory.timestamp < temporal.end]
        if in_range:
            return "temporal_proximity", [in_range[0].id], Layer.TIMELINE
    return None

"""Fusing the tiers' ranked lists: reciprocal rank fusion with per-list weights.

Each tier ranks with its own scale; rank fusion only trusts the order::

    fused(m) = prior(m) x sum over lists L that hold m of  weight(L) / (k + rank_L(m) + 1)

Lists are deduplicated by id: a memory found by several tiers counts once, keeps every list's
contribution, and reads as coming from the tier that ranked it best.

Then, optionally, a *session boost* (memories of the sessions that hold the best hits rise: an
answer's context sits near it) and *priors* (per-memory factors, e.g. the participant prior).

The *confidence* of a candidate, the score the expansion thresholds (0.92, 0.85, 0.80) are read
against, is not the fused value (RRF sums are tiny and depend on how many lists ran) but the best
of its tiers' own normalised scores. Every tier reports scores on one meaning of [0, 1]: the warm
tier cosine similarity, the cold and hot tiers the share of the query's IDF-weighted evidence a
memory carries (``tiers.bm25``). So 0.92 means "matches nearly all of the query" whichever tier
found the item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tiers.memory import Memory, ScoredMemory


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory after fusion: its confidence, its fused rank value and who found it."""

    memory: Memory
    score: float  # confidence in [0, 1]: the best normalised tier score
    fused: float  # the reciprocal-rank-fusion value that orders candidates
    tier: str  # the tier that ranked it best
    tiers: tuple[str, ...]  # every list that found it

    @property
    def id(self) -> str:
        return self.memory.id


def fuse(
    lists: Mapping[str, Sequence[ScoredMemory]],
    *,
    weights: Mapping[str, float],
    k: int = 60,
    priors: Mapping[str, float] | None = None,
    session_boost: float = 0.0,
    session_boost_top: int = 10,
) -> list[Candidate]:
    """Candidates from every list, best first. ``priors`` multiply a memory's fused value;
    ``session_boost`` g multiplies it by ``1 + g x mass(session) / max mass``, where a
    session's mass is the fused value of its memories among the ``session_boost_top`` best."""
    fused: dict[str, float] = {}
    best: dict[str, tuple[int, float, ScoredMemory]] = {}  # id -> (rank, -weight, hit)
    confidence: dict[str, float] = {}
    found_by: dict[str, list[str]] = {}
    for name, hits in lists.items():
        weight = weights.get(name, 1.0)
        if weight <= 0:
            continue
        for rank, hit in enumerate(hits):
            fused[hit.id] = fused.get(hit.id, 0.0) + weight / (k + rank + 1)
            confidence[hit.id] = max(confidence.get(hit.id, 0.0), hit.score)
            found_by.setdefault(hit.id, []).append(name)
            key = (rank, -weight, hit)
            if hit.id not in best or key[:2] < best[hit.id][:2]:
                best[hit.id] = key
    if session_boost > 0 and fused:
        _boost_sessions(fused, best, session_boost, session_boost_top)
    if priors:
        for memory_id, prior in priors.items():
            if memory_id in fused:
                fused[memory_id] *= prior
    order = sorted(fused, key=lambda i: (-fused[i], -confidence[i], i))
    return [
        Candidate(
            memory=best[i][2].memory,
            score=min(max(confidence[i], 0.0), 1.0),
            fused=fused[i],
            tier=best[i][2].tier,
            tiers=tuple(dict.fromkeys(found_by[i])),
        )
        for i in order
    ]


def _boost_sessions(
    fused: dict[str, float],
    best: Mapping[str, tuple[int, float, ScoredMemory]],
    boost: float,
    top: int,
) -> None:
    leaders = sorted(fused, key=lambda i: -fused[i])[:top]
    mass: dict[str, float] = {}
    for memory_id in leaders:
        session = best[memory_id][2].memory.session_id
        mass[session] = mass.get(session, 0.0) + fused[memory_id]
    heaviest = max(mass.values())
    for memory_id in fused:
        session = best[memory_id][2].memory.session_id
        fused[memory_id] *= 1 + boost * mass.get(session, 0.0) / heaviest

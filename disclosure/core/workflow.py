"""claude-mem's three-step workflow over one controller: search -> timeline -> details.

Layer 1, :func:`search_index`: an index of the best matches across every tier (citation, id,
one-line summary, score), cheap enough to scan. Layer 2, :func:`timeline`: what was said around
chosen hits, in their sessions, the hit marked. Layer 3, :func:`details`: chosen memories in
full. The MCP server exposes them as tools; an agent spends tokens only where a step pays off.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from analyzers import DisclosureLevel
from formatters import Layer, RenderItem, format_citation, get_formatter, one_line_summary
from tiers.errors import InvalidInputError, MemoryNotFoundError
from tiers.memory import Memory

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.core.pipeline.fusion import Candidate

MAX_RESULTS = 100
MAX_WINDOW = 20
_NO_LIMIT = 1_000_000

__all__ = [
    "MAX_RESULTS",
    "MAX_WINDOW",
    "IndexEntry",
    "details",
    "ranked",
    "resolve_all",
    "search_index",
    "timeline",
]


class IndexEntry(BaseModel):
    """One line of the layer-1 index (the HTTP API and the MCP server return it as is)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    citation: str
    id: str
    summary: str
    score: float
    tier: str
    session_id: str
    timestamp: str
    speaker: str | None

    def line(self) -> str:
        who = f"{self.speaker}: " if self.speaker else ""
        return f"[{self.citation}] {self.score:.2f} {self.timestamp[:10]} {who}{self.summary}"


def search_index(
    controller: DisclosureController,
    query: str,
    *,
    limit: int = 10,
    now: datetime | None = None,
) -> list[IndexEntry]:
    """The ``limit`` best matches for ``query`` across every tier, best first."""
    if not 1 <= limit <= MAX_RESULTS:
        raise InvalidInputError(f"limit must lie between 1 and {MAX_RESULTS}, not {limit}")
    hits = ranked(controller, query, depth=limit, now=now)[:limit]
    cites = _citations(controller, [h.id for h in hits])
    return [
        IndexEntry(
            citation=cites.get(h.id, h.id),
            id=h.id,
            summary=h.memory.summary or one_line_summary(h.memory.content),
            score=round(h.score, 4),
            tier=h.tier,
            session_id=h.memory.session_id,
            timestamp=h.memory.timestamp.isoformat(),
            speaker=h.memory.speaker,
        )
        for h in hits
    ]


def ranked(
    controller: DisclosureController,
    query: str,
    *,
    depth: int,
    now: datetime | None = None,
) -> list[Candidate]:
    """Every tier searched ``depth`` deep for ``query`` (at the comprehensive level, the
    archive too) and the lists fused, best first: the candidates an index is cut from. A
    failed tier degrades the answer like it degrades disclose."""
    if not query.strip():
        raise InvalidInputError("query must not be empty")
    when = now or datetime.now(UTC)
    level = DisclosureLevel.COMPREHENSIVE
    base = controller.profile.levels[level]
    config = base.model_copy(
        update={
            "hot_items": max(base.hot_items, depth),
            "warm_items": max(base.warm_items, depth),
            "cold_search": True,
            "cold_items": max(base.cold_items, depth),
        }
    )
    analysis = controller.analyzer.analyze(query, now=when)
    return controller.gatherer.gather(
        query,
        analysis,
        level,
        config,
        now=when,
        named=controller.participants.named_in(query),
    )


def timeline(
    controller: DisclosureController,
    refs: Sequence[str],
    *,
    window: int | None = None,
    now: datetime | None = None,
) -> str:
    """What was said around each referenced memory, in its session, the memory marked."""
    size = controller.profile.expansion.timeline_window if window is None else window
    if not 0 <= size <= MAX_WINDOW:
        raise InvalidInputError(f"window must lie between 0 and {MAX_WINDOW}, not {size}")
    items = []
    for memory in resolve_all(controller, refs):
        neighbours = controller.gatherer.neighbours(memory, size) if size else []
        cites = _citations(controller, [memory.id, *(n.id for n in neighbours)])
        items.append(
            RenderItem(
                memory=memory,
                citation=cites.get(memory.id, ""),
                score=1.0,
                tier="cold",
                layer=Layer.TIMELINE,
                neighbours=tuple(neighbours),
                neighbour_citations=tuple(cites.get(n.id, "") for n in neighbours) if cites else (),
            )
        )
    fmt = get_formatter("timeline", controller.profile.formatting)
    return fmt.render(items, budget=_NO_LIMIT, counter=controller.counter, now=now).text


def details(controller: DisclosureController, refs: Sequence[str]) -> list[tuple[str, str]]:
    """Each referenced memory in full detail: ``(ref, text)`` pairs, in the order asked."""
    return [(ref, controller.show(ref)) for ref in _check_refs(refs)]


def resolve_all(controller: DisclosureController, refs: Sequence[str]) -> list[Memory]:
    """The memories ``refs`` (ids or citations) name, each once; an unknown one is an error."""
    found = []
    for ref in _check_refs(refs):
        memory = controller.resolve(ref)
        if memory is None:
            raise MemoryNotFoundError(f"no memory has the id or citation {ref!r}")
        found.append(memory)
    return found


def _check_refs(refs: Sequence[str]) -> list[str]:
    if isinstance(refs, str):
        refs = [refs]
    if not refs:
        raise InvalidInputError("give at least one id or citation")
    if len(refs) > MAX_RESULTS:
        raise InvalidInputError(f"at most {MAX_RESULTS} ids or citations at once, not {len(refs)}")
    return list(dict.fromkeys(refs))


def _citations(controller: DisclosureController, ids: Sequence[str]) -> dict[str, str]:
    settings = controller.profile.citations
    if not settings.enabled:
        return {}
    codes = controller.store.citation_of(list(ids))
    return {i: format_citation(c, settings.prefix) for i, c in codes.items()}

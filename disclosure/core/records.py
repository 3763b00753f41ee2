"""What the mem0-style facade (:mod:`disclosure.faces.memories`) returns: plain, JSON-ready records.

The HTTP API returns the same models, so a memory reads alike from Python and over HTTP.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tiers.memory import Memory, MemoryKind
from tiers.reports import ForgetReport

AddEvent = Literal["ADD", "UPDATE", "NONE"]

__all__ = [
    "AddEvent",
    "AddResult",
    "AddedMemory",
    "DeleteResult",
    "MemoryHit",
    "MemoryPage",
    "MemoryRecord",
    "MemoryVersionRecord",
]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MemoryRecord(_Record):
    """One stored memory, as the facade and the HTTP API show it."""

    id: str
    citation: str = Field(description="the short reference disclosed contexts cite, mem:xxxxxx")
    content: str
    summary: str | None
    session_id: str
    timestamp: datetime
    kind: MemoryKind
    speaker: str | None
    entities: list[str]
    importance: float
    metadata: dict[str, Any]

    @classmethod
    def of(cls, memory: Memory, citation: str) -> MemoryRecord:
        return cls(
            id=memory.id,
            citation=citation,
            content=memory.content,
            summary=memory.summary,
            session_id=memory.session_id,
            timestamp=memory.timestamp,
            kind=memory.kind,
            speaker=memory.speaker,
            entities=list(memory.entities),
            importance=memory.importance,
            metadata=dict(memory.metadata),
        )


class MemoryHit(MemoryRecord):
    """A search result: the memory, its score in [0, 1] and the tier that found it."""

    score: float
    tier: str


class AddedMemory(MemoryRecord):
    """A memory ``add`` stored: ``ADD`` (new), ``UPDATE`` (new content for a known id) or
    ``NONE`` (the same id and content were already stored)."""

    event: AddEvent


class AddResult(_Record):
    """What ``add`` did. Every message given is counted once: stored (``results``), skipped
    (no text, or a system/developer instruction, which is not a memory) or ``private``
    (entirely inside ``<private>`` spans, so never stored)."""

    results: list[AddedMemory]
    skipped: int = 0
    private: int = 0
    secrets: int = 0  # secrets replaced by a [redacted:<kind>] marker before storing


class MemoryPage(_Record):
    """Memories in time order; pass ``next_cursor`` back for the next page (None: the end)."""

    items: list[MemoryRecord]
    next_cursor: str | None
    total: int = Field(description="memories in the namespace (or the session), all pages")
    warning: str | None = Field(default=None, description="e.g. the namespace does not exist")


class MemoryVersionRecord(_Record):
    """One version of a memory: 1 the first; ``replaced_at`` None for the current one."""

    version: int
    current: bool
    replaced_at: datetime | None
    memory: MemoryRecord


class DeleteResult(_Record):
    """What a delete removed, from every tier, cache and earlier version."""

    count: int
    ids: list[str]
    citations: list[str]
    sessions: list[str]

    @classmethod
    def of(cls, report: ForgetReport) -> DeleteResult:
        return cls(
            count=report.count,
            ids=list(report.ids),
            citations=list(report.citations),
            sessions=list(report.sessions),
        )

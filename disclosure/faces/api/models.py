"""The HTTP API's request and response bodies (they make its OpenAPI schema)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from analyzers import DisclosureLevel
from disclosure.core.records import MemoryRecord
from disclosure.core.result import DisclosedItem
from disclosure.core.workflow import IndexEntry
from tiers.memory import MAX_ID_LENGTH, MAX_SUMMARY_CHARS, MemoryKind

MAX_CONTENT_CHARS = 100_000
MAX_REF_CHARS = 300
MAX_REPLY_CHARS = 200_000
EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(2999, 12, 31, tzinfo=UTC)

Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Request(_Body):
    # strict: no "1" for 1 or false for 0.0; dates and enums come as JSON strings (lax)
    model_config = ConfigDict(extra="forbid", strict=True)


def _in_range(value: datetime | None) -> datetime | None:
    """Timestamps are taken as UTC when naive and must lie in 1900-2999."""
    if value is None:
        return None
    aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value
    if not EARLIEST <= aware <= LATEST:
        raise ValueError("must lie between 1900-01-01 and 2999-12-31")
    return aware


class MemoryIn(_Request):
    """A memory to store; only ``id`` and ``content`` are required."""

    id: Id
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    timestamp: datetime | None = Field(default=None, strict=False)
    session_id: Id | None = None
    kind: MemoryKind | None = Field(default=None, strict=False)
    speaker: str | None = Field(default=None, max_length=200)
    summary: str | None = Field(default=None, max_length=MAX_SUMMARY_CHARS)
    entities: list[Annotated[str, Field(max_length=200)]] = Field(default=[], max_length=100)
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default={})

    _timestamp = field_validator("timestamp")(_in_range)

    def fields(self) -> dict[str, Any]:
        """The fields given, for ``Memory(**...)``."""
        return self.model_dump(exclude_none=True, exclude_unset=True)


class IngestRequest(_Request):
    memories: list[MemoryIn] = Field(min_length=1)


class IngestResponse(_Body):
    added: int
    replaced: int
    unchanged: int
    rejected: int
    ids: list[str]
    errors: list[str]
    private: int = Field(default=0, description="entirely private memories: not stored")
    secrets: int = Field(
        default=0, description="secrets replaced by a [redacted:<kind>] marker before storing"
    )


class ChatMessage(_Request):
    role: str = Field(max_length=32)
    content: str = Field(max_length=MAX_CONTENT_CHARS)


class DiscloseRequest(_Request):
    query: str = Field(min_length=1)
    history: list[str | ChatMessage] = []
    now: datetime | None = Field(default=None, strict=False)
    level: DisclosureLevel | None = Field(default=None, strict=False)
    budget: int | None = Field(default=None, gt=0, le=1_000_000)
    context_window: int | None = Field(default=None, gt=0, le=100_000_000)
    prompt_tokens: int = Field(default=0, ge=0, le=100_000_000)

    _now = field_validator("now")(_in_range)


class DiscloseResponse(_Body):
    disclosure_id: str = Field(description="give it to POST /v1/feedback with the model's reply")
    text: str
    items: list[DisclosedItem]
    level: DisclosureLevel
    budget: int
    tokens_used: int
    full_history_tokens: int
    savings: float
    savings_line: str
    expansion_reason: str | None
    budget_reason: str
    profile: str
    omitted: list[str]
    timings_ms: dict[str, float]
    analysis: dict[str, Any]
    warnings: list[str] = Field(
        default=[], description="what the answer lacks and why (a namespace nothing is stored in)"
    )


class ShowResponse(_Body):
    ref: str
    text: str = Field(description="the memory in full detail, as the model would see it")
    memory: MemoryRecord | None = Field(default=None, description="its fields")


class FeedbackRequest(_Request):
    disclosure_id: str = Field(min_length=1, max_length=64)
    reply: str = Field(max_length=MAX_REPLY_CHARS)
    session_id: Id | None = None  # the caller's session, kept with the citations the reply used


class FeedbackResponse(_Body):
    used: list[str]
    cited: list[str]
    overlap: dict[str, float]
    depth: int
    tokens_used: int
    budget: int


class ForgetRequest(_Request):
    ids: list[Id] | None = Field(default=None, max_length=10_000)
    session_id: Id | None = None


class ForgetResponse(_Body):
    count: int
    ids: list[str]
    citations: list[str]
    sessions: list[str]


class SearchRequest(_Request):
    query: str = Field(min_length=1)
    limit: int = Field(default=10, ge=1, le=100)


class SearchResponse(_Body):
    results: list[IndexEntry]
    warnings: list[str] = Field(
        default=[], description="what the answer lacks and why (a namespace nothing is stored in)"
    )


class TimelineRequest(_Request):
    refs: list[Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]] = Field(
        min_length=1, max_length=100
    )
    window: int | None = Field(default=None, ge=0, le=20)


class TextResponse(_Body):
    text: str
    warnings: list[str] = Field(
        default=[], description="what the answer lacks and why (a namespace nothing is stored in)"
    )


class StatsResponse(_Body):
    namespace: dict[str, str]
    stats: dict[str, Any]
    warnings: list[str] = Field(
        default=[], description="what the answer lacks and why (a namespace nothing is stored in)"
    )


class HealthResponse(_Body):
    status: str
    version: str
    profile: str
    open_namespaces: int


class ErrorBody(_Body):
    code: str = Field(description="stable: clients may branch on it")
    message: str
    details: list[dict[str, Any]] | None = None


class ErrorResponse(_Body):
    error: ErrorBody

"""The profile's ``consolidation`` section: when memories are consolidated, how they are grouped,
how long each detail level is, which summarizer writes them, and whether disclosure uses them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TriggerConfig(_Section):
    """When a consolidation runs by itself (the background service checks every
    ``check_seconds``): ``every_seconds`` after the last run, as soon as the working set holds
    ``working_set_size`` memories, or once nothing was written for ``idle_seconds``. A trigger
    fires only when some memory is waiting; 0 turns a trigger off."""

    every_seconds: float = Field(default=3600.0, ge=0.0)
    working_set_size: int = Field(default=0, ge=0)
    idle_seconds: float = Field(default=600.0, ge=0.0)
    check_seconds: float = Field(default=60.0, gt=0.0)


class GroupingConfig(_Section):
    """How a session's memories split into topics: each memory's continuity with the topic so
    far is a weighted mean of four signals in [0, 1] (``topic``: shared informative words with
    the topic's last ``window`` memories; ``time``: 1 within ``max_gap_seconds`` of the previous
    memory, then falling to 0 at twice that; ``files``: shared file paths; ``entities``: shared
    entities; a memory naming no file or entity leaves that signal out). A memory whose
    continuity is below ``split_below`` starts a new topic once the current one holds
    ``min_items``; no topic holds more than ``max_items``."""

    topic: float = Field(default=1.0, ge=0.0)
    time: float = Field(default=0.25, ge=0.0)
    files: float = Field(default=0.5, ge=0.0)
    entities: float = Field(default=0.5, ge=0.0)
    window: int = Field(default=4, ge=1)
    max_gap_seconds: float = Field(default=1800.0, gt=0.0)
    split_below: float = Field(default=0.25, ge=0.0, le=1.0)
    min_items: int = Field(default=3, ge=1)
    max_items: int = Field(default=40, ge=2)

    @model_validator(mode="after")
    def _some_weight(self) -> GroupingConfig:
        if self.topic + self.time + self.files + self.entities <= 0:
            raise ValueError("at least one of topic, time, files, entities must weigh > 0")
        if self.min_items > self.max_items:
            raise ValueError(f"min_items ({self.min_items}) exceeds max_items ({self.max_items})")
        return self


class DetailConfig(_Section):
    """The three detail levels of a summary: the index line (at most ``index_chars``), the short
    paragraph (its ``paragraph_sentences`` most central sentences) and the full consolidated
    text (every source, at most ``full_chars_per_source`` characters of each)."""

    index_chars: int = Field(default=160, ge=40, le=400)
    keywords: int = Field(default=4, ge=0, le=12)
    paragraph_sentences: int = Field(default=3, ge=1, le=12)
    full_chars_per_source: int = Field(default=600, ge=40)


class SummarizerConfig(_Section):
    """Who writes the paragraph: ``extractive`` (rule-based, no model call), or ``openai``: an
    OpenAI-compatible chat-completions endpoint at ``base_url`` (its key read from the
    environment variable ``api_key_env``, if set). A failing endpoint falls back to the
    extractive paragraph, with a warning; nothing waits longer than ``timeout_seconds``."""

    kind: Literal["extractive", "openai"] = "extractive"
    base_url: str | None = Field(default=None, min_length=1)
    model: str = Field(default="gpt-4o-mini", min_length=1)
    api_key_env: str | None = Field(default=None, min_length=1)
    timeout_seconds: float = Field(default=30.0, gt=0.0)
    max_source_chars: int = Field(default=12_000, ge=200)

    @model_validator(mode="after")
    def _endpoint(self) -> SummarizerConfig:
        if self.kind == "openai" and not self.base_url:
            raise ValueError("kind 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)")
        return self


class ServeConfig(_Section):
    """Whether disclosure shows summaries: at ``levels`` (comprehensive by default), up to
    ``max_share`` of the budget goes to an overview of the ``max_summaries`` best-matching
    topic summaries (their short paragraphs, with their sources' citations), before the detail.
    In an index (the viewer's search), a consolidated session with at least ``collapse_min``
    hits shows as its summary line, with the hits' citations, instead of one line per turn."""

    enabled: bool = False
    levels: tuple[Literal["minimal", "standard", "detailed", "comprehensive"], ...] = (
        "comprehensive",
    )
    max_summaries: int = Field(default=3, ge=1)
    max_share: float = Field(default=0.3, gt=0.0, le=1.0)
    min_score: float = Field(default=0.05, ge=0.0)
    collapse_min: int = Field(default=3, ge=2)


class ConsolidationConfig(_Section):
    """Consolidation of memories that left the working set into long-term summaries."""

    enabled: bool = True
    triggers: TriggerConfig = TriggerConfig()
    grouping: GroupingConfig = GroupingConfig()
    detail: DetailConfig = DetailConfig()
    summarizer: SummarizerConfig = SummarizerConfig()
    serve: ServeConfig = ServeConfig()

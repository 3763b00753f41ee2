"""What ingest does before the store sees a memory: records, privacy, then enrichment.

- What the caller passed becomes Memory records once (``tiers.memory.memories_of``: a single
  memory or a string passed where a list belongs is refused with a message saying what to pass).
- ``<private>...</private>`` spans are removed from the content and the summary (and from string
  values in metadata); a memory left with no content is not stored at all.
- A memory without a summary or entities gets them from ``analyzers.enrich_many``: its entities,
  and a one-line extractive summary (<= 100 characters) for the index layer. With
  ``enrich=False`` that is left to :func:`enrich`, called later (a store that defers
  enrichment calls it from its drain worker, before embedding).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from analyzers import AnalyzerConfig, enrich_many
from formatters.safety import strip_private
from tiers import Memory
from tiers.errors import InvalidInputError
from tiers.memory import memories_of


def prepare(
    memories: Iterable[Memory | Mapping[str, Any]],
    config: AnalyzerConfig,
    *,
    max_content_chars: int | None = None,
    enrich: bool = True,
) -> tuple[list[Memory], int]:
    """The memories to store, and how many were dropped as entirely private. A memory longer
    than ``max_content_chars`` is refused before the analyzers see it (spaCy refuses texts
    over a million characters, and the time grows with the length)."""
    public: list[Memory] = []
    private = 0
    records = memories_of(memories)[0]
    if max_content_chars is not None:
        _check_lengths(records, max_content_chars)
    for memory in records:
        cleaned = _without_private(memory)
        if cleaned is None:
            private += 1
        else:
            public.append(cleaned)
    return (_enriched(public, config) if enrich else public), private


def _check_lengths(memories: list[Memory], limit: int) -> None:
    for memory in memories:
        if len(memory.content) > limit:
            raise InvalidInputError(
                f"memory {memory.id[:80]!r}: content has {len(memory.content):,} characters; the "
                f"limit is {limit:,} (tiers.ingest.max_content_chars): split it into several"
            )


def without_private(memory: Memory) -> Memory | None:
    """``memory`` without its ``<private>`` spans; None if nothing else is left."""
    return _without_private(memory)


def _without_private(memory: Memory) -> Memory | None:
    content = strip_private(memory.content)
    if not content.strip():
        return None
    summary = strip_private(memory.summary) if memory.summary else memory.summary
    metadata = _scrub(memory.metadata)
    if (content, summary, metadata) == (memory.content, memory.summary, memory.metadata):
        return memory
    return memory.replace(content=content, summary=summary or None, metadata=metadata)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return strip_private(value)
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def enrich(memories: list[Memory], config: AnalyzerConfig) -> list[Memory]:
    """``memories`` with the entities and summaries they lack filled in, in order; a memory
    that lacks neither is returned as the same object."""
    return _enriched(memories, config)


def _enriched(memories: list[Memory], config: AnalyzerConfig) -> list[Memory]:
    needy = [m for m in memories if m.summary is None or not m.entities]
    if not needy:
        return memories
    found = dict(
        zip(
            (m.id for m in needy),
            enrich_many([m.content for m in needy], config=config),
            strict=True,
        )
    )
    out = []
    for memory in memories:
        extra = found.get(memory.id)
        if extra is None:
            out.append(memory)
            continue
        out.append(
            memory.replace(
                summary=memory.summary or extra.summary or None,
                entities=memory.entities or extra.entities,
            )
        )
    return out

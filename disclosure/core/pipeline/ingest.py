"""What ingest does before the store sees a memory: records, privacy, secrets, then enrichment.

- What the caller passed becomes Memory records once (``tiers.memory.memories_of``: a single
  memory or a string passed where a list belongs is refused with a message saying what to pass).
- ``<private>...</private>`` spans are removed from the content and the summary (and from string
  values in metadata); a memory left with no content is not stored at all.
- Secrets (:mod:`safeguards.secrets`) in the content, the summary, the entities and the metadata
  become markers naming their kind (``[redacted:github_token]``), unless the profile's
  ``tiers.ingest.redact_secrets`` is off. A metadata value under a name that says secret
  (``{"api_key": ...}``) is replaced whole. Every way into the store passes here (the
  controller's ``ingest`` for the API, the facade, the MCP server, the middleware, the CLI
  and the service; :func:`for_storage` for an imported export), before any enrichment, so
  no summary or entity is derived from a secret.
- A memory without a summary or entities gets them from ``analyzers.enrich_many``: its entities,
  and a one-line extractive summary (<= 100 characters) for the index layer. With
  ``enrich=False`` that is left to :func:`enrich`, called later (a store that defers
  enrichment calls it from its drain worker, before embedding).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from analyzers import AnalyzerConfig, enrich_many
from safeguards import redact, redact_field
from safeguards.filter import strip_private
from tiers import Memory
from tiers.errors import InvalidInputError
from tiers.memory import MAX_SUMMARY_CHARS, memories_of


@dataclass(frozen=True, slots=True)
class Prepared:
    """What :func:`prepare_memories` made of an ingest: the memories to store, how many were
    dropped as entirely private, and how many secrets were replaced by markers."""

    memories: list[Memory]
    private: int = 0
    secrets: int = 0


def prepare(
    memories: Iterable[Memory | Mapping[str, Any]],
    config: AnalyzerConfig,
    *,
    max_content_chars: int | None = None,
    enrich: bool = True,
    redact_secrets: bool = True,
) -> tuple[list[Memory], int]:
    """The memories to store, and how many were dropped as entirely private (see
    :func:`prepare_memories`, which also counts the secrets redacted)."""
    prepared = prepare_memories(
        memories,
        config,
        max_content_chars=max_content_chars,
        enrich=enrich,
        redact_secrets=redact_secrets,
    )
    return prepared.memories, prepared.private


def prepare_memories(
    memories: Iterable[Memory | Mapping[str, Any]],
    config: AnalyzerConfig,
    *,
    max_content_chars: int | None = None,
    enrich: bool = True,
    redact_secrets: bool = True,
) -> Prepared:
    """The memories to store, without private spans and (``redact_secrets``) secrets. A memory
    longer than ``max_content_chars`` is refused before the analyzers see it (spaCy refuses
    texts over a million characters, and the time grows with the length)."""
    public: list[Memory] = []
    private = secrets = 0
    records = memories_of(memories)[0]
    if max_content_chars is not None:
        _check_lengths(records, max_content_chars)
    for memory in records:
        cleaned, found = for_storage(memory, redact_secrets=redact_secrets)
        secrets += found
        if cleaned is None:
            private += 1
        else:
            public.append(cleaned)
    return Prepared(_enriched(public, config) if enrich else public, private, secrets)


def _check_lengths(memories: list[Memory], limit: int) -> None:
    for memory in memories:
        if len(memory.content) > limit:
            raise InvalidInputError(
                f"memory {memory.id[:80]!r}: content has {len(memory.content):,} characters; the "
                f"limit is {limit:,} (tiers.ingest.max_content_chars): split it into several"
            )


def for_storage(memory: Memory, *, redact_secrets: bool = True) -> tuple[Memory | None, int]:
    """``memory`` as the store may keep it: without its ``<private>`` spans (None if nothing
    else is left) and, with ``redact_secrets``, with its secrets replaced by markers; and how
    many secrets were replaced. A memory with nothing to change is returned as is."""
    public = _without_private(memory)
    if public is None or not redact_secrets:
        return public, 0
    return _without_secrets(public)


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


def _without_secrets(memory: Memory) -> tuple[Memory, int]:
    content = redact(memory.content)
    found = content.count
    changes: dict[str, Any] = {}
    if content.count:
        changes["content"] = content.text
    if memory.summary:
        summary = redact(memory.summary)
        if summary.count:  # a summary the markers make too long is derived again
            found += summary.count
            changes["summary"] = summary.text if len(summary.text) <= MAX_SUMMARY_CHARS else None
    if memory.entities:
        entities = [redact(e) for e in memory.entities]
        if any(e.count for e in entities):  # an entity that held a secret names nothing
            found += sum(e.count for e in entities)
            changes["entities"] = tuple(e.text for e in entities if not e.count)
    metadata, in_metadata = _redacted_metadata(memory.metadata)
    if in_metadata:
        found += in_metadata
        changes["metadata"] = metadata
    return (memory.replace(**changes) if changes else memory), found


def _redacted_metadata(value: Any, name: str = "") -> tuple[Any, int]:
    """``value`` (a metadata value stored under ``name``) with its secrets replaced."""
    if isinstance(value, str):
        result = redact_field(name, value) if name else redact(value)
        return result.text, result.count
    if isinstance(value, dict):
        pairs = {k: _redacted_metadata(v, str(k)) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, sum(n for _, n in pairs.values())
    if isinstance(value, list):
        items = [_redacted_metadata(v, name) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def redacted_text(text: str, *, redact_secrets: bool = True) -> str:
    """``text`` with its secrets replaced (for text the store keeps beside the memories, such
    as the query a reply's feedback logs), unless ``redact_secrets`` is off."""
    return redact(text).text if redact_secrets else text


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

"""The stored record (:class:`Memory`) and a search hit (:class:`ScoredMemory`).

Timestamps are always timezone-aware: a naive ``datetime`` (or an ISO string without an offset)
is taken as UTC. Metadata must survive ``json.dumps``; it is copied on the way in, so a caller's
dict is never shared with the store.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tiers.errors import InvalidInputError, MemoryValidationError, describe_validation_error

MAX_ID_LENGTH = 256
MAX_SUMMARY_CHARS = 100
MAX_ENTITIES = 1000
MAX_METADATA_DEPTH = 32
MAX_METADATA_ITEMS = 10_000
PARSED_CACHE_SIZE = 8192  # parsed records kept by from_json (the same JSON comes back often)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class MemoryKind(StrEnum):
    """What produced a memory. ``OBSERVATION``: what a coding agent did with a tool (the tool,
    its target and an excerpt of the result), recorded by its hooks."""

    PROMPT = "prompt"
    RESPONSE = "response"
    TOOL = "tool"
    INSIGHT = "insight"
    OBSERVATION = "observation"


def _now() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Return ``value`` timezone-aware; naive values are taken as UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class Memory(BaseModel):
    """One remembered item: a prompt, a response, a tool output or an insight. Immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False)

    id: str = Field(min_length=1, max_length=MAX_ID_LENGTH)
    content: str
    timestamp: datetime = Field(default_factory=_now)
    session_id: str = Field(default="default", min_length=1, max_length=MAX_ID_LENGTH)
    kind: MemoryKind = MemoryKind.INSIGHT
    speaker: str | None = None
    summary: str | None = Field(default=None, max_length=MAX_SUMMARY_CHARS)
    entities: tuple[str, ...] = ()
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise MemoryValidationError(
                f"invalid memory: {describe_validation_error(exc, sep='.')}", exc.errors()
            ) from None

    @field_validator("id", "session_id")
    @classmethod
    def _check_identifier(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        if value != value.strip():
            raise ValueError("must not start or end with whitespace")
        if _CONTROL.search(value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("content")
    @classmethod
    def _check_content(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("id", "session_id", "content", "speaker", "summary")
    @classmethod
    def _check_unicode(cls, value: str | None) -> str | None:
        if value is not None:
            _valid_unicode(value)
        return value

    @field_validator("timestamp")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return as_utc(value)

    @field_validator("summary")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is not None and ("\n" in value or "\r" in value):
            raise ValueError("must be a single line")
        return value

    @field_validator("entities")
    @classmethod
    def _clean_entities(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        if len(value) > MAX_ENTITIES:
            raise ValueError(f"has {len(value)} entities; the limit is {MAX_ENTITIES}")
        for entity in value:
            _valid_unicode(entity)
            text = entity.strip()
            if text:
                seen.setdefault(text)
        return tuple(seen)

    @field_validator("importance")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _json_metadata(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of JSON-serialisable values")
        _check_shape(value)
        try:
            text = json.dumps(value, allow_nan=False, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"must be JSON-serialisable ({exc})") from None
        return json.loads(text)  # a private copy: later changes to the caller's dict do not leak in

    def replace(self, **changes: Any) -> Memory:
        """A validated copy with ``changes`` applied (``model_copy`` would skip validation)."""
        return Memory(**{**self.model_dump(), **changes})

    def to_json(self) -> str:
        """Compact JSON for storage; :meth:`from_json` reads it back."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> Memory:
        """Rebuild a Memory written by :meth:`to_json`.

        The archive and the warm index hand the same records back query after query, so parsed
        records are kept (an LRU of :data:`PARSED_CACHE_SIZE`, keyed by the JSON text: a changed
        record is a new key). A Memory is immutable, so one instance serves every reader; one
        with metadata comes back with its own copy of that mapping.
        """
        if cls is not Memory:
            return cls(**json.loads(text))
        memory = _parse(text.decode("utf-8") if isinstance(text, bytes) else text)
        if memory.metadata:
            return memory.model_copy(update={"metadata": copy.deepcopy(memory.metadata)})
        return memory


def _valid_unicode(text: str) -> None:
    """Lone surrogates (valid JSON escapes, invalid Unicode) cannot be stored or tokenised."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None


def _check_shape(value: Any) -> None:
    """Metadata within :data:`MAX_METADATA_DEPTH` levels and :data:`MAX_METADATA_ITEMS` values,
    every string valid Unicode; walked without recursion, so any depth is refused cleanly."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_METADATA_ITEMS:
            raise ValueError(f"has more than {MAX_METADATA_ITEMS} values")
        if isinstance(item, str):
            _valid_unicode(item)
        elif isinstance(item, dict | list | tuple):
            if depth > MAX_METADATA_DEPTH:
                raise ValueError(f"nests deeper than {MAX_METADATA_DEPTH} levels")
            if isinstance(item, dict):
                stack.extend((k, depth) for k in item if isinstance(k, str))
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)


def memories_of(
    items: Iterable[Memory | Mapping[str, Any]], *, strict: bool = True
) -> tuple[list[Memory], list[str]]:
    """The memories ``items`` holds: Memory objects as they are, mappings of their fields
    converted; the one place ingest turns what a caller passed into records.

    ``strict``: the first invalid item raises (:class:`InvalidInputError`, saying which item);
    otherwise invalid items are skipped and their errors returned. A single memory, mapping or
    string passed where a list belongs is refused, saying what to pass."""
    if isinstance(items, (Memory, str, bytes, Mapping)):
        raise InvalidInputError(
            "ingest takes a list of memories (Memory objects or mappings of their fields), "
            f"not a single {type(items).__name__}: pass [Memory(...)]"
        )
    memories: list[Memory] = []
    errors: list[str] = []
    for position, item in enumerate(items):
        try:
            memories.append(_as_memory(item, position))
        except InvalidInputError as exc:
            if strict:
                raise
            errors.append(str(exc))
    return memories, errors


def _as_memory(item: Memory | Mapping[str, Any], position: int) -> Memory:
    if isinstance(item, Memory):
        return item
    if isinstance(item, Mapping):
        try:
            return Memory(**item)
        except MemoryValidationError as exc:
            raise MemoryValidationError(f"item {position}: {exc}", exc.errors) from None
    raise InvalidInputError(
        f"item {position}: expected a Memory or a mapping of its fields, not {type(item).__name__}"
    )


_STORED_FIELDS = frozenset(Memory.model_fields)


@lru_cache(maxsize=PARSED_CACHE_SIZE)
def _parse(text: str) -> Memory:
    """A stored record, trusted: :meth:`Memory.to_json` wrote it from a validated Memory, so
    it is rebuilt without running the validators again (a search reads a hundred records it
    has not seen; validation was most of their cost). A record of another shape (an older
    layout, a hand-edited file) is validated in full."""
    data = json.loads(text)
    if isinstance(data, dict) and data.keys() == _STORED_FIELDS:
        try:
            return Memory.model_construct(
                id=data["id"],
                content=data["content"],
                timestamp=as_utc(datetime.fromisoformat(data["timestamp"])),
                session_id=data["session_id"],
                kind=MemoryKind(data["kind"]),
                speaker=data["speaker"],
                summary=data["summary"],
                entities=tuple(data["entities"]),
                importance=float(data["importance"]),
                metadata=data["metadata"],
            )
        except (TypeError, ValueError):
            pass
    return Memory(**data)


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """A memory as one tier found it: the tier's name, its score there and its rank (0 = best)."""

    memory: Memory
    tier: str
    score: float
    rank: int = 0

    @property
    def id(self) -> str:
        return self.memory.id

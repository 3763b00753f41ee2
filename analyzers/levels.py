"""Disclosure levels and the analyzer's verdict on a query."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class DisclosureLevel(StrEnum):
    """How much memory a query deserves, ordered: minimal < standard < detailed < comprehensive.

    Members compare by rank, not alphabetically, and are plain strings for YAML and JSON.
    """

    MINIMAL = "minimal"
    STANDARD = "standard"
    DETAILED = "detailed"
    COMPREHENSIVE = "comprehensive"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    @classmethod
    def parse(cls, value: str | DisclosureLevel) -> DisclosureLevel:
        """The level named ``value``; a miss lists the valid names."""
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(level.value for level in cls)
            raise ValueError(f"unknown disclosure level {value!r}; valid: {names}") from None

    def _cmp(self, other: Any) -> int:
        # A plain string compares by the rank of the level it names, never alphabetically.
        if isinstance(other, str) and other in _BY_NAME:
            return self.rank - _BY_NAME[other].rank
        raise TypeError(f"cannot order a DisclosureLevel against {other!r}")

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: Any) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other) >= 0

    __hash__ = StrEnum.__hash__


_RANKS = {level: index for index, level in enumerate(DisclosureLevel)}
_BY_NAME = {level.value: level for level in DisclosureLevel}


class TemporalReference(BaseModel):
    """A time the query points at: the phrase, and the range it resolves to (when it does).

    ``start`` is inclusive and ``end`` exclusive, both timezone-aware; a range never ends after
    the ``now`` it was resolved against.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    phrase: str
    kind: str | None = None  # what named it: "yesterday", "last_week", "month", "ago", "topic", ...
    start: datetime | None = None
    end: datetime | None = None
    about: str | None = None  # "when we discussed X": the topic X, resolved by search not by date


class AnswerType(BaseModel):
    """What a question asks for (:mod:`analyzers.answer`): the kind of answer (``place``,
    ``person``, ``thing``, ``event``, ``count``, ``date``, or None when only the noun is known),
    the noun it asks about as written ("video games"), and the entity labels that answer it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str | None = None
    head: str | None = None
    labels: tuple[str, ...] = ()


class QueryAnalysis(BaseModel):
    """Why a query gets the level it gets: every signal that fired, and what the query names.

    ``detected_signals`` uses the vocabulary documented in :mod:`analyzers.analyzer`;
    ``votes`` maps each signal that voted to the level it voted for; ``reason`` says in words
    which rule decided; ``override`` is the explicit override phrase that won, if one did;
    ``inherited_level`` is the previous turn's level when a continuation inherited it.
    ``explicit_ids`` are memory ids and citations as written, normalised (``mem_12``,
    ``mem:a7Bc3x``): the caller resolves them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    level: DisclosureLevel
    detected_signals: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    temporal: TemporalReference | None = None
    is_continuation: bool = False
    explicit_ids: tuple[str, ...] = ()
    expansion_request: bool = False
    complexity: float = Field(default=0.0, ge=0.0, le=1.0)
    reason: str = ""
    votes: dict[str, DisclosureLevel] = Field(default_factory=dict)
    override: str | None = None
    inherited_level: DisclosureLevel | None = None
    word_count: int = Field(default=0, ge=0)
    # What the question asks for, read off its form (None: its form names nothing), and which
    # pipeline read it: the trained one's name, or "rules".
    answer: AnswerType | None = None
    pipeline: str = "rules"

    @field_validator("detected_signals", "entities", "explicit_ids", mode="before")
    @classmethod
    def _tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list | set | frozenset) else value

    @property
    def has_temporal_reference(self) -> bool:
        return self.temporal is not None

"""A JSONL format for your own evaluation data: one conversation per line.

A dataset is one ``.jsonl`` file, or a directory whose ``*.jsonl`` files are read in name order.
Each non-blank line is one conversation object::

    {"id": "trip-planning",
     "now": "2024-06-01T12:00:00Z",
     "turns": [
       {"id": "t1", "text": "Let's book Lisbon for June 3.", "speaker": "Ana",
        "session": "s1", "timestamp": "2024-05-01T10:00:00Z", "kind": "prompt"},
       {"id": "t2", "text": "Booked: TAP 1234, June 3.", "speaker": "assistant", "kind": "response"}
     ],
     "questions": [
       {"question": "Which flight did we book?", "evidence": ["t2"],
        "id": "q1", "category": "single-hop", "answer": "TAP 1234"}
     ]}

Required: ``id`` (unique in the dataset), ``turns`` (at least one; each with an ``id`` unique in its
conversation and a non-blank ``text``), ``questions`` (may be empty; each with ``question`` and
``evidence``, a list of turn ids of this conversation, which may be empty). Optional: ``now`` (when
the questions are asked; default one minute after the last turn), a turn's ``speaker``, ``session``
(default ``"default"``), ``timestamp`` (ISO 8601, UTC if no offset; default one minute after the
previous turn, the first turn at 2000-01-01T00:00Z), ``kind`` (prompt, response, tool, insight;
default prompt), a question's ``id`` (default ``q<index>``), ``category`` (a string or an integer)
and ``answer``. Unknown keys are errors. Memory ids are ``"{conversation id}/{turn id}"``.

Every mistake raises :class:`~tiers.errors.DatasetError` naming the file, the line and the field:
``data.jsonl:3: questions -> 0 -> evidence -> 1: unknown turn id 't9'``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from disclosure.evaluation.dataset import Conversation, Dataset, Question
from tiers.errors import DatasetError, MemoryValidationError, describe_validation_error
from tiers.memory import Memory, MemoryKind, as_utc

JSONL_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_STEP = timedelta(minutes=1)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JsonlTurn(_Strict):
    """One turn of a conversation in the JSONL format."""

    id: str = Field(min_length=1)
    text: str
    speaker: str | None = None
    session: str = Field(default="default", min_length=1)
    timestamp: datetime | None = None
    kind: MemoryKind = MemoryKind.PROMPT

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class JsonlQuestion(_Strict):
    """One question in the JSONL format; ``evidence`` names turn ids of its conversation."""

    question: str = Field(min_length=1)
    evidence: list[str]
    id: str | None = None
    category: str | int | None = None
    answer: str | None = None


class JsonlConversation(_Strict):
    """One line of the JSONL format."""

    id: str = Field(min_length=1)
    turns: list[JsonlTurn] = Field(min_length=1)
    questions: list[JsonlQuestion]
    now: datetime | None = None


def load_jsonl(path: str | Path, *, name: str | None = None) -> Dataset:
    """A dataset from a JSONL file, or from every ``*.jsonl`` file of a directory."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise DatasetError(f"{path}: the directory holds no *.jsonl files")
    elif path.is_file():
        files = [path]
    else:
        raise DatasetError(f"{path}: no such file or directory")
    conversations: list[Conversation] = []
    questions: list[Question] = []
    for file in files:
        for line_no, record in _records(file):
            where = f"{file.name}:{line_no}"
            if any(c.id == record.id for c in conversations):
                raise DatasetError(f"{where}: id: conversation {record.id!r} appears twice")
            conversation = _conversation(record, where)
            conversations.append(conversation)
            questions.extend(_questions(record, conversation, where))
    if not conversations:
        raise DatasetError(f"{path}: no conversations (every line is blank)")
    return Dataset(
        name=name or path.stem,
        conversations=tuple(conversations),
        questions=tuple(questions),
    )


def _records(file: Path) -> list[tuple[int, JsonlConversation]]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{file}: cannot be read: {exc}") from None
    records = []
    for line_no, line in enumerate(lines, start=1):
        if line.strip():
            records.append((line_no, _parse(line, f"{file.name}:{line_no}")))
    return records


def _parse(line: str, where: str) -> JsonlConversation:
    try:
        data: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: each line must be a JSON object (a conversation)")
    try:
        return JsonlConversation.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{where}: {describe_validation_error(exc)}") from None


def _conversation(record: JsonlConversation, where: str) -> Conversation:
    memories: list[Memory] = []
    seen: set[str] = set()
    previous: datetime | None = None
    for index, turn in enumerate(record.turns):
        if turn.id in seen:
            raise DatasetError(f"{where}: turns -> {index} -> id: duplicate turn id {turn.id!r}")
        seen.add(turn.id)
        timestamp = as_utc(turn.timestamp) if turn.timestamp else _after(previous)
        previous = timestamp
        try:
            memories.append(
                Memory(
                    id=f"{record.id}/{turn.id}",
                    content=turn.text,
                    timestamp=timestamp,
                    session_id=f"{record.id}/{turn.session}",
                    kind=turn.kind,
                    speaker=turn.speaker,
                    metadata={"turn_id": turn.id},
                )
            )
        except MemoryValidationError as exc:
            raise DatasetError(f"{where}: turns -> {index}: {exc}") from None
    now = as_utc(record.now) if record.now else max(m.timestamp for m in memories) + _STEP
    return Conversation(id=record.id, memories=tuple(memories), now=now)


def _after(previous: datetime | None) -> datetime:
    return JSONL_EPOCH if previous is None else previous + _STEP


def _questions(record: JsonlConversation, conversation: Conversation, where: str) -> list[Question]:
    questions = []
    seen: set[str] = set()
    for index, item in enumerate(record.questions):
        question_id = item.id or f"q{index}"
        if question_id in seen:
            raise DatasetError(f"{where}: questions -> {index} -> id: duplicate {question_id!r}")
        seen.add(question_id)
        evidence: dict[str, None] = {}
        for position, turn_id in enumerate(item.evidence):
            memory_id = f"{record.id}/{turn_id}"
            if memory_id not in conversation.contents:
                raise DatasetError(
                    f"{where}: questions -> {index} -> evidence -> {position}: "
                    f"unknown turn id {turn_id!r} (the turns of {record.id!r} are "
                    f"{_some(t.id for t in record.turns)})"
                )
            evidence.setdefault(memory_id)
        questions.append(
            Question(
                id=f"{record.id}/{question_id}",
                conversation_id=record.id,
                text=item.question,
                evidence=tuple(evidence),
                category=None if item.category is None else str(item.category),
                answer=item.answer,
            )
        )
    return questions


def _some(names: Any, limit: int = 5) -> str:
    items = list(names)
    shown = ", ".join(repr(n) for n in items[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")

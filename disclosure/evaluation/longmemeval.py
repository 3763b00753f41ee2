"""The LongMemEval format (Wu et al., ICLR 2025): one haystack of chat sessions per question.

Each line of the file (JSON Lines, optionally gzip-compressed) is one question with its own
history, so each question becomes its own :class:`Conversation`. Mapping, decided here and kept
stable:

* conversation id: the question's ``question_id``; it is asked at ``question_date``
  (``"2023/05/30 (Tue) 23:40"``, taken as UTC), which is :attr:`Conversation.now`;
* memory id ``"{session_id}:{turn_index}"`` (``s03:5``; the index counts every turn of the
  session from 0, empty ones included, so ids do not shift); session id: the entry of
  ``haystack_session_ids`` (positions ``s01``, ``s02``, ... in the shipped copy);
* timestamp: the session's ``haystack_dates`` entry plus one minute per turn, so turns keep
  their order;
* kind and speaker: ``user`` turns are ``prompt`` with speaker ``user``, ``assistant`` turns
  ``response`` with speaker ``assistant``;
* gold evidence: the turns marked ``has_answer: true``; category: ``question_type``.

Turns with empty content are skipped and counted in ``Dataset.issues`` (``empty-turn``); an
evidence turn that is empty is reported as ``evidence-unresolved``.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from disclosure.evaluation.dataset import Conversation, Dataset, DatasetIssue, Question
from tiers.errors import DatasetError, MemoryValidationError
from tiers.memory import Memory, MemoryKind

LONGMEMEVAL_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
_TURN_STEP = timedelta(minutes=1)
_KINDS = {"user": MemoryKind.PROMPT, "assistant": MemoryKind.RESPONSE}


def load_longmemeval(path: str | Path, *, name: str | None = None) -> Dataset:
    """Every question of a LongMemEval-format JSONL file (``.gz`` read transparently)."""
    path = Path(path)
    conversations: list[Conversation] = []
    questions: list[Question] = []
    issues: list[DatasetIssue] = []
    seen: set[str] = set()
    for line_number, row in _rows(path):
        where = f"{path.name}:{line_number}"
        question_id = _field(row, "question_id", where, str)
        if question_id in seen:
            raise DatasetError(f"{where}: duplicate question_id {question_id!r}")
        seen.add(question_id)
        conversation, evidence, found = _conversation(row, question_id, where)
        questions.append(_question(row, conversation, evidence, question_id, found))
        conversations.append(conversation)
        issues.extend(found)
    if not conversations:
        raise DatasetError(f"{path}: no questions")
    return Dataset(
        name=name or path.name.split(".")[0],
        conversations=tuple(conversations),
        questions=tuple(questions),
        issues=tuple(issues),
    )


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                if line.strip():
                    yield number, json.loads(line)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not a readable LongMemEval JSONL file: {exc}") from None


def _field(mapping: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(mapping, dict):
        raise DatasetError(f"{where}: expected an object, got {type(mapping).__name__}")
    if key not in mapping:
        raise DatasetError(f"{where}: missing field {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise DatasetError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}")
    return value


def parse_date(text: str, where: str) -> datetime:
    """``"2023/05/30 (Tue) 23:40"`` as a UTC datetime; a bad date names where it was."""
    try:
        return datetime.strptime(text.strip(), LONGMEMEVAL_DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise DatasetError(
            f"{where}: {text!r} does not match {LONGMEMEVAL_DATE_FORMAT!r} "
            f"(e.g. '2023/05/30 (Tue) 23:40')"
        ) from None


def _conversation(
    row: Mapping[str, Any], question_id: str, where: str
) -> tuple[Conversation, list[str], list[DatasetIssue]]:
    sessions = _field(row, "haystack_sessions", where, list)
    dates = _field(row, "haystack_dates", where, list)
    ids = row.get("haystack_session_ids") or [f"s{i + 1:02d}" for i in range(len(sessions))]
    if not len(sessions) == len(dates) == len(ids):
        raise DatasetError(
            f"{where}: haystack_sessions ({len(sessions)}), haystack_dates ({len(dates)}) and "
            f"haystack_session_ids ({len(ids)}) must have one entry per session"
        )
    memories: list[Memory] = []
    evidence: list[str] = []
    issues: list[DatasetIssue] = []
    for session_id, date, turns in zip(ids, dates, sessions, strict=True):
        s_where = f"{where}.{session_id}"
        start = parse_date(str(date), f"{s_where} date")
        made, gold, empty = _session(turns, str(session_id), start, s_where)
        memories.extend(made)
        evidence.extend(gold)
        if empty:
            issues.append(DatasetIssue(s_where, "empty-turn", f"{empty} empty turn(s) skipped"))
    if not memories:
        raise DatasetError(f"{where}: the haystack has no turns")
    memories.sort(key=lambda m: m.timestamp)  # a few same-day sessions come out of order
    now = parse_date(str(_field(row, "question_date", where, str)), f"{where}.question_date")
    stored = {m.id for m in memories}
    for missing in [e for e in evidence if e not in stored]:
        issues.append(DatasetIssue(where, "evidence-unresolved", f"{missing!r} is an empty turn"))
    return Conversation(id=question_id, memories=tuple(memories), now=now), evidence, issues


def _session(
    turns: Any, session_id: str, start: datetime, where: str
) -> tuple[list[Memory], list[str], int]:
    if not isinstance(turns, list):
        raise DatasetError(f"{where}: a session is a list of turns")
    memories, evidence, empty = [], [], 0
    for index, turn in enumerate(turns):
        t_where = f"{where}[{index}]"
        role = _field(turn, "role", t_where, str)
        content = _field(turn, "content", t_where, str).strip()
        memory_id = f"{session_id}:{index}"
        if turn.get("has_answer") is True:
            evidence.append(memory_id)
        if not content:
            empty += 1
            continue
        when = start + index * _TURN_STEP
        memories.append(_memory(memory_id, role, content, session_id, when, where=t_where))
    return memories, evidence, empty


def _memory(
    memory_id: str, role: str, content: str, session_id: str, when: datetime, *, where: str
) -> Memory:
    kind = _KINDS.get(role)
    if kind is None:
        raise DatasetError(f"{where}.role: {role!r} is neither 'user' nor 'assistant'")
    try:
        return Memory(
            id=memory_id,
            content=content,
            timestamp=when,
            session_id=session_id,
            kind=kind,
            speaker=role,
        )
    except MemoryValidationError as exc:
        raise DatasetError(f"{where}: {exc}") from None


def _question(
    row: Mapping[str, Any],
    conversation: Conversation,
    evidence: Sequence[str],
    question_id: str,
    issues: list[DatasetIssue],
) -> Question:
    where = question_id
    resolved = tuple(e for e in dict.fromkeys(evidence) if e in conversation.contents)
    unresolved = tuple(e for e in evidence if e not in conversation.contents)
    if not resolved:
        issues.append(DatasetIssue(where, "no-evidence", "asked, but not scored for recall"))
    answer = row.get("answer")
    return Question(
        id=question_id,
        conversation_id=conversation.id,
        text=_field(row, "question", where, str),
        evidence=resolved,
        category=str(row.get("question_type") or "uncategorised"),
        answer=None if answer is None else str(answer),
        unresolved_evidence=unresolved,
    )

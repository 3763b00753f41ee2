"""The LoCoMo format (Maharana et al., ACL 2024): one memory per dialogue turn.

Mapping, decided here and kept stable:

* memory id ``"{sample_id}/{dia_id}"`` (``conv-26/D1:3``); session id ``"{sample_id}/session_{n}"``;
* timestamp: the session's ``session_<n>_date_time`` (``"%I:%M %p on %d %B, %Y"``, taken as UTC)
  plus one minute per turn, so turns keep their order; the questions are asked one minute after
  the conversation's last turn (:attr:`Conversation.now`);
* kind: ``speaker_a``'s turns are ``prompt``, ``speaker_b``'s ``response`` (who opens and who
  answers; the Memory record has no kind for "the other human");
* content: the turn's text, plus `` [shares photo: {blip_caption}]`` when the turn shares an
  image. The ``query`` field (the image-search query, which can leak the answer) and the image
  URLs are never used.

Categories (integers in the file, not the paper's prose numbering): 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial. Gold evidence is repaired where that is unambiguous
(``"D8:6; D9:17"`` -> two ids, ``"D:11:26"`` -> ``D11:26``, ``"D30:05"`` -> ``D30:5``, ids joined
by spaces or commas); what cannot be resolved (no such turn, a bare ``"D"``) is logged in
``Dataset.issues`` and left out of the question's evidence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from disclosure.evaluation.dataset import Conversation, Dataset, DatasetIssue, Question
from tiers.errors import DatasetError, MemoryValidationError
from tiers.memory import Memory, MemoryKind

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
LOCOMO_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DEFAULT_CATEGORIES = (1, 2, 3, 4)

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_KEY = re.compile(r"session_(\d+)_date_time")
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_TURN_STEP = timedelta(minutes=1)


def load_locomo(path: str | Path, *, name: str | None = None) -> Dataset:
    """Every conversation and question of a LoCoMo-format JSON file (all categories)."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not a readable LoCoMo JSON file: {exc}") from None
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: a LoCoMo file is a JSON list of conversations")
    conversations, questions, issues = [], [], []
    for index, sample in enumerate(raw):
        where = f"{path.name}[{index}]"
        conversation, conv_issues = _conversation(sample, where)
        conv_questions, q_issues = _questions(sample, conversation, where)
        conversations.append(conversation)
        questions.extend(conv_questions)
        issues.extend(conv_issues + q_issues)
    return Dataset(
        name=name or path.stem,
        conversations=tuple(conversations),
        questions=tuple(questions),
        issues=tuple(issues),
        category_codes=dict(LOCOMO_CATEGORIES),
    )


def _field(mapping: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(mapping, dict):
        raise DatasetError(f"{where}: expected an object, got {type(mapping).__name__}")
    if key not in mapping:
        raise DatasetError(f"{where}: missing field {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        raise DatasetError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r:.60}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _conversation(sample: Any, where: str) -> tuple[Conversation, list[DatasetIssue]]:
    sample_id = _field(sample, "sample_id", where, str)
    where = f"{sample_id}"
    body = _field(sample, "conversation", where, dict)
    speaker_a = _field(body, "speaker_a", f"{where}.conversation", str)
    sessions = sorted(int(m.group(1)) for key in body if (m := _SESSION_KEY.fullmatch(key)))
    memories: list[Memory] = []
    seen: set[str] = set()
    for number in sessions:
        turns = _field(body, f"session_{number}", f"{where}.conversation", list)
        if not turns:
            continue
        start = _session_start(body, number, where)
        for position, turn in enumerate(turns):
            turn_where = f"{where}.session_{number}[{position}]"
            memory = _memory(
                turn,
                sample_id=sample_id,
                session=number,
                timestamp=start + position * _TURN_STEP,
                speaker_a=speaker_a,
                where=turn_where,
            )
            if memory.id in seen:
                raise DatasetError(f"{turn_where}: duplicate dia_id {memory.metadata['dia_id']!r}")
            seen.add(memory.id)
            memories.append(memory)
    if not memories:
        raise DatasetError(f"{where}: the conversation has no turns")
    issues = _dates_without_sessions(body, set(sessions), where)
    now = max(m.timestamp for m in memories) + _TURN_STEP
    return Conversation(id=sample_id, memories=tuple(memories), now=now), issues


def _session_start(body: Mapping[str, Any], number: int, where: str) -> datetime:
    key = f"session_{number}_date_time"
    text = _field(body, key, f"{where}.conversation", str)
    try:
        return datetime.strptime(text.strip(), LOCOMO_DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise DatasetError(
            f"{where}.conversation.{key}: {text!r} does not match {LOCOMO_DATE_FORMAT!r} "
            f"(e.g. '1:56 pm on 8 May, 2023')"
        ) from None


def _memory(
    turn: Any, *, sample_id: str, session: int, timestamp: datetime, speaker_a: str, where: str
) -> Memory:
    dia_id = _field(turn, "dia_id", where, str).strip()
    speaker = _field(turn, "speaker", where, str)
    text = _field(turn, "text", where, str)
    caption = turn.get("blip_caption")
    content = text.strip()
    if isinstance(caption, str) and caption.strip():
        content = f"{content} [shares photo: {caption.strip()}]".strip()
    kind = MemoryKind.PROMPT if speaker == speaker_a else MemoryKind.RESPONSE
    try:
        return Memory(
            id=f"{sample_id}/{dia_id}",
            content=content,
            timestamp=timestamp,
            session_id=f"{sample_id}/session_{session}",
            kind=kind,
            speaker=speaker,
            metadata={"dia_id": dia_id, "image": isinstance(caption, str)},
        )
    except MemoryValidationError as exc:
        raise DatasetError(f"{where}: {exc}") from None


def _dates_without_sessions(
    body: Mapping[str, Any], sessions: set[int], where: str
) -> list[DatasetIssue]:
    dated = {int(m.group(1)) for key in body if (m := _DATE_KEY.fullmatch(key))}
    orphans = sorted(dated - sessions)
    if not orphans:
        return []
    names = ", ".join(f"session_{n}" for n in orphans)
    return [DatasetIssue(where, "dates-without-session", f"{len(orphans)} ignored: {names}")]


# -- questions ----------------------------------------------------------------------------------


def _questions(
    sample: Mapping[str, Any], conversation: Conversation, where: str
) -> tuple[list[Question], list[DatasetIssue]]:
    sample_id = conversation.id
    qa = _field(sample, "qa", sample_id, list)
    questions, issues = [], []
    for index, item in enumerate(qa):
        q_where = f"{sample_id}.qa[{index}]"
        text = _field(item, "question", q_where, str)
        code = _field(item, "category", q_where, int)
        raw_evidence = _field(item, "evidence", q_where, list)
        evidence, unresolved, q_issues = repair_evidence(
            raw_evidence, sample_id, conversation.contents, q_where
        )
        if not evidence:
            q_issues.append(
                DatasetIssue(q_where, "no-evidence", "asked, but not scored for recall")
            )
        answer = item.get("answer", item.get("adversarial_answer"))
        questions.append(
            Question(
                id=f"{sample_id}/q{index}",
                conversation_id=sample_id,
                text=text,
                evidence=evidence,
                category=LOCOMO_CATEGORIES.get(code, str(code)),
                answer=None if answer is None else str(answer),
                unresolved_evidence=unresolved,
            )
        )
        issues.extend(q_issues)
    return questions, issues


def repair_evidence(
    raw: Sequence[Any], sample_id: str, turns: Mapping[str, str], where: str
) -> tuple[tuple[str, ...], tuple[str, ...], list[DatasetIssue]]:
    """(resolved memory ids, unresolved entries, issues) for one question's evidence list."""
    resolved: dict[str, None] = {}
    unresolved: list[str] = []
    issues: list[DatasetIssue] = []
    for entry in raw:
        text = str(entry)
        parts = [p for p in re.split(r"[;,\s]+", text) if p]
        if len(parts) > 1:
            issues.append(DatasetIssue(where, "evidence-split", f"{text!r} -> {parts}"))
        for part in parts or [text]:
            memory_id = _resolve_part(part, sample_id, turns, where, issues)
            if memory_id is None:
                unresolved.append(part)
            elif memory_id in resolved:
                issues.append(DatasetIssue(where, "evidence-duplicate", f"{part!r} listed twice"))
            else:
                resolved[memory_id] = None
    return tuple(resolved), tuple(unresolved), issues


def _resolve_part(
    part: str, sample_id: str, turns: Mapping[str, str], where: str, issues: list[DatasetIssue]
) -> str | None:
    match = _EVIDENCE_ID.fullmatch(part)
    if match is None:
        issues.append(DatasetIssue(where, "evidence-unresolved", f"{part!r} is not a dialogue id"))
        return None
    dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
    if dia_id != part:
        issues.append(DatasetIssue(where, "evidence-normalised", f"{part!r} -> {dia_id!r}"))
    memory_id = f"{sample_id}/{dia_id}"
    if memory_id not in turns:
        issues.append(DatasetIssue(where, "evidence-unresolved", f"{dia_id!r}: no such turn"))
        return None
    return memory_id

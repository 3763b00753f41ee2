"""Reading memories from files: memory JSONL/JSON, LoCoMo JSON, evaluation JSONL, transcripts.

Formats (``read_memories(path, format=...)``; ``auto`` decides from the file):

- ``memories``: JSON Lines, one Memory mapping a line (``{"id": ..., "content": ...}``), or a
  JSON array of them;
- ``locomo``: a LoCoMo JSON file (``disclosure.evaluation.load_locomo``: one memory per turn);
- ``conversations``: the evaluation JSONL format (a conversation a line, with ``turns``);
- ``transcript``: plain text, one ``Speaker: text`` turn a line. A line starting with ``#`` opens
  a session: ``# Session kickoff 2026-03-02 09:00`` (a name, a date and time, both optional). A
  line ``[09:02] Dana: ...`` sets the turn's time; other turns follow the previous one by a
  minute. A line that is not a turn continues the previous turn. Ids are
  ``<file stem>/<session>#<n>``, so ingesting the same file again changes nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from disclosure.faces.limits import check_json_depth, read_bounded
from tiers.errors import DatasetError, InvalidInputError, MemoryValidationError
from tiers.memory import Memory, MemoryKind

Format = Literal["auto", "memories", "locomo", "conversations", "transcript"]
FORMATS: tuple[str, ...] = ("auto", "memories", "locomo", "conversations", "transcript")
ASSISTANT_NAMES = frozenset({"assistant", "ai", "bot", "model", "claude", "chatgpt", "gpt"})
_TURN = re.compile(r"^\s*(?:\[(\d{1,2}):(\d{2})\]\s*)?([^\W\d][\w .'-]{0,39}?)\s*:\s+(.*\S)\s*$")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}):(\d{2}))?")
_STEP = timedelta(minutes=1)
_LOCOMO_KEYS = frozenset({"sample_id", "conversation"})  # what every LoCoMo sample has

__all__ = ["FORMATS", "Format", "detect_format", "parse_transcript", "read_memories"]


def read_memories(
    path: Path | str, *, format: Format = "auto", session: str | None = None
) -> tuple[list[Memory], str]:
    """The memories in ``path`` and the format they were read as. ``session`` names the
    session of a transcript without headers (default: the file's stem)."""
    path = Path(path)
    try:
        text = read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except InvalidInputError as exc:
        raise DatasetError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be read: {exc}") from None
    try:
        check_json_depth(text, str(path))
    except InvalidInputError as exc:
        raise DatasetError(str(exc)) from None
    kind = detect_format(path, text) if format == "auto" else format
    if kind == "locomo":
        from disclosure.evaluation import load_locomo

        return _all_memories(load_locomo(path)), kind
    if kind == "conversations":
        from disclosure.evaluation import load_jsonl

        return _all_memories(load_jsonl(path)), kind
    if kind == "memories":
        return _memory_records(text, path), kind
    return parse_transcript(text, source=path.stem, session=session, where=str(path)), kind


def detect_format(path: Path, text: str) -> str:
    """``memories``, ``locomo``, ``conversations`` or ``transcript``, from the content."""
    head = text.lstrip()[:1]
    if head == "[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return "transcript"
        first = data[0] if isinstance(data, list) and data else {}
        locomo = isinstance(first, dict) and bool(_LOCOMO_KEYS & set(first))
        return "locomo" if locomo else "memories"  # a memory that lacks a field says which
    if head == "{":
        first_line = text.lstrip().splitlines()[0]
        try:
            record = json.loads(first_line)
        except json.JSONDecodeError:
            return "locomo" if path.suffix == ".json" else "transcript"
        return "conversations" if isinstance(record, dict) and "turns" in record else "memories"
    return "transcript"


def _all_memories(dataset: Any) -> list[Memory]:
    return [m for conversation in dataset.conversations for m in conversation.memories]


def _memory_records(text: str, path: Path) -> list[Memory]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: not valid JSON: {exc}") from None
        return [_memory(r, f"{path}: item {i}") for i, r in enumerate(records)]
    memories = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not valid JSON: {exc.msg}") from None
        memories.append(_memory(record, f"{path}:{number}"))
    return memories


def _memory(record: Any, where: str) -> Memory:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: a memory must be a JSON object")
    try:
        return Memory(**record)
    except MemoryValidationError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    except TypeError as exc:
        raise DatasetError(f"{where}: {exc}") from None


@dataclass
class _Turn:
    speaker: str
    lines: list[str]
    session: str
    timestamp: datetime


def parse_transcript(
    text: str,
    *,
    source: str = "transcript",
    session: str | None = None,
    now: datetime | None = None,
    where: str = "transcript",
) -> list[Memory]:
    """Memories from a plain chat transcript (the format in this module's docstring)."""
    current = session or source
    start = clock = (now or datetime.now(UTC)).replace(second=0, microsecond=0)
    day: datetime | None = None
    dated = False
    turns: list[_Turn] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            current, day = _header(line, fallback=f"session-{_count_sessions(turns) + 1}")
            clock = day or clock
            dated = dated or day is not None
            continue
        match = _TURN.match(line)
        if match is None:
            if not turns:
                raise DatasetError(
                    f"{where}:{number}: expected 'Speaker: text' or a '# session' header"
                )
            turns[-1].lines.append(line)
            continue
        hour, minute, speaker, content = match.groups()
        if hour is not None and day is not None:
            clock = day.replace(hour=int(hour) % 24, minute=int(minute) % 60)
        elif turns and turns[-1].session == current:
            clock = max(clock, turns[-1].timestamp + _STEP)
        turns.append(_Turn(speaker.strip(), [content], current, clock))
    if turns and not dated:  # no dates at all: the last turn happened just now
        shift = turns[-1].timestamp - start
        for turn in turns:
            turn.timestamp -= shift
    return _turn_memories(turns, source, where)


def _header(line: str, *, fallback: str) -> tuple[str, datetime | None]:
    body = line.lstrip("#").strip()
    day = None
    match = _DATE.search(body)
    if match is not None:
        date, hour, minute = match.groups()
        try:
            day = datetime.fromisoformat(date).replace(tzinfo=UTC)
        except ValueError:
            raise DatasetError(f"session header {line[:80]!r}: {date} is not a date") from None
        if hour is not None:
            day = day.replace(hour=int(hour) % 24, minute=int(minute) % 60)
        body = (body[: match.start()] + body[match.end() :]).strip()
    body = re.sub(r"^(session)\b\s*[:\-]?\s*", "", body, flags=re.I)
    name = body.strip(" -:|()[]\u2014\u2013").strip()
    return name or (match.group(1) if match else fallback), day


def _count_sessions(turns: list[_Turn]) -> int:
    return len({t.session for t in turns})


def _turn_memories(turns: list[_Turn], source: str, where: str) -> list[Memory]:
    counters: dict[str, int] = {}
    memories = []
    for turn in turns:
        counters[turn.session] = counters.get(turn.session, 0) + 1
        kind = MemoryKind.RESPONSE if turn.speaker.lower() in ASSISTANT_NAMES else MemoryKind.PROMPT
        try:
            memories.append(
                Memory(
                    id=f"{source}/{turn.session}#{counters[turn.session]}",
                    content="\n".join(turn.lines),
                    timestamp=turn.timestamp,
                    session_id=turn.session,
                    kind=kind,
                    speaker=turn.speaker,
                    metadata={"source": source},
                )
            )
        except MemoryValidationError as exc:
            raise DatasetError(f"{where}: session {turn.session!r}: {exc}") from None
    return memories

"""History a user already has, read into memories: Claude Code's transcripts and a ChatGPT
data export (``disclosure import``).

Every file is read and checked before anything is stored: a line or conversation that is not
what its format holds is a :class:`~tiers.errors.DatasetError` naming the file, the line (or the
conversation) and the reason. Ids are stable (see :mod:`.transcript` and :mod:`.chatgpt`), so
importing the same file twice changes nothing; a transcript's turns also get the ids the hooks
gave them, so a session the hooks captured is not stored twice. Memories keep their session,
role (kind and speaker) and time; a transcript's memories also keep the project directory the
agent ran in (``metadata.cwd``), from which the command line picks each session's namespace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from disclosure.faces.agent.chatgpt import export_entries
from disclosure.faces.agent.transcript import Entry, ShapeError, TranscriptReader
from disclosure.faces.limits import check_json_depth, read_bounded
from tiers.errors import DatasetError, InvalidInputError, MemoryValidationError
from tiers.memory import Memory, MemoryKind

__all__ = ["HISTORY_FORMATS", "History", "detect_format", "read_history"]

HISTORY_FORMATS = ("claude-code", "chatgpt")
_KINDS = {
    ("claude-code", "user"): MemoryKind.PROMPT,
    ("claude-code", "assistant"): MemoryKind.RESPONSE,
    ("claude-code", "tool"): MemoryKind.OBSERVATION,
    ("chatgpt", "user"): MemoryKind.PROMPT,
    ("chatgpt", "assistant"): MemoryKind.RESPONSE,
    ("chatgpt", "tool"): MemoryKind.TOOL,
}
_SNIFF_BYTES = 1024 * 1024


@dataclass
class History:
    """What the files held: memories grouped by the project directory they came from (None:
    not known, as for a ChatGPT export)."""

    format: str
    files: int = 0
    sessions: set[str] = field(default_factory=set)
    by_project: dict[str | None, list[Memory]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(m) for m in self.by_project.values())


def detect_format(path: Path) -> str:
    """``export`` (a ``disclosure export`` file), ``claude-code`` (a transcript, or a
    directory of them) or ``chatgpt`` (conversations.json), from the content. Anything else is
    ``export``, whose reader then says what is wrong with it (as before there were others)."""
    if path.is_dir():
        return "claude-code"
    try:
        with path.open("rb") as file:
            head = file.read(_SNIFF_BYTES)
    except OSError:
        return "export"  # its reader reports the error
    text = head.decode("utf-8", "replace").lstrip()
    if text.startswith("["):
        return "chatgpt"
    first = text.split("\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:
        return "chatgpt" if text.startswith("{") and '"mapping"' in text else "export"
    if not isinstance(record, dict):
        return "export"
    if "mapping" in record:
        return "chatgpt"
    if (
        isinstance(record.get("type"), str)
        and record.get("type") != "header"
        and ("sessionId" in record or "parentUuid" in record or "leafUuid" in record)
    ):
        return "claude-code"
    return "export"


def read_history(path: Path, format: str) -> History:
    """Every memory in ``path`` (a file, or for transcripts a directory of ``*.jsonl``)."""
    if format not in HISTORY_FORMATS:
        raise InvalidInputError(f"unknown history format {format!r}; use {HISTORY_FORMATS}")
    history = History(format)
    files = _transcripts(path) if format == "claude-code" else [path]
    for file in files:
        entries = _transcript(file) if format == "claude-code" else _chatgpt(file)
        history.files += 1
        for entry in entries:
            memory = _memory(entry, format, file)
            history.sessions.add(memory.session_id)
            project = entry.metadata.get("cwd") if format == "claude-code" else None
            history.by_project.setdefault(project, []).append(memory)
    return history


def _transcripts(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = sorted(path.rglob("*.jsonl"))
    if not found:
        raise DatasetError(f"{path}: no transcript (*.jsonl) in this directory")
    return found


def _transcript(path: Path) -> list[Entry]:
    reader = TranscriptReader(strict=True)
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                reader.feed(number, line)
    except ShapeError as exc:
        raise DatasetError(f"{path}: {exc}; not a Claude Code transcript") from None
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be read: {exc}") from None
    if reader.records == 0:
        raise DatasetError(f"{path}: holds no transcript record")
    return reader.entries()


def _chatgpt(path: Path) -> list[Entry]:
    try:
        raw = read_bounded(path)
        check_json_depth(raw, str(path))
        data = json.loads(raw)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except InvalidInputError as exc:
        raise DatasetError(str(exc)) from None
    except ValueError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read: {exc}") from None
    try:
        return export_entries(data)
    except ShapeError as exc:
        raise DatasetError(f"{path}: {exc}; not a ChatGPT export") from None


def _memory(entry: Entry, format: str, path: Path) -> Memory:
    try:
        return Memory(
            id=entry.id,
            content=entry.text,
            session_id=entry.session_id,
            kind=_KINDS[format, entry.role],
            speaker=entry.speaker,
            metadata=entry.metadata,
            **({"timestamp": entry.timestamp} if entry.timestamp else {}),
        )
    except MemoryValidationError as exc:
        raise DatasetError(f"{path}: {entry.id}: {exc}") from None

"""Claude Code's session transcripts: the JSON Lines it writes per session under
``~/.claude/projects/<project>/<session>.jsonl``, read into prompts, replies and tool
observations. Standard library only: the end-of-turn hook reads the current turn from the
transcript, and ``disclosure import`` whole files.

A transcript line is a JSON object with a ``type``. ``user`` and ``assistant`` lines carry an
API ``message`` (``role``, ``content``: a string or content blocks), the ``sessionId``, a
``uuid``, a ``timestamp``, ``isSidechain`` (a subagent's conversation) and more; an assistant's
``tool_use`` block is answered by a later user line's ``tool_result`` block, with the tool's
structured result in ``toolUseResult``. Every other type (attachments, hook records, summaries,
the agent's own bookkeeping) is skipped. Ids are stable, so reading a file again gives the same
memories: ``cc:<session>:<uuid>`` for a prompt, ``cc:<session>:<message id>`` for a reply (the
text blocks of one API message joined), ``cc:<session>:tool:<tool use id>`` for a tool use.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from disclosure.faces.agent.observe import SOURCE, observation, observation_id, skipped

__all__ = [
    "Entry",
    "ShapeError",
    "TranscriptReader",
    "read_turn",
    "transcript_entries",
]

TAIL_BYTES = 4 * 1024 * 1024  # what the end-of-turn hook reads of a transcript, at most
MAX_TEXT_CHARS = 100_000  # the API's limit on a memory's content
_COMMAND = re.compile(r"<command-name>\s*(/?[^<]*?)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_SKIPPED_PROMPTS = ("<local-command-stdout>", "<local-command-stderr>", "Caveat:")


class Entry(NamedTuple):
    """A message worth remembering: a prompt, a reply or a tool's use with its result."""

    id: str
    session_id: str
    role: str  # "user", "assistant" or "tool"
    text: str
    timestamp: str | None  # ISO 8601, as the agent wrote it
    speaker: str | None  # "user", "assistant"; none for a tool (no participant: metadata.tool)
    metadata: dict[str, Any]


class ShapeError(ValueError):
    """A line that is not what a transcript holds: its number and why."""

    def __init__(self, line: int | str | None, reason: str) -> None:
        where = f"line {line}: " if isinstance(line, int) else f"{line}: " if line else ""
        super().__init__(f"{where}{reason}")
        self.line = line
        self.reason = reason


class TranscriptReader:
    """Reads transcript lines one at a time; :meth:`entries` gives what they said, in order.

    ``strict``: a line that is not a transcript record raises :class:`ShapeError` (importing a
    file); else it is skipped (a hook reading the end of a file that may be cut mid-line).
    """

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict
        self._entries: list[Entry] = []
        self._replies: dict[str, int] = {}  # reply id -> its place in _entries
        self._pending: dict[str, tuple[str, Any, Mapping[str, Any]]] = {}  # tool use id -> use
        self.records = 0

    def feed(self, number: int, line: str) -> None:
        if not line.strip():
            return
        try:
            record = _record(number, line)
        except ShapeError:
            if self.strict:
                raise
            return
        self.records += 1
        kind = record["type"]
        if kind not in ("user", "assistant") or record.get("isMeta"):
            return
        try:
            message, session = _message(number, record)
        except ShapeError:
            if self.strict:
                raise
            return
        if kind == "assistant":
            self._assistant(record, message, session)
        else:
            self._user(record, message, session)

    def entries(self) -> list[Entry]:
        """Everything read so far; a tool use whose result never came is kept without one."""
        for tool_use_id, (name, tool_input, record) in list(self._pending.items()):
            self._tool(record, tool_use_id, name, tool_input, None)
        self._pending.clear()
        return list(self._entries)

    def _assistant(
        self, record: Mapping[str, Any], message: Mapping[str, Any], session: str
    ) -> None:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                reply_id = str(message.get("id") or record.get("uuid") or "")
                self._reply(record, session, reply_id, str(block["text"]))
            elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                tool_use_id = str(block.get("id") or "")
                self._pending[tool_use_id] = (block["name"], block.get("input"), record)

    def _reply(self, record: Mapping[str, Any], session: str, reply_id: str, text: str) -> None:
        memory_id = f"cc:{session}:{reply_id}"
        known = self._replies.get(memory_id)
        if known is not None:  # another text block of the same API message
            entry = self._entries[known]
            self._entries[known] = entry._replace(text=_cut(f"{entry.text}\n\n{text}"))
            return
        self._replies[memory_id] = len(self._entries)
        self._entries.append(_entry(record, memory_id, session, "assistant", text, "assistant"))

    def _user(self, record: Mapping[str, Any], message: Mapping[str, Any], session: str) -> None:
        content = message.get("content")
        if isinstance(content, str):
            self._prompt(record, session, content)
            return
        blocks = [b for b in content or () if isinstance(b, Mapping)]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for block in results:
            tool_use_id = str(block.get("tool_use_id") or "")
            pending = self._pending.pop(tool_use_id, None)
            if pending is None:
                continue
            name, tool_input, _ = pending
            structured = record.get("toolUseResult") if len(results) == 1 else None
            result = structured if structured is not None else block.get("content")
            self._tool(record, tool_use_id, name, tool_input, result)
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        if texts and not results:
            self._prompt(record, session, "\n".join(texts))

    def _prompt(self, record: Mapping[str, Any], session: str, text: str) -> None:
        text = _command_line(text).strip()
        if not text or text.startswith(_SKIPPED_PROMPTS) or text.startswith("<system-reminder>"):
            return
        memory_id = f"cc:{session}:{record.get('uuid') or len(self._entries)}"
        self._entries.append(_entry(record, memory_id, session, "user", text, "user"))

    def _tool(
        self,
        record: Mapping[str, Any],
        tool_use_id: str,
        name: str,
        tool_input: Any,
        result: Any,
    ) -> None:
        if skipped(name):
            return
        session = str(record.get("sessionId"))
        text, metadata = observation(name, tool_input, result, cwd=_str(record.get("cwd")))
        memory_id = observation_id(session, tool_use_id, name, tool_input)
        entry = _entry(record, memory_id, session, "tool", text, None)
        self._entries.append(entry._replace(metadata={**entry.metadata, **metadata}))


def transcript_entries(lines: Iterable[str], *, strict: bool = True) -> list[Entry]:
    """The entries of a whole transcript (``strict``: an unknown line raises ShapeError)."""
    reader = TranscriptReader(strict=strict)
    for number, line in enumerate(lines, start=1):
        reader.feed(number, line)
    if strict and reader.records == 0:
        raise ShapeError(None, "holds no transcript record")
    return reader.entries()


def read_turn(path: str | os.PathLike[str], prompt_id: str | None) -> list[Entry]:
    """The entries of one turn from the end of a transcript: from the prompt whose
    ``promptId`` is ``prompt_id`` (else the last prompt) to the end of the file."""
    lines = list(_tail_lines(Path(path)))
    start = _turn_start(lines, prompt_id)
    if start is None:
        return []
    return transcript_entries(lines[start:], strict=False)


def _tail_lines(path: Path) -> Iterator[str]:
    with path.open("rb") as file:
        size = file.seek(0, os.SEEK_END)
        file.seek(max(0, size - TAIL_BYTES))
        data = file.read()
    if size > TAIL_BYTES:
        data = data[data.find(b"\n") + 1 :]  # the first line is cut
    for raw in data.splitlines():
        yield raw.decode("utf-8", "replace")


def _turn_start(lines: list[str], prompt_id: str | None) -> int | None:
    """The index of the turn's first prompt line: the earliest of the lines whose
    ``promptId`` is ``prompt_id`` in the last run of them, else the last prompt line."""
    found = None
    last = None
    for index in range(len(lines) - 1, -1, -1):
        record = _prompt_record(lines[index])
        if record is None:
            continue
        if last is None:
            last = index
        if prompt_id is None:
            break
        if record.get("promptId") == prompt_id:
            found = index
        elif found is not None:
            break
    return found if found is not None else last


def _prompt_record(line: str) -> dict[str, Any] | None:
    if '"user"' not in line:
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if (
        not isinstance(record, dict)
        or record.get("type") != "user"
        or record.get("isMeta")
        or _has_tool_result(record)
    ):
        return None
    return record


def _has_tool_result(record: Mapping[str, Any]) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
    )


def _record(number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise ShapeError(number, f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ShapeError(number, f"a {type(record).__name__}, not a JSON object")
    if not isinstance(record.get("type"), str):
        raise ShapeError(number, "a JSON object without a 'type': not a Claude Code record")
    return record


def _message(number: int, record: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    message = record.get("message")
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), str | list):
        raise ShapeError(number, f"a {record['type']} record without message.content")
    session = record.get("sessionId")
    if not isinstance(session, str) or not session.strip() or len(session) > 200:
        raise ShapeError(number, f"a {record['type']} record without a sessionId")
    return message, session


def _entry(  # noqa: PLR0917 - an Entry's fields, in order
    record: Mapping[str, Any],
    memory_id: str,
    session: str,
    role: str,
    text: str,
    speaker: str | None,
) -> Entry:
    metadata: dict[str, Any] = {"source": SOURCE}
    for key, name in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("agentId", "agent_id")):
        value = record.get(key)
        if isinstance(value, str) and value:
            metadata[name] = value
    if record.get("isSidechain"):
        metadata["sidechain"] = True
    timestamp = _str(record.get("timestamp"))
    return Entry(memory_id[:256], session, role, _cut(text), timestamp, speaker, metadata)


def _command_line(text: str) -> str:
    """``/name args`` for the agent's record of a slash command; other text as it is."""
    match = _COMMAND.search(text)
    if match is None:
        return text
    args = _COMMAND_ARGS.search(text)
    return f"{match.group(1)} {args.group(1).strip() if args else ''}".strip()


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 20] + "\n[... cut ...]"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

"""What one tool use becomes in memory: an observation naming the tool, its target and an
excerpt of its result. Standard library only (the tool-use hook imports it); the transcript
importer builds the same observation from the same fields, so both give one memory the same id
and text.

Noisy results are excerpted: a read of a huge file keeps its head, a long command output its
head and its tail (where errors are), a search its first matches; each within a few hundred
characters, with the number of characters left out said in the middle.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "OBSERVATION_KIND",
    "SKIPPED_TOOLS",
    "SOURCE",
    "excerpt",
    "observation",
    "observation_id",
    "result_text",
    "skipped",
    "target_of",
    "todo_text",
]

OBSERVATION_KIND = "observation"  # tiers.memory.MemoryKind.OBSERVATION
SOURCE = "claude-code"
# bookkeeping of the agent itself, and this memory's own tools (memory of memory is noise)
SKIPPED_TOOLS = frozenset({"ToolSearch", "ExitPlanMode", "EnterPlanMode", "ListMcpResourcesTool"})
OWN_TOOLS_PREFIX = "mcp__tiered-disclosure__"
# characters kept of a result, and the share of them taken from its head (the rest: its tail)
_KEPT: dict[str, tuple[int, float]] = {
    "Read": (1200, 0.85),
    "Bash": (1200, 0.5),
    "BashOutput": (1000, 0.5),
    "Grep": (700, 1.0),
    "Glob": (500, 1.0),
    "WebFetch": (1200, 0.85),
    "WebSearch": (900, 1.0),
    "Write": (800, 0.85),
    "Edit": (800, 0.85),
    "MultiEdit": (800, 0.85),
}
_DEFAULT_KEPT = (900, 0.8)
_TARGET_CHARS = 300
_MAX_ID_CHARS = 256
_TODO_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def skipped(tool: str) -> bool:
    """Whether a tool's use is not worth remembering."""
    return tool in SKIPPED_TOOLS or tool.startswith(OWN_TOOLS_PREFIX)


def observation_id(session_id: str, tool_use_id: str | None, tool: str, tool_input: Any) -> str:
    """``cc:<session>:tool:<tool use id>`` (the agent's own id for the call, in its hook input
    and its transcript alike); a hash of the call when it has none."""
    if not tool_use_id:
        seed = json.dumps([tool, tool_input], sort_keys=True, default=str)
        tool_use_id = "h" + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"cc:{session_id}:tool:{tool_use_id}"[:_MAX_ID_CHARS]


def observation(
    tool: str, tool_input: Any, response: Any, *, cwd: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The observation's text and metadata: ``<tool> <target>`` then the result's excerpt."""
    target = target_of(tool, tool_input, cwd)
    full = todo_text(tool_input) if tool == "TodoWrite" else result_text(tool, response)
    limit, head_share = _KEPT.get(tool, _DEFAULT_KEPT)
    kept = full if tool == "TodoWrite" else excerpt(full, limit, head_share)
    first = f"{tool} {target}".strip()
    text = f"{first}\n{kept}" if kept.strip() else first
    metadata: dict[str, Any] = {
        "source": SOURCE,
        "tool": tool,
        "target": target,
        "result_chars": len(full),
        "excerpted": len(kept) < len(full),
    }
    return text, metadata


def target_of(tool: str, tool_input: Any, cwd: str | None = None) -> str:
    """What the tool was used on: a file (relative to the project when inside it), a command,
    a pattern, an address."""
    if not isinstance(tool_input, Mapping):
        return ""
    for key in ("file_path", "notebook_path"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return _short(_relative(value, cwd))
    if tool == "Grep" and isinstance(tool_input.get("pattern"), str):
        where = tool_input.get("path") or tool_input.get("glob") or "."
        return _short(f"{tool_input['pattern']!r} in {_relative(str(where), cwd)}")
    for key in ("command", "pattern", "url", "query", "description", "prompt", "skill"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _short(value)
    first = next((v for v in tool_input.values() if isinstance(v, str) and v.strip()), "")
    return _short(first)


def result_text(tool: str, response: Any) -> str:
    """The readable part of a tool's result (the agent's structured ``tool_response``, or the
    text of a ``tool_result`` block)."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, list):
        return "\n".join(_block_text(b) for b in response).strip()
    if not isinstance(response, Mapping):
        return str(response)
    found = _known_result(tool, response)
    if found is not None:
        return found
    for key in ("content", "result", "output", "stdout", "text"):
        value = response.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return "\n".join(_block_text(b) for b in value).strip()
    return json.dumps(response, ensure_ascii=False, default=str)


def _known_result(tool: str, response: Mapping[str, Any]) -> str | None:
    file = response.get("file")
    if isinstance(file, Mapping) and isinstance(file.get("content"), str):
        return str(file["content"])  # Read
    if "stdout" in response or "stderr" in response:  # Bash
        out, err = str(response.get("stdout") or ""), str(response.get("stderr") or "")
        return f"{out}\n[stderr]\n{err}" if err.strip() else out
    patch = response.get("structuredPatch")
    if isinstance(patch, list) and patch:  # Edit, MultiEdit, Write of an existing file
        lines = [ln for hunk in patch if isinstance(hunk, Mapping) for ln in hunk.get("lines", [])]
        return "\n".join(str(ln) for ln in lines if str(ln)[:1] in "+-")
    names = response.get("filenames")
    if isinstance(names, list) and not isinstance(response.get("content"), str):  # Glob, Grep
        return "\n".join(str(n) for n in names)
    return None


def todo_text(tool_input: Any) -> str:
    """A TodoWrite's list, one ``[ ]``/``[~]``/``[x]`` line a task."""
    todos = tool_input.get("todos") if isinstance(tool_input, Mapping) else None
    if not isinstance(todos, list):
        return ""
    lines = []
    for todo in todos:
        if isinstance(todo, Mapping):
            mark = _TODO_MARKS.get(str(todo.get("status")), "[ ]")
            lines.append(f"{mark} {_short(str(todo.get('content', '')))}")
    return "\n".join(lines)


def excerpt(text: str, limit: int, head_share: float = 0.8) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail (cut at line ends
    where one is near) around a line saying how much was left out."""
    if len(text) <= limit:
        return text
    head_chars = int(limit * head_share)
    tail_chars = limit - head_chars
    head = _cut_back(text[:head_chars])
    tail = _cut_forward(text[len(text) - tail_chars :]) if tail_chars > 0 else ""
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n[... {omitted:,} characters left out ...]\n{tail}"


def _cut_back(head: str) -> str:
    cut = head.rfind("\n")
    return head[:cut] if cut > len(head) * 0.6 else head


def _cut_forward(tail: str) -> str:
    cut = tail.find("\n")
    return tail[cut + 1 :] if 0 <= cut < len(tail) * 0.4 else tail


def _block_text(block: Any) -> str:
    if isinstance(block, Mapping):
        if isinstance(block.get("text"), str):
            return str(block["text"])
        if block.get("type") == "image":
            return "[image]"
        return json.dumps(block, ensure_ascii=False, default=str)
    return str(block)


def _relative(path: str, cwd: str | None) -> str:
    if cwd and Path(path).is_absolute():
        try:
            relative = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not relative.startswith(".."):
            return relative
    return path


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _TARGET_CHARS else flat[: _TARGET_CHARS - 3] + "..."

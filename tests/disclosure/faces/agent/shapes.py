"""Files in the shapes the tests read: Claude Code transcript lines (as version 2.1.328 writes
them, fields as seen in its transcripts) and ChatGPT export conversations (as the export's
documented format has them)."""

from __future__ import annotations

import json
import uuid
from typing import Any

SESSION = "0a7b77d3-9411-4254-86cd-3afa902af807"
PROJECT = "/home/dana/billing"


class Transcript:
    """Lines of one session, chained by parentUuid, a second apart."""

    def __init__(self, session: str = SESSION, cwd: str = PROJECT) -> None:
        self.session = session
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self.second = 0

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.second += 1
        record = {
            "parentUuid": self.lines[-1].get("uuid") if self.lines else None,
            "isSidechain": False,
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "timestamp": f"2026-11-27T06:14:{self.second:02d}.000Z",
            "userType": "external",
            "entrypoint": "sdk-cli",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.328",
            "gitBranch": "main",
            **extra,
        }
        self.lines.append(record)
        return record

    def noise(self) -> None:
        """Records the agent writes beside the conversation."""
        queued = {"type": "queue-operation", "operation": "enqueue", "sessionId": self.session}
        self.lines.append({**queued, "timestamp": "2026-11-27T06:14:00.000Z"})
        self._base("attachment", attachment={"type": "hook_additional_context", "content": ["x"]})
        self.lines.append({"type": "last-prompt", "lastPrompt": "x", "sessionId": self.session})

    def prompt(self, text: str, prompt_id: str | None = None, **extra: Any) -> dict[str, Any]:
        fields = {"promptId": prompt_id} if prompt_id else {}
        return self._base("user", message={"role": "user", "content": text}, **fields, **extra)

    def reply(self, text: str, message_id: str | None = None, **extra: Any) -> dict[str, Any]:
        message = {
            "id": message_id or f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
        }
        return self._base("assistant", message=message, **extra)

    def tool(
        self, name: str, tool_input: dict[str, Any], result: Any, text: str, **extra: Any
    ) -> str:
        """An assistant's tool_use and the user line with its tool_result; the tool use id."""
        tool_use_id = f"toolu_{uuid.uuid4().hex[:20]}"
        use = {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}
        message = {"id": f"msg_{uuid.uuid4().hex[:20]}", "role": "assistant", "content": [use]}
        self._base("assistant", message=message, **extra)
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": text}
        self._base(
            "user",
            message={"role": "user", "content": [block]},
            toolUseResult=result,
            sourceToolAssistantUUID=self.lines[-1]["uuid"],
            **extra,
        )
        return tool_use_id

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)


def conversation(
    ident: str, title: str, turns: list[tuple[str, str]], *, start: float = 1_760_000_000.0
) -> dict[str, Any]:
    """A linear conversation: a hidden system root, then the turns (role, text)."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]},
        "sys": {
            "id": "sys",
            "message": _message("sys", "system", "", start,
                                metadata={"is_visually_hidden_from_conversation": True}),
            "parent": "root",
            "children": [],
        },
    }  # fmt: skip
    parent = "sys"
    for n, (role, text) in enumerate(turns):
        node = f"{ident}-m{n}"
        mapping[node] = {"id": node, "message": _message(node, role, text, start + 10 * (n + 1)),
                         "parent": parent, "children": []}  # fmt: skip
        mapping[parent]["children"].append(node)
        parent = node
    return {
        "id": ident,
        "conversation_id": ident,
        "title": title,
        "create_time": start,
        "update_time": start + 100,
        "mapping": mapping,
        "current_node": parent,
        "is_archived": False,
        "moderation_results": [],
        "safe_urls": [],
    }


def _message(
    ident: str, role: str, text: str, when: float, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": ident,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": when,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": role == "assistant",
        "weight": 1.0,
        "metadata": metadata if metadata is not None else {"model_slug": "gpt-4o"},
        "recipient": "all",
    }


def branch(conv: dict[str, Any], after: str, role: str, text: str, *, chosen: bool) -> str:
    """Another child of node ``after`` (an edit or a regenerated answer); ``chosen`` makes it
    the conversation's current node."""
    node = f"{after}-alt{len(conv['mapping'][after]['children'])}"
    when = conv["mapping"][after]["message"]["create_time"] + 5
    conv["mapping"][node] = {"id": node, "message": _message(node, role, text, when),
                             "parent": after, "children": []}  # fmt: skip
    conv["mapping"][after]["children"].append(node)
    if chosen:
        conv["current_node"] = node
    return node

"""A ChatGPT data export (``conversations.json``) read into prompts and replies.

The file is a JSON array of conversations (a single conversation object is taken too). Each
has an ``id`` (or ``conversation_id``), a ``title``, a ``create_time`` (seconds since the epoch)
and a message tree: ``mapping`` from node id to ``{"message", "parent", "children"}``, with
``current_node`` the leaf of the branch the user last saw. Edits and regenerated answers leave
other branches in the tree; the conversation is read along the chosen one, from
``current_node`` back to the root (its last-created leaf when ``current_node`` is missing).
A message has ``author.role`` (``user``, ``assistant``, ``tool``, ``system``), ``create_time``
and ``content`` (``content_type`` and ``parts``, or ``text``). System messages, hidden ones and
empty ones are left out. Ids are ``chatgpt:<conversation>:<message id>``: the same file read
again gives the same memories.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from disclosure.faces.agent.transcript import Entry, ShapeError

__all__ = ["conversation_entries", "export_entries"]

SOURCE = "chatgpt"
_ROLES = {"user": "user", "assistant": "assistant", "tool": "tool"}
_SKIPPED_TYPES = frozenset(
    {"user_editable_context", "thoughts", "reasoning_recap", "model_editable_context"}
)
MAX_TEXT_CHARS = 100_000


def export_entries(data: Any) -> list[Entry]:
    """Every conversation's messages along its chosen branch, conversation by conversation."""
    if isinstance(data, Mapping) and "mapping" in data:
        data = [data]
    if not isinstance(data, list):
        raise ShapeError(None, "a ChatGPT export is a JSON array of conversations")
    entries: list[Entry] = []
    for index, conversation in enumerate(data):
        entries += conversation_entries(conversation, f"conversation {index}")
    return entries


def conversation_entries(conversation: Any, where: str) -> list[Entry]:
    if not isinstance(conversation, Mapping) or not isinstance(
        conversation.get("mapping"), Mapping
    ):
        raise ShapeError(where, "not a conversation: it has no 'mapping' (the message tree)")
    ident = conversation.get("conversation_id") or conversation.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise ShapeError(where, "a conversation without an 'id'")
    where = f"{where} ({ident})"
    title = conversation.get("title") if isinstance(conversation.get("title"), str) else None
    started = _seconds(conversation.get("create_time"))
    entries = []
    for position, node in enumerate(_branch(conversation["mapping"], conversation, where)):
        entry = _entry(node, ident, title, started, position)
        if entry is not None:
            entries.append(entry)
    return entries


def _branch(mapping: Mapping[str, Any], conversation: Mapping[str, Any], where: str) -> list[Any]:
    """The nodes from the root to the chosen leaf."""
    leaf = conversation.get("current_node")
    if not isinstance(leaf, str) or leaf not in mapping:
        leaf = _last_leaf(mapping)
    chain = []
    seen: set[str] = set()
    node_id: Any = leaf
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            raise ShapeError(where, f"its message tree loops at node {node_id!r}")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, Mapping):
            raise ShapeError(where, f"node {node_id!r} is not an object")
        chain.append(node)
        node_id = node.get("parent")
    chain.reverse()
    return chain


def _last_leaf(mapping: Mapping[str, Any]) -> str | None:
    leaves = [
        (_seconds(_obj(node.get("message")).get("create_time")) or 0.0, node_id)
        for node_id, node in mapping.items()
        if isinstance(node, Mapping) and not node.get("children")
    ]
    return max(leaves)[1] if leaves else None


def _entry(
    node: Mapping[str, Any],
    conversation: str,
    title: str | None,
    started: float | None,
    position: int,
) -> Entry | None:
    message = node.get("message")
    if not isinstance(message, Mapping):
        return None  # the root placeholder
    author, metadata = _obj(message.get("author")), _obj(message.get("metadata"))
    role = _ROLES.get(str(author.get("role")))
    text = _content_text(message.get("content"))
    if role is None or metadata.get("is_visually_hidden_from_conversation") or not text.strip():
        return None
    ident = str(message.get("id") or node.get("id") or position)
    when = _seconds(message.get("create_time")) or (started or 0.0) + position / 1000
    meta: dict[str, Any] = {"source": SOURCE, "conversation_id": conversation}
    if title:
        meta["title"] = title
    if isinstance(metadata.get("model_slug"), str):
        meta["model"] = metadata["model_slug"]
    if role == "tool" and isinstance(author.get("name"), str):
        meta["tool"] = author["name"]  # python, browser, dalle...: no participant names
    return Entry(
        id=f"{SOURCE}:{conversation}:{ident}"[:256],
        session_id=conversation[:200],
        role=role,
        text=text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + "\n[... cut ...]",
        timestamp=datetime.fromtimestamp(when, UTC).isoformat() if when else None,
        speaker=role,
        metadata=meta,
    )


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, Mapping) or content.get("content_type") in _SKIPPED_TYPES:
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(_part_text(part) for part in parts).strip()
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return ""


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        if isinstance(part.get("text"), str):
            return str(part["text"])
        if part.get("content_type") == "image_asset_pointer" or "asset_pointer" in part:
            return "[image]"
    return ""


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value < 32503680000 else None  # before the year 3000

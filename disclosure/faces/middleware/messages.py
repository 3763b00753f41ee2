"""OpenAI-style chat messages: their text, their token cost, where context goes, turn memories.

Pure helpers for the chat middleware (:mod:`disclosure.faces.middleware.chat`) and the LangChain
adapter; nothing here holds state. A message is a mapping with ``role`` and ``content``;
content is a string or a list of parts (``{"type": "text", "text": ...}``; other parts, such as
images, carry no text to count).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from disclosure.core.profile_sections import ContextPlacement
from formatters.tokens import TokenCounter
from tiers.memory import MAX_ID_LENGTH, Memory, MemoryKind

Message = Mapping[str, Any]
_CONVERSATION_ROLES = ("user", "assistant")
_SESSION_CHARS = 200
_TICK = timedelta(milliseconds=1)  # a reply never sorts before its question

__all__ = [
    "Message",
    "context_message",
    "conversation_tokens",
    "default_session_id",
    "insert_context",
    "last_user_index",
    "message_text",
    "reply_text",
    "stream_delta",
    "turn_memories",
]


def message_text(message: Message) -> str:
    """The text of a message: its string content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def conversation_tokens(
    messages: Sequence[Message], counter: TokenCounter, *, per_message: int, reply: int
) -> int:
    """What the messages cost the model: each one's text and name, plus the chat format."""
    total = reply
    for message in messages:
        total += per_message + counter(message_text(message))
        name = message.get("name")
        if isinstance(name, str):
            total += counter(name)
    return total


def last_user_index(messages: Sequence[Message]) -> int | None:
    """The position of the last user message, or None."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return None


MEMORY_OPEN, MEMORY_CLOSE = "<memory-reference>", "</memory-reference>"


def context_message(preamble: str, context: str, role: str = "system") -> dict[str, str]:
    """The message that carries the disclosed context: a system message, or (``role`` user) a
    user message holding one marked block of quoted reference data."""
    body = f"{preamble}\n\n{context}" if preamble else context
    if role == "system":
        return {"role": "system", "content": body}
    return {"role": "user", "content": f"{MEMORY_OPEN}\n{body}\n{MEMORY_CLOSE}"}


def with_rule(messages: Sequence[Message], rule: str) -> list[Message]:
    """A new list whose first system message ends with ``rule`` (a system message is added
    first when there is none, or when that message's content is not plain text)."""
    result = list(messages)
    if not rule:
        return result
    first = next((i for i, m in enumerate(result) if m.get("role") == "system"), None)
    if first is not None:
        content = result[first].get("content")
        if isinstance(content, str):
            result[first] = {
                **result[first],
                "content": f"{content}\n\n{rule}" if content else rule,
            }
            return result
    return [{"role": "system", "content": rule}, *result]


def insert_context(
    messages: Sequence[Message], injected: Message, placement: ContextPlacement
) -> list[Message]:
    """A new list with ``injected`` at ``placement``; the caller's list is left alone."""
    result = list(messages)
    if placement is ContextPlacement.BEFORE_SYSTEM:
        position = 0
    elif placement is ContextPlacement.AFTER_SYSTEM:
        position = 0
        while position < len(result) and result[position].get("role") == "system":
            position += 1
    else:
        last = last_user_index(result)
        position = len(result) if last is None else last
    result.insert(position, injected)
    return result


def reply_text(response: Any) -> str | None:
    """The assistant's text from a chat-completion response: an OpenAI SDK object
    (``.choices[0].message.content``), its dict form, or a plain string. None if absent."""
    if isinstance(response, str):
        return response
    if _is_raw_response(response):  # with_raw_response: the parsed completion is inside
        try:
            response = response.parse()
        except Exception:
            return None
    message = _first_choice(response, "message")
    content = _get(message, "content")
    return content if isinstance(content, str) else None


def _is_raw_response(response: Any) -> bool:
    """The OpenAI SDK's ``with_raw_response`` wrapper (HTTP details and ``.parse()``)."""
    return callable(getattr(response, "parse", None)) and hasattr(response, "http_response")


def stream_delta(chunk: Any) -> str:
    """The text a streamed chunk adds (``.choices[0].delta.content``, its dict form, or a str)."""
    if isinstance(chunk, str):
        return chunk
    content = _get(_first_choice(chunk, "delta"), "content")
    return content if isinstance(content, str) else ""


def _first_choice(response: Any, field: str) -> Any:
    choices = _get(response, "choices")
    if not isinstance(choices, Sequence) or isinstance(choices, str) or not choices:
        return None
    return _get(choices[0], field)


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def default_session_id(messages: Sequence[Message]) -> str:
    """A session id that stays the same across the calls of one conversation: a hash of its
    first user message (clients resend the whole history each turn)."""
    first = next((m for m in messages if m.get("role") == "user"), None)
    seed = message_text(first) if first is not None else ""
    return "chat-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]


def turn_memories(
    messages: Sequence[Message],
    reply: str | None,
    *,
    session_id: str,
    asked_at: datetime,
    answered_at: datetime,
    partial: bool = False,
) -> list[Memory]:
    """The user's last message and the reply as memories with stable ids.

    The user's message at position n of the conversation (user and assistant messages counted)
    gets ``<session>#<n>-<hash of its text>`` and the reply ``<session>#<n+1>-<same hash>``: a
    resent or regenerated turn replaces its earlier version instead of adding a copy, and a
    client that sends only the new message each time (so every turn sits at position 0) still
    gets one memory per turn. ``partial``: the reply was cut short (a stream closed early); its
    memory says so in ``metadata["partial"]``.
    """
    last = last_user_index(messages)
    if last is None:
        return []
    user = messages[last]
    position = sum(1 for m in messages[:last] if m.get("role") in _CONVERSATION_ROLES)
    prefix = _id_prefix(session_id)
    memories = []
    text = message_text(user)
    asked = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    if text.strip():
        speaker = user.get("name") if isinstance(user.get("name"), str) else "user"
        memories.append(
            Memory(
                id=f"{prefix}#{position}-{asked}",
                content=text,
                timestamp=asked_at,
                session_id=session_id,
                kind=MemoryKind.PROMPT,
                speaker=speaker,
                metadata={"role": "user", "source": "middleware"},
            )
        )
    if reply is not None and reply.strip():
        memories.append(
            Memory(
                id=f"{prefix}#{position + 1}-{asked}",
                content=reply,
                timestamp=max(answered_at, asked_at + _TICK),
                session_id=session_id,
                kind=MemoryKind.RESPONSE,
                speaker="assistant",
                metadata={"role": "assistant", "source": "middleware"}
                | ({"partial": True} if partial else {}),
            )
        )
    return memories


def _id_prefix(session_id: str) -> str:
    if len(session_id) <= min(_SESSION_CHARS, MAX_ID_LENGTH - 12):
        return session_id
    return "s-" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]

"""The full history as a model would see it without disclosure: the baseline for savings."""

from __future__ import annotations

from collections.abc import Iterable

from tiers.history import history_line
from tiers.memory import Memory


def render_full_history(memories: Iterable[Memory]) -> str:
    """Every memory in time order, one line each, with a header line per session."""
    lines: list[str] = []
    session: str | None = None
    for memory in sorted(memories, key=lambda m: (m.timestamp, m.id)):
        if memory.session_id != session:
            session = memory.session_id
            lines.append(f"## Session {session} ({memory.timestamp:%Y-%m-%d %H:%M})")
        lines.append(history_line(memory))
    return "\n".join(lines)

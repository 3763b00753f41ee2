"""A memory as one line of the full conversation history (the baseline for token savings)."""

from __future__ import annotations

from tiers.memory import Memory


def history_line(memory: Memory) -> str:
    """``speaker: content`` (the kind stands in for a missing speaker).

    ``formatters.history.render_full_history`` writes the same line, so the archive's
    per-memory line counts add up to that rendering minus its session headers and newlines.
    """
    return f"{memory.speaker or memory.kind.value}: {memory.content}"

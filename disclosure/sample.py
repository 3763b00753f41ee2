"""The bundled sample conversation that ``disclosure demo`` ingests and queries."""

from __future__ import annotations

import importlib.resources
import json

from tiers.memory import Memory


def load_sample_conversation() -> list[Memory]:
    """Four sessions of a team shipping an invoicing rewrite: dates, people, files, decisions."""
    resource = importlib.resources.files("disclosure") / "data" / "sample_conversation.jsonl"
    text = resource.read_text(encoding="utf-8")
    return [Memory(**json.loads(line)) for line in text.splitlines() if line.strip()]

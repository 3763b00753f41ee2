"""Splitting a session's memories into topics by continuity of topic, time, files and entities.

Memories are walked in time order. Each one's continuity with the current topic is a weighted
mean of four signals in [0, 1] (weights from the profile's ``consolidation.grouping``):

- topic: the share of its informative words (stemmed; stopwords and chat filler dropped) found
  among the topic's last few memories;
- time: 1 within ``max_gap_seconds`` of the previous memory, falling linearly to 0 at twice that;
- files: the share of the file paths it names that the topic named already (a memory naming
  none gives no evidence: the signal is left out of the mean);
- entities: likewise for its entities.

Below ``split_below`` (once the topic holds ``min_items``) it starts a new topic; a topic never
grows past ``max_items``. The walk is deterministic: the same memories give the same topics.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from disclosure.consolidation.config import GroupingConfig
from tiers.memory import Memory
from tiers.text import Tokenizer

_FILE = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+"
    r"|\b[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|c|h|cc|cpp|hpp|rb|php|cs|swift|md|rst|"
    r"yaml|yml|json|toml|ini|cfg|sql|sh|txt|html|css|lock)\b"
)
# Conversational filler: frequent in chat, says nothing about the topic (on top of stopwords).
_FILLER_WORDS = """
    yeah yes yep okay ok oh wow great good nice cool awesome amazing thanks thank really just
    like know think sure glad hey hi hello haha lol sounds love lot much also well totally
    definitely absolutely pretty super going get got make made things thing stuff
"""
FILLER = frozenset(_FILLER_WORDS.split())


def files_in(text: str) -> set[str]:
    """File paths (``src/app.py``, ``README.md``) a text names."""
    return {m.group(0).strip("./").lower() for m in _FILE.finditer(text)}


@dataclass
class _Topic:
    members: list[Memory] = field(default_factory=list)
    words: list[set[str]] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)


def split_topics(
    memories: Sequence[Memory], config: GroupingConfig, tokenizer: Tokenizer
) -> list[list[Memory]]:
    """``memories`` (one session's) in topics, each in time order."""
    ordered = sorted(memories, key=lambda m: (m.timestamp, m.id))
    topics: list[_Topic] = []
    current = _Topic()
    for memory in ordered:
        words = informative(memory.content, tokenizer)
        files = files_in(memory.content)
        entities = {e.lower() for e in memory.entities}
        if current.members and _starts_new(
            current, memory, words=words, files=files, entities=entities, config=config
        ):
            topics.append(current)
            current = _Topic()
        current.members.append(memory)
        current.words.append(words)
        current.files |= files
        current.entities |= entities
    if current.members:
        topics.append(current)
    return [t.members for t in topics]


def continuity(
    *,
    topic_words: set[str],
    topic_files: set[str],
    topic_entities: set[str],
    gap_seconds: float,
    memory: tuple[set[str], set[str], set[str]],
    config: GroupingConfig,
) -> float:
    """How much a memory (its words, files, entities) continues a topic, in [0, 1]."""
    words, files, entities = memory
    signals = [
        (config.topic, _share(words, topic_words)),
        (config.time, _time(gap_seconds, config.max_gap_seconds)),
        (config.files, _share(files, topic_files)),
        (config.entities, _share(entities, topic_entities)),
    ]
    known = [(weight, value) for weight, value in signals if value is not None and weight > 0]
    total = sum(weight for weight, _ in known)
    return sum(weight * value for weight, value in known) / total if total else 1.0


def _starts_new(
    topic: _Topic,
    memory: Memory,
    *,
    words: set[str],
    files: set[str],
    entities: set[str],
    config: GroupingConfig,
) -> bool:
    if len(topic.members) >= config.max_items:
        return True
    if len(topic.members) < config.min_items:
        return False
    recent = set().union(*topic.words[-config.window :])
    gap = (memory.timestamp - topic.members[-1].timestamp).total_seconds()
    score = continuity(
        topic_words=recent,
        topic_files=topic.files,
        topic_entities=topic.entities,
        gap_seconds=gap,
        memory=(words, files, entities),
        config=config,
    )
    return score < config.split_below


def _share(items: set[str], seen: set[str]) -> float | None:
    if not items:
        return None
    return len(items & seen) / len(items)


def _time(gap_seconds: float, max_gap: float) -> float:
    if gap_seconds <= max_gap:
        return 1.0
    return max(0.0, 1.0 - (gap_seconds - max_gap) / max_gap)


def keywords(memories: Sequence[Memory], tokenizer: Tokenizer, n: int) -> list[str]:
    """The ``n`` words most of ``memories`` share (by how many memories name them, then how
    often), each in the surface form used most."""
    spread: Counter[str] = Counter()
    frequency: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    for memory in memories:
        seen: set[str] = set()
        for word in re.findall(r"[^\W_][\w-]*(?:'[a-z]+)?", memory.content):
            lower = word.lower()
            if len(word) < 3 or "'" in word or lower in tokenizer.stopwords or lower in FILLER:
                continue
            stems = tokenizer.query(word)
            if not stems:
                continue
            stem = stems[0]
            frequency[stem] += 1
            surface.setdefault(stem, Counter())[word.lower()] += 1
            if stem not in seen:
                seen.add(stem)
                spread[stem] += 1
    ranked = sorted(frequency, key=lambda s: (-spread[s], -frequency[s], s))
    return [surface[s].most_common(1)[0][0] for s in ranked[:n]]


def informative(text: str, tokenizer: Tokenizer) -> set[str]:
    """The stems of ``text``'s informative words: stopwords and conversational filler dropped."""
    fillers = _filler_stems(tokenizer)
    return {w for w in tokenizer.query(text) if w not in fillers and len(w) > 1}


_FILLER_STEMS: dict[Tokenizer, frozenset[str]] = {}


def _filler_stems(tokenizer: Tokenizer) -> frozenset[str]:
    found = _FILLER_STEMS.get(tokenizer)
    if found is None:
        found = frozenset(s for word in FILLER for s in tokenizer.query(word))
        _FILLER_STEMS[tokenizer] = found
    return found

"""Passages of a long memory, each embedded on its own so that any part of it can be found.

An embedder reads a bounded window (MiniLM: 256 word pieces, about 190 words), so the vector of
a thousand-token answer stands for its opening only: a question about its middle finds it by
its words in the archive's BM25 but not by meaning. With ``tiers.warm.passage_words`` set, a
memory whose content runs past that many words is also split into passages of whole sentences
of about that many words (a sentence longer than that is cut at word boundaries), each embedded
as ``speaker: passage``; a search scores the memory by the best of its own vector and its
passages' vectors. Passages are search keys only: what is disclosed is the memory (cut to its
best part by the excerpts of the disclosure pipeline).
"""

from __future__ import annotations

import re

SEPARATOR = "#p"  # passage ids are MEMORY_ID#pN; parsed from the right, so any memory id works
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def passage_id(memory_id: str, index: int) -> str:
    return f"{memory_id}{SEPARATOR}{index}"


def parent_of(passage: str) -> str:
    """The memory id of a passage id (``a#p1#p0`` -> ``a#p1``)."""
    return passage.rsplit(SEPARATOR, 1)[0]


def split_passages(content: str, words: int) -> list[str]:
    """``content`` as passages of whole sentences of at most about ``words`` words; [] when it
    is no longer than ``words`` words (its own vector covers it) or ``words`` is 0."""
    if words <= 0 or len(content.split()) <= words:
        return []
    pieces: list[list[str]] = []
    for sentence in _SENTENCE_END.split(content):
        tokens = sentence.split()
        while len(tokens) > words:  # one sentence longer than a passage: cut it
            pieces.append(tokens[:words])
            tokens = tokens[words:]
        if tokens:
            pieces.append(tokens)
    passages: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if current and len(current) + len(piece) > words:
            passages.append(" ".join(current))
            current = []
        current.extend(piece)
    if current:
        passages.append(" ".join(current))
    return passages

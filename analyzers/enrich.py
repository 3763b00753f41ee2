"""Ingest enrichment: the entities of a memory and a one-line extractive summary.

The summary is the first informative sentence among the leading ones (``lead_sentences``): one
with at least ``min_content_words`` words that are not stop words or punctuation, so "Sure!"
or "Here is the fix:" give way to the sentence that says what the fix was. Fenced code blocks
and markdown markers are left out; whitespace collapses to single spaces; a sentence longer
than ``max_chars`` (100) is cut at a clause boundary or else a word boundary, with an ellipsis.
Entities are ranked by how often they occur, then by first appearance, at most ``max_entities``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzers.config import AnalyzerConfig, SummaryConfig
from analyzers.entities import entities_in, ids_in, ranked
from analyzers.pipeline import Pipeline, get_pipeline
from analyzers.text import normalise

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

ELLIPSIS = "…"
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MARKUP = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,3}[.)]\s+)+|\*\*|`")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_DASHES = "-\u2013\u2014"
_WORD = re.compile(r"[^\W_][\w.'/-]*")
# a line break that ends a summary candidate: a blank line, a line after a colon, and the
# line before a heading, list item or quote (hard-wrapped prose keeps its single breaks)
_BREAK = re.compile(r"\n\s*\n|(?<=:)[ \t]*\n|\n(?=[ \t]*(?:#{1,6}\s|[-*+>]\s|\d{1,3}[.)]\s))")
_CLAUSE = re.compile(rf"[,;:]\s|\s[{_DASHES}]\s")
_BATCH = 256


@dataclass(frozen=True, slots=True)
class Enrichment:
    """What ingest adds to a memory that has none: its entities and a one-line summary."""

    entities: tuple[str, ...]
    summary: str


def enrich(text: str, *, config: AnalyzerConfig | None = None) -> Enrichment:
    """Entities and a summary (<= 100 characters, one line) of ``text``."""
    return enrich_many([text], config=config)[0]


def enrich_many(
    texts: Iterable[str], *, config: AnalyzerConfig | None = None, batch_size: int = _BATCH
) -> list[Enrichment]:
    """:func:`enrich` for many texts at once, through ``nlp.pipe`` (faster per text)."""
    config = config or AnalyzerConfig()
    pipeline = get_pipeline(config)
    prepared = [normalise(t) for t in texts]
    docs = pipeline.docs(prepared, batch_size=batch_size)
    trained = pipeline.enrichment_docs(prepared, batch_size)
    return [_enrich_doc(pipeline, config, doc, t) for doc, t in zip(docs, trained, strict=True)]


def _enrich_doc(
    pipeline: Pipeline, config: AnalyzerConfig, doc: Doc, trained: Doc | None
) -> Enrichment:
    ids = ids_in(pipeline, doc.text)
    found = entities_in(pipeline, doc, ids, trained)
    entities = ranked(found, config.entities.max_entities)
    return Enrichment(entities, summarise(doc, config.summary, pipeline.stop_words))


def summarise(doc: Doc, config: SummaryConfig, stop_words: AbstractSet[str]) -> str:
    """The one-line extractive summary of ``doc`` (see the module docstring)."""
    fences = [(m.start(), m.end()) for m in _FENCE.finditer(doc.text)] if "```" in doc.text else []
    candidates: list[tuple[str, int]] = []
    for sent in doc.sents:
        for segment in _BREAK.split(_outside(sent, fences)):
            line = _clean(segment)
            if not line:
                continue
            score = _content_words(line, stop_words)
            if score >= config.min_content_words:
                return fit(line, config.max_chars)
            candidates.append((line, score))
            if len(candidates) >= config.lead_sentences:
                return fit(max(candidates, key=lambda c: c[1])[0], config.max_chars)
    if not candidates:
        return fit(_clean(doc.text), config.max_chars)
    return fit(max(candidates, key=lambda c: c[1])[0], config.max_chars)


def fit(text: str, max_chars: int) -> str:
    """``text`` in at most ``max_chars`` characters: whole, or cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    room = text[: max_chars - len(ELLIPSIS)]
    clauses = [m.start() for m in _CLAUSE.finditer(room) if m.start() >= 0.6 * len(room)]
    if clauses:
        cut = room[: clauses[-1]]
    elif text[len(room)] == " ":
        cut = room  # the cut falls between two words
    else:
        space = room.rfind(" ")
        cut = room[:space] if space > 0 else room
    return cut.rstrip(" ,;:" + _DASHES) + ELLIPSIS


def _outside(sent: Span, fences: Sequence[tuple[int, int]]) -> str:
    if not fences:
        return str(sent.text)
    start, text = sent.start_char, sent.text
    keep = [True] * len(text)
    for f_start, f_end in fences:
        for i in range(max(f_start - start, 0), min(f_end - start, len(text))):
            keep[i] = False
    return "".join(ch if k else " " for ch, k in zip(text, keep, strict=True))


def _clean(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    lines = (_MARKUP.sub("", line.strip()) for line in text.splitlines())
    return " ".join(" ".join(lines).split())


def _content_words(line: str, stop_words: AbstractSet[str]) -> int:
    return sum(1 for w in _WORD.findall(line) if len(w) > 1 and w.lower() not in stop_words)

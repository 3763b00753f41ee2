"""Entities of a text: code-like ones from patterns, names and places from the entity ruler.

Order of precedence where spans overlap: memory ids (never entities), then URLs, paths, files,
tickets and code identifiers (patterns on the raw text), then the ruler's names, places and
acronyms, then a trained pipeline's entities when the profile names one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from analyzers.patterns import Found, find_entities, find_ids, iter_unique, overlapping

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from analyzers.pipeline import Pipeline


def ids_in(pipeline: Pipeline, text: str) -> list[Found]:
    """Memory ids and citations in ``text``, normalised, in order."""
    return find_ids(pipeline.ids, text)


def entities_in(
    pipeline: Pipeline, doc: Doc, ids: Sequence[Found], trained: Doc | None = None
) -> list[Found]:
    """Every entity occurrence in ``doc`` (repeats included), in text order."""
    found = find_entities(pipeline.entities, doc.text, ids)
    taken = [*ids, *found]
    for ent in doc.ents:
        if not overlapping(ent.start_char, ent.end_char, taken):
            found.append(Found(ent.text, ent.label_, ent.start_char, ent.end_char))
    if trained is not None:
        taken = [*ids, *found]
        for item in pipeline.trained_entities(trained):
            if not overlapping(item.start, item.end, taken):
                found.append(item)
    found.sort(key=lambda item: item.start)
    return found


def unique(found: Sequence[Found]) -> tuple[str, ...]:
    """Entity texts in order of first appearance, without case-insensitive repeats."""
    return tuple(item.text for item in iter_unique(found))


def ranked(found: Sequence[Found], limit: int) -> tuple[str, ...]:
    """At most ``limit`` entity texts, the most frequent first, ties by first appearance."""
    counts = Counter(item.text.casefold() for item in found)
    firsts = list(iter_unique(found))
    order = sorted(range(len(firsts)), key=lambda i: (-counts[firsts[i].text.casefold()], i))
    return tuple(firsts[i].text for i in order[:limit])

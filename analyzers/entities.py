"""Entities of a text: code-like ones from patterns, names and places from the entity ruler.

Order of precedence where spans overlap: memory ids (never entities), then URLs, paths, files,
tickets and code identifiers (patterns on the raw text), then the ruler's names, places and
acronyms, then a trained pipeline's entities when the profile names one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from analyzers.patterns import Found, find_entities, find_ids, iter_unique, overlapping

_LINE_MARKERS = " \t#-*+>0123456789.)"
_LATIN_HEAD = re.compile(r"[^\u0250-\U0010ffff]+")

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from analyzers.pipeline import Pipeline


def ids_in(pipeline: Pipeline, text: str) -> list[Found]:
    """Memory ids and citations in ``text``, normalised, in order."""
    lowered = text.lower()
    if not any(prefix in lowered for prefix in pipeline.id_prefixes):
        return []  # the common case, found without running the pattern
    return find_ids(pipeline.ids, text)


def entities_in(
    pipeline: Pipeline, doc: Doc, ids: Sequence[Found], trained: Doc | None = None
) -> list[Found]:
    """Every entity occurrence in ``doc`` (repeats included), in text order."""
    text = doc.text
    found = find_entities(pipeline.entities, text, ids)
    taken = [*ids, *found]
    for ent in doc.ents:
        start, end = ent.start_char, ent.end_char
        if overlapping(start, end, taken) or (ent.label_ == "NAME" and _line_start(text, start)):
            continue
        value = _LATIN_HEAD.match(ent.text)
        if value:  # "Priya가": the Korean particle is not part of the name
            found.append(Found(value.group(), ent.label_, start, start + value.end()))
    if trained is not None:
        taken = [*ids, *found]
        for item in pipeline.trained_entities(trained):
            if not overlapping(item.start, item.end, taken):
                found.append(item)
    found.sort(key=lambda item: item.start)
    return found


def _line_start(text: str, start: int) -> bool:
    # "## Summary", "- **Root cause**": a capitalised word opening a line (after markdown
    # markers only) is a heading or a list item's first word, not a name
    line = text[text.rfind("\n", 0, start) + 1 : start]
    return not line.strip(_LINE_MARKERS)


def unique(found: Sequence[Found]) -> tuple[str, ...]:
    """Entity texts in order of first appearance, without case-insensitive repeats."""
    return tuple(item.text for item in iter_unique(found))


def ranked(found: Sequence[Found], limit: int) -> tuple[str, ...]:
    """At most ``limit`` entity texts, the most frequent first, ties by first appearance."""
    counts = Counter(item.text.casefold() for item in found)
    firsts = list(iter_unique(found))
    order = sorted(range(len(firsts)), key=lambda i: (-counts[firsts[i].text.casefold()], i))
    return tuple(firsts[i].text for i in order[:limit])

"""A memory's facets: what it names, by type, for gathering the answers to questions that ask for
a kind of thing ("which cities ...", "what games ...": :mod:`analyzers.answer`).

:func:`facets_many` reads memories with the rules and the trained pipeline's named-entity
recogniser; the gathering index calls it off the ingest path (``disclosure.core.pipeline.facets``).

Facets are strings ``LABEL:text``, lowercased, one per distinct pair:

* the trained pipeline's entities, with their labels (``GPE:chicago``, ``WORK_OF_ART:inception``,
  ``PERSON:kyle``; a small model mislabels some, ``PERSON:counter-strike``, which is why a kind of
  answer takes several labels);
* the rules' entities: the gazetteer's (``GPE:seoul``, ``PRODUCT:redis``) and capitalised names
  (``NAME:street fighter``), which a trained pipeline's labels often miss;
* titles in quotes (``QUOTED:little women``): "I just watched "Little Women"";
* when the trained pipeline parses memories (a pipeline of your own; the pinned one reads
  only their entities), the common nouns that head their noun chunks, as stems
  (``NOUN:tournament``).

At most ``limit`` facets a memory, entities first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from analyzers.config import AnalyzerConfig
from analyzers.entities import entities_in, ids_in
from analyzers.names import NAME
from analyzers.patterns import Found
from analyzers.pipeline import get_pipeline
from analyzers.text import normalise, stem

if TYPE_CHECKING:
    from spacy.tokens import Doc

QUOTED = "QUOTED"
NOUN = "NOUN"
_SKIP_LABELS = frozenset({"ORDINAL", "PERCENT"})
_QUOTE = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,60})[\"\u201d]")
_MAX_TITLE_WORDS = 8
_MAX_TEXT = 60


def facets_of(
    text: str,
    rule_entities: Sequence[Found],
    trained: Doc | None,
    *,
    rule_labels: Collection[str] = (),
    limit: int = 40,
) -> tuple[str, ...]:
    """The facets of ``text`` (see the module): ``rule_entities`` are the rules' entities of it
    (those labelled one of ``rule_labels``, the gazetteer's, count), ``trained`` its trained
    parse, if any."""
    found: list[str] = []
    if trained is not None:
        found += [_facet(e.label_, e.text) for e in trained.ents if e.label_ not in _SKIP_LABELS]
    found += [_facet(e.label, e.text) for e in rule_entities if e.label in rule_labels]
    found += [_facet(QUOTED, t) for t in quoted_titles(text)]
    if trained is not None and trained.has_annotation("DEP"):  # noun chunks need the parse
        found += [_facet(NOUN, stem(c.root.lower_)) for c in trained.noun_chunks if _nounish(c)]
    return tuple(dict.fromkeys(f for f in found if f))[:limit]


def facets_many(
    texts: Sequence[str], *, config: AnalyzerConfig | None = None, batch_size: int = 64
) -> list[tuple[str, ...]]:
    """The facets of each of ``texts`` (see the module)."""
    config = config or AnalyzerConfig()
    pipeline = get_pipeline(config)
    prepared = [normalise(t) for t in texts]
    labels = {*config.entities.gazetteer, NAME}
    out = []
    docs = pipeline.docs(prepared, batch_size=batch_size)
    trained = pipeline.entity_docs(prepared, batch_size)
    for doc, parsed in zip(docs, trained, strict=True):
        found = entities_in(pipeline, doc, ids_in(pipeline, doc.text))
        out.append(facets_of(doc.text, found, parsed, rule_labels=labels))
    return out


def quoted_titles(text: str) -> list[str]:
    """Titles in quotes: a quoted span of at most eight words that starts with a capital."""
    out = []
    for match in _QUOTE.finditer(text):
        title = match.group(1).strip(" ,.!?;:")
        if title[:1].isupper() and len(title.split()) <= _MAX_TITLE_WORDS:
            out.append(title)
    return out


def _facet(label: str, text: str) -> str:
    value = " ".join(text.casefold().split())[:_MAX_TEXT]
    return f"{label}:{value}" if value else ""


def _nounish(chunk: object) -> bool:
    root = getattr(chunk, "root", None)
    return root is not None and root.pos_ == "NOUN" and root.lower_.isalpha()


def labels_of(facets: Iterable[str]) -> set[str]:
    """The labels among ``facets``."""
    return {f.split(":", 1)[0] for f in facets}

"""The spaCy pipeline built from rules, built once per process and shared.

``spacy.blank("en")`` with a ``sentencizer`` and an ``entity_ruler`` (a small gazetteer), then
:class:`analyzers.names.CapitalisedNames` (capitalised words not at a sentence start as a proxy
for names and places, and acronyms), plus a
``PhraseMatcher`` on ``NORM`` for the Latin-script trigger phrases of the profile. The vocab's
``NORM`` getter is the trigger stemmer (:func:`analyzers.text.stem`), so each word type is
stemmed once, when the vocab first sees it, and "explained" meets "explain" with no work per
token. Overrides are explicit requests and match exactly (a ``PhraseMatcher`` on ``LOWER``), so
"details" does not fire ``detailed``. Non-Latin phrases (Korean) match as whitespace-insensitive
substrings instead.

A trained pipeline (``analyzer.spacy_pipeline``; :mod:`analyzers.trained`) runs beside the rules
when there is one: ``auto``, the default, is the pinned English pipeline when it is installed and
its files are as recorded, else the rules alone; another name must be installed, or building the
pipeline fails. Its entities are added to the rules', and :attr:`Pipeline.trained_name` says
which one ran (``rules`` when none did).
:func:`get_pipeline` caches one :class:`Pipeline` per distinct set of the config parts that
shape it (thresholds do not), so every analyzer and every ``enrich`` call share it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzers.config import AnalyzerConfig, EntityConfig
from analyzers.levels import DisclosureLevel
from analyzers.names import CapitalisedNames
from analyzers.patterns import Found, entity_regex, id_regex
from analyzers.text import compact, is_latin, stem
from analyzers.trained import RULES
from analyzers.trained import load as load_trained

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

logger = logging.getLogger(__name__)

KEYWORD = "keyword"
OVERRIDE = "override"
EXPANSION = "expansion"
CONTINUATION_START = "continuation_start"
CONTINUATION_ANYWHERE = "continuation_anywhere"
TEMPORAL = "temporal"
TOPIC = "topic"
TOPIC_AFTER = "topic_after"

MONTHS = (
    *("january", "february", "march", "april", "may", "june", "july"),
    *("august", "september", "october", "november", "december"),
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
TEMPORAL_KINDS = (
    *("today", "yesterday", "day_before_yesterday", "this_morning", "last_night"),
    *("this_week", "last_week", "this_month", "last_month", "this_year", "last_year"),
    *("earlier", "recently"),
)


@dataclass(frozen=True, slots=True)
class Spec:
    """A trigger phrase as the profile wrote it, and what it signals."""

    kind: str
    phrase: str
    level: DisclosureLevel | None = None
    tag: str | None = None  # the temporal kind, for temporal phrases


@dataclass(frozen=True, slots=True)
class TriggerHit:
    """A trigger phrase found in the text, with its character span."""

    spec: Spec
    start: int
    end: int


def trigger_specs(config: AnalyzerConfig) -> list[Spec]:
    """Every trigger phrase of ``config``, in a stable order."""
    specs = [
        Spec(kind, phrase, level)
        for kind, table in ((KEYWORD, config.keywords), (OVERRIDE, config.overrides))
        for level, phrases in table.items()
        for phrase in phrases
    ]
    specs += [Spec(EXPANSION, p) for p in config.expansion]
    specs += [Spec(CONTINUATION_START, p) for p in config.continuation.starts]
    specs += [Spec(CONTINUATION_ANYWHERE, p) for p in config.continuation.anywhere]
    temporal = config.temporal
    specs += [Spec(TEMPORAL, p, tag=k) for k in TEMPORAL_KINDS for p in getattr(temporal, k)]
    specs += [Spec(TOPIC, p) for p in temporal.topic_markers]
    specs += [Spec(TOPIC_AFTER, p) for p in temporal.topic_markers_after]
    return specs


class Pipeline:
    """The shared rule pipeline: spaCy objects, trigger tables and compiled patterns."""

    def __init__(self, config: AnalyzerConfig) -> None:
        self.nlp = _blank_pipeline()
        self.stop_words: frozenset[str] = frozenset(self.nlp.Defaults.stop_words)
        specs = trigger_specs(config)
        latin = [s for s in specs if is_latin(s.phrase)]
        self.trigger_norms = frozenset(
            stem(word) for s in latin for word in s.phrase.split() if word.isalpha()
        )
        ruler: Any = self.nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "LOWER"})
        ruler.add_patterns(_gazetteer_patterns(config.entities))
        entities = config.entities
        self.names = CapitalisedNames(
            self.nlp.vocab,
            ignore=sorted({w.lower() for w in entities.ignore} | set(MONTHS) | set(WEEKDAYS)),
            triggers=sorted(self.trigger_norms),
            capitalised=entities.capitalised,
            acronyms=entities.acronyms,
        )
        exact = [s for s in latin if s.kind == OVERRIDE]
        stemmed = [s for s in latin if s.kind != OVERRIDE]
        self._labels: dict[int, list[Spec]] = {}
        self._matchers = [
            self._phrase_matcher(stemmed, "NORM"),
            self._phrase_matcher(exact, "LOWER"),
        ]
        self._scripts = _script_table(s for s in specs if not is_latin(s.phrase))
        self.ids = id_regex(config.id_prefixes)
        self.id_prefixes = tuple(prefix.lower() for prefix in config.id_prefixes)
        self.entities = entity_regex(config.entities.file_extensions, config.entities.not_tickets)
        self.trained_labels = frozenset(config.entities.trained_labels)
        loaded = load_trained(config.spacy_pipeline)
        self.trained: Language | None = loaded.nlp if loaded is not None else None
        self.trained_name = loaded.name if loaded is not None else RULES
        self._lean_queries = loaded is not None and loaded.lean_queries
        self._trained_chars = config.entities.trained_chars
        names = self.trained.pipe_names if self.trained is not None else []
        self._memory_skips = [name for name in names if name != "ner"]

    def _phrase_matcher(self, specs: Sequence[Spec], attr: str) -> Any:
        from spacy.matcher import PhraseMatcher

        matcher = PhraseMatcher(self.nlp.vocab, attr=attr)
        for spec in specs:
            label = f"{attr}|{spec.kind}|{spec.level}|{spec.tag}|{spec.phrase}"
            key = self.nlp.vocab.strings.add(label)
            if key not in self._labels:
                matcher.add(label, [self.nlp.make_doc(spec.phrase)])
            self._labels.setdefault(key, []).append(spec)
        return matcher

    def doc(self, text: str) -> Doc:
        """``text`` through the rule pipeline, capitalised names included."""
        return self.names(self.nlp(text))

    def docs(self, texts: Iterable[str], batch_size: int = 256) -> Iterator[Doc]:
        """:meth:`doc` for many texts, through ``nlp.pipe``."""
        return (self.names(doc) for doc in self.nlp.pipe(texts, batch_size=batch_size))

    def triggers(self, doc: Doc) -> list[TriggerHit]:
        """Every trigger phrase in ``doc``: Latin ones word by word (overrides exactly, the rest
        on stems), the others as substrings."""
        hits = []
        for matcher in self._matchers:
            for match_id, start, end in matcher(doc):
                span = doc[start:end]
                specs = self._labels[match_id]
                hits += [TriggerHit(s, span.start_char, span.end_char) for s in specs]
        text = doc.text
        if not text.isascii():
            key = compact(text)
            for needle, pattern, specs in self._scripts:
                if needle in key and (m := pattern.search(text)):
                    hits += [TriggerHit(s, m.start(), m.end()) for s in specs]
        return hits

    def parse_query(self, text: str) -> Doc | None:
        """A query through the trained pipeline, or None without one. The pinned pipeline
        parses only a query that asks a question (a question word: what it asks for is read off
        the parse), without its entities (the rules find a query's): on a short query the parse
        costs a few milliseconds, the entities as much again, and neither is spent where
        nothing reads it. A pipeline of your own runs whole on every query."""
        if self.trained is None:
            return None
        if not self._lean_queries:
            return self.trained(text)
        if not _QUESTION.search(text):
            return None
        return self.trained(text, disable=_QUERY_SKIPS)

    def enrichment_docs(self, texts: Sequence[str], batch_size: int) -> Iterator[Doc | None]:
        """A pipeline of your own over memories at enrichment (its entities join theirs); Nones
        for the pinned pipeline, whose entities go to the gathering index off the ingest path
        (:meth:`entity_docs`), or without one: enrichment costs what the rules cost."""
        if self.trained is None or self._lean_queries:
            return iter([None] * len(texts))
        return self.trained.pipe(texts, batch_size=batch_size)

    def entity_docs(self, texts: Sequence[str], batch_size: int) -> Iterator[Doc | None]:
        """Memories' typed entities for their facets, or Nones without a trained pipeline. The
        pinned pipeline runs its named-entity recogniser alone (it has its own token vectors:
        half the cost of the whole pipeline) on a memory's first ``entities.trained_chars``
        characters; a pipeline of your own runs whole."""
        if self.trained is None:
            return iter([None] * len(texts))
        if not self._lean_queries:
            return self.trained.pipe(texts, batch_size=batch_size)
        cut = [t[: self._trained_chars] for t in texts]
        return self.trained.pipe(cut, batch_size=batch_size, disable=self._memory_skips)

    def trained_entities(self, doc: Doc) -> list[Found]:
        """Entities of the trained pipeline's ``doc`` whose labels the profile keeps."""
        return [
            Found(e.text, e.label_, e.start_char, e.end_char)
            for e in doc.ents
            if e.label_ in self.trained_labels
        ]


# A question word: what the question asks for can be read off its parse.
_QUESTION = re.compile(r"\b(?:what|which|who|whom|whose|where|when|how)\b", re.IGNORECASE)
_QUERY_SKIPS = ("ner", "lemmatizer")  # a query's entities come from the rules; no lemmas read


def _blank_pipeline() -> Language:
    import spacy
    from spacy.attrs import NORM

    nlp = spacy.blank("en")
    vocab: Any = nlp.vocab
    vocab.lex_attr_getters[NORM] = stem  # every new word type gets its stem as its norm
    for lexeme in nlp.vocab:  # and the few the blank vocab already holds
        lexeme.norm_ = stem(lexeme.orth_)
    nlp.add_pipe("sentencizer")
    return nlp


def _gazetteer_patterns(config: EntityConfig) -> list[dict[str, Any]]:
    return [
        {"label": label, "pattern": name}
        for label, names in config.gazetteer.items()
        for name in names
    ]


def _script_table(specs: Iterable[Spec]) -> list[tuple[str, re.Pattern[str], list[Spec]]]:
    # Non-Latin phrases: a whitespace-free key for a quick `in` test, and a pattern that allows
    # any spacing between the characters to find where the phrase sits in the text.
    table: dict[str, tuple[re.Pattern[str], list[Spec]]] = {}
    for spec in specs:
        needle = compact(spec.phrase)
        if needle not in table:
            pattern = re.compile(r"\s*".join(re.escape(ch) for ch in needle), re.IGNORECASE)
            table[needle] = (pattern, [])
        table[needle][1].append(spec)
    return [(needle, pattern, specs) for needle, (pattern, specs) in table.items()]


# -- the per-process cache ---------------------------------------------------------------------

_PIPELINE_FIELDS: dict[str, Any] = {
    "keywords": True,
    "overrides": True,
    "expansion": True,
    "id_prefixes": True,
    "continuation": {"starts", "anywhere"},
    "temporal": {*TEMPORAL_KINDS, "topic_markers", "topic_markers_after"},
    "entities": {
        *("gazetteer", "capitalised", "acronyms", "ignore", "file_extensions"),
        *("not_tickets", "trained_labels", "trained_chars"),
    },
    "spacy_pipeline": True,
}
_CACHE: dict[str, Pipeline] = {}
_LOCK = threading.Lock()


def pipeline_key(config: AnalyzerConfig) -> str:
    """The parts of ``config`` that shape the pipeline, as one string."""
    return config.model_dump_json(include=_PIPELINE_FIELDS)


def get_pipeline(config: AnalyzerConfig) -> Pipeline:
    """The process-wide pipeline for ``config``, built on first use."""
    key = pipeline_key(config)
    pipeline = _CACHE.get(key)
    if pipeline is None:
        with _LOCK:
            pipeline = _CACHE.get(key)
            if pipeline is None:
                logger.debug("building the analyzer pipeline (%d cached)", len(_CACHE))
                pipeline = _CACHE[key] = Pipeline(config)
    return pipeline

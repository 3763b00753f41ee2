"""The QueryComplexityAnalyzer: how much memory a query deserves, and why.

Signals (``QueryAnalysis.detected_signals``), a stable vocabulary, in this order:

=================================  =============================================================
``override:<level>:<phrase>``      an explicit override phrase ("override:minimal:brief")
``keyword:<level>:<phrase>``       a complexity keyword ("keyword:detailed:explain"), matched on
                                   word stems ("explained") or, for non-Latin, as a substring
``expansion_request``              "tell me more", "show the details", "자세히 알려줘", or an id
``explicit_id``                    a memory id or citation ("mem_12", "[mem:a7Bc3x]")
``continuation``                   a follow-up cue ("and ...", "what about", "also", "keep
                                   going", "tell me more") with a previous turn to follow
``temporal:<kind>``                a time reference: ``today``, ``yesterday``,
                                   ``day_before_yesterday``, ``this_morning``, ``last_night``,
                                   ``this_week``, ``last_week``, ``this_month``, ``last_month``,
                                   ``this_year``, ``last_year``, ``earlier``, ``recently``,
                                   ``date``, ``month``, ``weekday``, ``ago``, ``past``, ``topic``
``long_query``                     more than ``long_query_words`` words
``many_entities``                  more than ``many_entities`` distinct entities
``enumeration``                    the query asks for a set or a count ("which cities has",
                                   "how many"): :mod:`analyzers.enumeration`
=================================  =============================================================

``<phrase>`` is the trigger as the profile spells it, not as the user typed it. How the signals
combine is documented in :mod:`analyzers.precedence`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from analyzers.answer import answer_type
from analyzers.config import AnalyzerConfig
from analyzers.entities import entities_in, ids_in, unique
from analyzers.enumeration import asks_for_set
from analyzers.levels import AnswerType, DisclosureLevel, QueryAnalysis
from analyzers.patterns import Found
from analyzers.pipeline import (
    CONTINUATION_ANYWHERE,
    CONTINUATION_START,
    EXPANSION,
    KEYWORD,
    OVERRIDE,
    Pipeline,
    TriggerHit,
    get_pipeline,
)
from analyzers.precedence import Decision, Vote, complexity, decide
from analyzers.temporal import TimeMatch, find_times, to_reference
from analyzers.text import normalise

_HISTORY_CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the text alone says, before the previous turn is taken into account."""

    text: str
    words: int
    hits: list[TriggerHit]
    ids: list[Found]
    entities: tuple[str, ...]
    times: list[TimeMatch]
    cue: bool
    enumeration: bool
    answer: AnswerType | None

    def of(self, kind: str) -> list[TriggerHit]:
        return [h for h in self.hits if h.spec.kind == kind]


class QueryComplexityAnalyzer:
    """Reads a query (with the recent turns) and returns a :class:`QueryAnalysis`.

    Building one loads the shared rule pipeline for ``config`` (once per process); a trained
    pipeline named in ``config.spacy_pipeline`` that is not installed raises ``LookupError``
    here. ``analyze`` is safe to call from several threads.
    """

    def __init__(self, config: AnalyzerConfig | None = None) -> None:
        self.config = config or AnalyzerConfig()
        self.pipeline: Pipeline = get_pipeline(self.config)
        fillers = "|".join(re.escape(f) for f in self.config.continuation.fillers)
        self._opening = re.compile(rf"(?:[\W_]|\b(?:{fillers or '(?!x)x'})\b)*", re.IGNORECASE)
        self._history: dict[tuple[str, DisclosureLevel | None], DisclosureLevel] = {}

    def analyze(
        self,
        query: str,
        *,
        history: Sequence[str] = (),
        now: datetime | None = None,
        previous: QueryAnalysis | None = None,
    ) -> QueryAnalysis:
        """Analyse ``query``. ``history``: earlier user turns, oldest first; ``previous``: the
        previous turn's analysis, if the caller has it; ``now``: when time ranges resolve
        (default: the current UTC time; a naive value is taken as UTC)."""
        when = _aware(now)
        reading = self._read(query, when)

        def inherited() -> DisclosureLevel | None:
            if previous is not None:
                return previous.level
            return self._history_level(history, when) if history else None

        return self._verdict(query, reading, inherited)

    # -- reading the text ----------------------------------------------------------------------

    def _read(self, query: str, now: datetime) -> _Reading:
        text = normalise(query)[: self.config.max_query_chars]
        doc = self.pipeline.doc(text)
        trained = self.pipeline.parse_query(text)
        hits = self.pipeline.triggers(doc)
        ids = ids_in(self.pipeline, text)
        entities = unique(entities_in(self.pipeline, doc, ids, trained))
        times = find_times(text, hits, now, self.config.temporal)
        enumeration = asks_for_set(text, self.config.enumeration)
        answer = answer_type(text, self.config.answers, trained)
        cue = self._cue(text, hits, ids)
        return _Reading(
            text, len(query.split()), hits, ids, entities, times, cue, enumeration, answer
        )

    def _cue(self, text: str, hits: Sequence[TriggerHit], ids: Sequence[Found]) -> bool:
        for hit in hits:
            kind = hit.spec.kind
            if kind == CONTINUATION_ANYWHERE or (kind == EXPANSION and not ids):
                return True
            if kind == CONTINUATION_START and self._opening.fullmatch(text[: hit.start]):
                return True
        return False

    def _history_level(self, history: Sequence[str], now: datetime) -> DisclosureLevel | None:
        level: DisclosureLevel | None = None
        for turn in list(history)[-self.config.continuation.history_turns :]:
            key = (turn, level)
            cached = self._history.get(key)
            if cached is None:
                reading = self._read(turn, now)
                cached = self._verdict(turn, reading, _constant(level)).level
                if len(self._history) >= _HISTORY_CACHE_SIZE:
                    self._history.clear()
                self._history[key] = cached
            level = cached
        return level

    # -- the verdict ---------------------------------------------------------------------------

    def _verdict(
        self, query: str, r: _Reading, inherited: Callable[[], DisclosureLevel | None]
    ) -> QueryAnalysis:
        config = self.config
        previous_level = inherited() if r.cue else None
        continuation = previous_level is not None
        overrides = _votes(r.of(OVERRIDE), "override")
        keywords = _votes(_uncovered(r.of(KEYWORD), r.of(OVERRIDE)), "keyword")
        expansion = bool(r.of(EXPANSION) or r.ids)
        floors = self._floors(r, expansion)
        decision = decide(
            default=config.default_level,
            overrides=overrides,
            keywords=keywords,
            inherited=previous_level,
            floors=floors,
        )
        signals = self._signals(r, overrides, keywords, expansion, continuation)
        votes = {v.signal: v.level for v in (*overrides, *keywords, *floors)}
        if previous_level is not None:
            votes["continuation"] = previous_level
        return QueryAnalysis(
            query=query,
            level=decision.level,
            detected_signals=signals,
            entities=r.entities,
            temporal=to_reference(r.times),
            is_continuation=continuation,
            explicit_ids=tuple(dict.fromkeys(f.text for f in r.ids)),
            expansion_request=expansion,
            complexity=self._complexity(decision, r, overrides, keywords, continuation),
            reason=decision.reason,
            votes=votes,
            override=decision.override,
            inherited_level=previous_level,
            word_count=r.words,
            answer=r.answer,
            pipeline=self.pipeline.trained_name,
        )

    def _floors(self, r: _Reading, expansion: bool) -> list[Vote]:
        floors = self.config.floors
        fired: list[tuple[str, DisclosureLevel | None]] = []
        if expansion:
            fired.append(
                ("explicit_id" if r.ids else "expansion_request", floors.expansion_request)
            )
        if r.times:
            fired.append((f"temporal:{r.times[0].kind}", floors.temporal))
        if r.words > self.config.long_query_words:
            fired.append(("long_query", floors.long_query))
        if len(r.entities) > self.config.many_entities:
            fired.append(("many_entities", floors.many_entities))
        if r.enumeration:
            fired.append(("enumeration", floors.enumeration))
        return [Vote(signal, level) for signal, level in fired if level is not None]

    def _signals(
        self,
        r: _Reading,
        overrides: Sequence[Vote],
        keywords: Sequence[Vote],
        expansion: bool,
        continuation: bool,
    ) -> tuple[str, ...]:
        signals = [v.signal for v in (*overrides, *keywords)]
        signals += ["expansion_request"] * expansion + ["explicit_id"] * bool(r.ids)
        signals += ["continuation"] * continuation
        signals += [f"temporal:{t.kind}" for t in r.times]
        signals += ["long_query"] * (r.words > self.config.long_query_words)
        signals += ["many_entities"] * (len(r.entities) > self.config.many_entities)
        signals += ["enumeration"] * r.enumeration
        return tuple(dict.fromkeys(signals))

    def _complexity(
        self,
        decision: Decision,
        r: _Reading,
        overrides: Sequence[Vote],
        keywords: Sequence[Vote],
        continuation: bool,
    ) -> float:
        triggers = len({v.phrase for v in (*overrides, *keywords)}) + len(r.of(EXPANSION))
        return complexity(
            decision.level,
            self.config,
            words=r.words,
            entities=len(r.entities),
            temporal=bool(r.times),
            continuation=continuation,
            triggers=triggers,
        )


def _aware(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _constant(level: DisclosureLevel | None) -> Callable[[], DisclosureLevel | None]:
    return lambda: level


def _uncovered(hits: Sequence[TriggerHit], covers: Sequence[TriggerHit]) -> list[TriggerHit]:
    # a keyword inside an override's span ("briefly" is both) counts once, as the override
    return [h for h in hits if not any(c.start <= h.start and h.end <= c.end for c in covers)]


def _votes(hits: Sequence[TriggerHit], kind: str) -> list[Vote]:
    votes: dict[str, Vote] = {}
    for hit in sorted(hits, key=lambda h: h.start):
        level = hit.spec.level or DisclosureLevel.STANDARD
        signal = f"{kind}:{level}:{hit.spec.phrase}"
        votes.setdefault(signal, Vote(signal, level, hit.spec.phrase))
    return list(votes.values())

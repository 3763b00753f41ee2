"""Ranking the tiers' candidates with one learned model: the chance that a memory answers.

The tiers each return a ranked list with scores on one meaning of [0, 1] (the archive's BM25
as a share of the query's IDF-weighted evidence, the vectors' cosine similarity). Rank fusion
(:mod:`disclosure.core.pipeline.fusion`) trusts only the order of those lists; this module reads
what the lists and the memories themselves show, as features of each candidate:

============================  ==================================================================
``lexical``, ``vector``        the archive's and the vectors' scores (a memory a list did not
                               return takes that list's last score, or 0 if the list ran out)
``lexical_rank``,              ``-log(1 + rank)`` in each list (absent: the list's depth)
``vector_rank``
``session``                    the share of the best ten candidates' evidence its session holds
                               (an answer's context sits around it)
``named_speaker``,             the query names exactly one participant, and the memory is (or
``other_speaker``              is not) theirs: "what did Caroline paint?"
``assistant_unasked``,         the memory is an assistant's turn, and the query does not (or
``assistant_asked``            does) ask what the assistant said: "what did you recommend?"
``in_time_range``              the memory falls in the time the query names ("last week")
``recent``                     the working set matched it or holds it as recent context
``answer_label``               the query asks for a kind of answer (a place, a person, a thing,
                               a date: :mod:`analyzers.answer`) and the memory names an entity
                               of a label that answers it, other than a participant's name (its
                               facets in the gathering index:
                               :mod:`disclosure.core.pipeline.facets`)
============================  ==================================================================

The model is a logistic regression over these features (``fusion.learned`` in the profile); its
probability orders the candidates (``Candidate.fused``), and the composer spends the budget on
the best chance of use per token. The shipped weights were fitted on two kinds of history,
LoCoMo's conversations between two people and LongMemEval's user-assistant chats, and are checked
across them (``python -m benchmarks.fit_ranker``). A candidate's ``score`` stays its best tier
score, so the expansion thresholds keep their meaning.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from analyzers import QueryAnalysis
from disclosure.core.pipeline.fusion import Candidate
from tiers.memory import Memory, MemoryKind, ScoredMemory

FEATURES = (
    "lexical",
    "vector",
    "lexical_rank",
    "vector_rank",
    "session",
    "named_speaker",
    "other_speaker",
    "assistant_unasked",
    "assistant_asked",
    "in_time_range",
    "recent",
    "answer_label",
)
ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "bot", "model", "chatbot", "copilot"})
_SESSION_TOP = 10
# "you said / you told me / you once recommended", "your suggestion": the query asks what the
# assistant said, so its turns are evidence, not noise.
_ASKS_ASSISTANT = re.compile(
    r"\byou\s+(?:\w+\s+){0,2}?(?:said|told|mentioned|recommended|suggested|gave|provided|listed|"
    r"shared|explained|described|wrote|offered|advised|proposed|named|noted|pointed|talked|"
    r"answered|replied|came up with|showed)\b"
    r"|\byour\s+(?:recommendation|suggestion|advice|answer|response|list|explanation|idea)s?\b",
    re.IGNORECASE,
)


def asks_assistant(query: str) -> bool:
    """Whether ``query`` asks about what the assistant said (``you recommended``...)."""
    return _ASKS_ASSISTANT.search(query) is not None


def is_assistant(memory: Memory) -> bool:
    """An assistant's turn: its speaker is an assistant role, or it is an unattributed reply."""
    speaker = (memory.speaker or "").strip().casefold()
    if speaker:
        return speaker in ASSISTANT_SPEAKERS
    return memory.kind is MemoryKind.RESPONSE


@dataclass(frozen=True, slots=True)
class Ask:
    """What the ranking reads of the query: its text, the participants it names, its analysis,
    and how deep each list was asked for (a memory a full list did not return scored lower);
    ``facets``: the candidates' facets from the gathering index (by memory id), and
    ``participants``: everyone's names, case-folded (a participant's name answers nothing)."""

    query: str
    named: Collection[str]
    analysis: QueryAnalysis
    depths: Mapping[str, int]
    facets: Mapping[str, Collection[str]] = field(default_factory=dict)
    participants: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class Features:
    """The candidates (first-seen order), their feature rows, confidences and finders."""

    memories: tuple[Memory, ...]
    matrix: np.ndarray
    confidence: np.ndarray
    found_by: tuple[tuple[str, ...], ...]


def features(lists: Mapping[str, Sequence[ScoredMemory]], ask: Ask) -> Features:
    """One row of :data:`FEATURES` per candidate any list returned."""
    memories: dict[str, Memory] = {}
    found: dict[str, list[str]] = {}
    best: dict[str, float] = {}
    for name, hits in lists.items():
        for hit in hits:  # each hit's id read once: a couple of hundred hits per query
            memory = hit.memory
            key = memory.id
            score = hit.score
            if key in memories:
                found[key].append(name)
                best[key] = max(best[key], score)
            else:
                memories[key] = memory
                found[key] = [name]
                best[key] = max(0.0, score)
    ids = list(memories)
    n = len(ids)
    lexical, lexical_rank = _list_columns(lists.get("cold", ()), ids, ask.depths.get("cold", 0))
    vector, vector_rank = _list_columns(lists.get("warm", ()), ids, ask.depths.get("warm", 0))
    matrix = np.zeros((n, len(FEATURES)), dtype=np.float64)
    matrix[:, 0], matrix[:, 1] = lexical, vector
    matrix[:, 2], matrix[:, 3] = lexical_rank, vector_rank
    rows = list(memories.values())
    matrix[:, 4] = _session_share(rows, 0.5 * lexical + 0.5 * vector)
    matrix[:, 5], matrix[:, 6] = _speaker_columns(rows, ask.named)
    assistant = np.array([is_assistant(m) for m in rows], dtype=np.float64)
    asked = asks_assistant(ask.query)
    matrix[:, 7] = assistant * (not asked)
    matrix[:, 8] = assistant * asked
    matrix[:, 9] = _in_range(rows, ask.analysis)
    recent = ("hot", "active")
    matrix[:, 10] = [float(any(t in recent for t in found[i])) for i in ids]
    matrix[:, 11] = _answer_labels(ids, ask)
    confidence = np.array([best[i] for i in ids], dtype=np.float64)
    return Features(tuple(rows), matrix, confidence, tuple(tuple(found[i]) for i in ids))


def rank(
    lists: Mapping[str, Sequence[ScoredMemory]],
    ask: Ask,
    weights: Mapping[str, float],
    *,
    priors: Mapping[str, float] | None = None,
    floor: tuple[float, float] | None = None,
) -> list[Candidate]:
    """Candidates best first by the model's probability (``fused``); ``priors`` multiply it.
    ``floor``: ``(absolute, relative)``, the result is what :func:`floored` would keep of it
    (the others are dropped before they become candidates: usually most of them)."""
    table = features(lists, ask)
    if not table.memories:
        return []
    coef = np.array([weights.get(name, 0.0) for name in FEATURES])
    logits = table.matrix @ coef + weights.get("bias", 0.0)
    chance = (1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))).tolist()
    factor = priors or {}
    fused = [chance[row] * factor.get(m.id, 1.0) for row, m in enumerate(table.memories)]
    rows: Sequence[int] = range(len(fused))
    if floor is not None:
        cut = max(floor[0], floor[1] * max(fused))
        rows = [row for row in rows if fused[row] >= cut]
    confidence = table.confidence.tolist()
    best_tier = _best_tiers(lists)
    out = []
    for row in rows:
        memory = table.memories[row]
        out.append(
            Candidate(
                memory=memory,
                score=min(max(confidence[row], 0.0), 1.0),
                fused=fused[row],
                tier=best_tier[memory.id],
                tiers=tuple(dict.fromkeys(table.found_by[row])),
            )
        )
    out.sort(key=lambda c: (-c.fused, -c.score, c.memory.id))
    return out


def floored(ranked: Sequence[Candidate], *, absolute: float, relative: float) -> list[Candidate]:
    """``ranked`` (best first) without the candidates whose chance is under ``absolute``, or
    under ``relative`` times the best candidate's. A query with one sure answer then stops
    early, one whose candidates look alike keeps them all for the budget to choose from: on
    both dev sets this gives more recall per token than a smaller budget does
    (``benchmarks/results/relative-chance-*.md``)."""
    if not ranked:
        return []
    floor = max(absolute, relative * max(c.fused for c in ranked))
    return [c for c in ranked if c.fused >= floor]


def _list_columns(
    hits: Sequence[ScoredMemory], ids: Sequence[str], depth: int
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and ``-log(1 + rank)`` of ``ids`` in one list; absent ones take the list's floor."""
    position = {hit.memory.id: (rank, hit.score) for rank, hit in enumerate(hits)}
    full = depth > 0 and len(hits) >= depth
    floor = hits[-1].score if full and hits else 0.0
    absent_rank = -math.log1p(max(depth, len(hits)))
    scores = np.array([position[i][1] if i in position else floor for i in ids])
    ranks = np.array([-math.log1p(position[i][0]) if i in position else absent_rank for i in ids])
    return scores, ranks


def _session_share(memories: Sequence[Memory], base: np.ndarray) -> np.ndarray:
    """Per memory: its session's share of the evidence among the best candidates (max 1)."""
    if not len(base):
        return base
    mass: dict[str, float] = {}
    for row in np.argsort(-base, kind="stable")[:_SESSION_TOP]:
        session = memories[row].session_id
        mass[session] = mass.get(session, 0.0) + float(base[row])
    heaviest = max(mass.values()) or 1.0
    return np.array([mass.get(m.session_id, 0.0) / heaviest for m in memories])


def _speaker_columns(
    memories: Sequence[Memory], named: Collection[str]
) -> tuple[np.ndarray, np.ndarray]:
    if len(named) != 1:
        zeros = np.zeros(len(memories))
        return zeros, zeros.copy()
    wanted = next(iter(named)).casefold()
    theirs = np.array([(m.speaker or "").casefold() == wanted for m in memories], dtype=float)
    return theirs, 1.0 - theirs


def _answer_labels(ids: Sequence[str], ask: Ask) -> np.ndarray:
    """1 for a memory naming an entity of a label that answers the query (not a participant)."""
    answer = ask.analysis.answer
    if answer is None or not answer.labels or not ask.facets:
        return np.zeros(len(ids))
    return np.array(
        [float(answers(ask.facets.get(i, ()), answer.labels, ask.participants)) for i in ids]
    )


def answers(facets: Iterable[str], labels: Collection[str], participants: Collection[str]) -> bool:
    """Whether one of ``facets`` (``LABEL:text``) is of one of ``labels`` and does not name a
    participant (its first word is not one of ``participants``' case-folded names)."""
    for facet in facets:
        label, _, value = facet.partition(":")
        if label in labels and value and value.split()[0] not in participants:
            return True
    return False


def _in_range(memories: Sequence[Memory], analysis: QueryAnalysis) -> np.ndarray:
    temporal = analysis.temporal
    if temporal is None or temporal.start is None or temporal.end is None:
        return np.zeros(len(memories))
    start, end = temporal.start, temporal.end
    return np.array([float(start <= m.timestamp < end) for m in memories])


def _best_tiers(lists: Mapping[str, Sequence[ScoredMemory]]) -> dict[str, str]:
    """The tier that ranked each memory best (ties: the order the lists came in)."""
    best: dict[str, tuple[int, str]] = {}
    for hits in lists.values():
        for position, hit in enumerate(hits):
            key = hit.memory.id
            held = best.get(key)
            if held is None or position < held[0]:
                best[key] = (position, hit.tier)
    return {memory_id: tier for memory_id, (_, tier) in best.items()}

"""What one disclosure scored on one question, and the figures over many.

Definitions (the report repeats them):

* **Evidence recall** of a question: the share of its gold turns whose full text (the memory's
  ``content``) occurs in the disclosed ``text``, both compared after collapsing every run of
  whitespace to one space. A summary, a cut or an index line of a gold turn does not count.
  Averaged over the questions that have gold evidence (macro average).
* **Hit rate**: the share of those questions whose gold turns are *all* in the context.
* **Precision** of a question: the share of the result's ``items`` (the memories the discloser
  says it disclosed, at any layer) whose id is gold evidence; undefined when nothing was
  disclosed. Averaged over the questions where it is defined.
* **Context tokens**: the exact token count of the disclosed ``text`` (the evaluation's
  encoding). **Compression**: mean full-conversation tokens / mean context tokens, where the full
  conversation is rendered as ``baseline:full`` renders it.
* **Budget violation**: ``tokens_used`` or the context tokens above the budget (the requested one,
  else the result's own). There must be none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from disclosure.core.result import DisclosureResult
from disclosure.evaluation.dataset import Question


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace as one space, no leading or trailing space."""
    return " ".join(text.split())


def evidence_found(text: str, gold: Mapping[str, str]) -> tuple[str, ...]:
    """The gold ids (id -> full content) whose whole content occurs in ``text``, in gold order."""
    haystack = collapse_whitespace(text)
    return tuple(i for i, content in gold.items() if collapse_whitespace(content) in haystack)


@dataclass(frozen=True, slots=True)
class QuestionRecord:
    """One system's disclosure for one question, scored. One line of ``records.jsonl``."""

    system: str
    question_id: str
    conversation_id: str
    category: str | None
    level: str | None
    analyzer_level: str | None
    budget: int | None
    result_budget: int
    tokens_used: int
    context_tokens: int
    full_tokens: int
    items: int
    gold: tuple[str, ...]
    found: tuple[str, ...]
    gold_items: int
    latency_ms: float
    violation: str | None = None
    expansion_reason: str | None = None
    found_depths: tuple[int | None, ...] = ()  # per found id: see packing_depths

    @property
    def scored(self) -> bool:
        return bool(self.gold)

    @property
    def recall(self) -> float | None:
        return len(self.found) / len(self.gold) if self.gold else None

    @property
    def hit(self) -> bool | None:
        return len(self.found) == len(self.gold) if self.gold else None

    @property
    def precision(self) -> float | None:
        return self.gold_items / self.items if self.gold and self.items else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(recall=self.recall, hit=self.hit, precision=self.precision)
        return data


def score_result(
    *,
    system: str,
    question: Question,
    result: DisclosureResult,
    contents: Mapping[str, str],
    count_tokens: Callable[[str], int],
    full_tokens: int,
    latency_ms: float,
    budget: int | None,
    record_level: bool = True,
) -> QuestionRecord:
    """Score ``result`` against ``question``'s gold evidence (``contents``: id -> full text)."""
    gold = {i: contents[i] for i in question.evidence}
    gold_ids = set(gold)
    context_tokens = count_tokens(result.text)
    found = evidence_found(result.text, gold)
    return QuestionRecord(
        system=system,
        question_id=question.id,
        conversation_id=question.conversation_id,
        category=question.category,
        level=result.level.value if record_level else None,
        analyzer_level=result.analysis.level.value if record_level else None,
        budget=budget,
        result_budget=result.budget,
        tokens_used=result.tokens_used,
        context_tokens=context_tokens,
        full_tokens=full_tokens,
        items=len(result.items),
        gold=tuple(gold),
        found=found,
        gold_items=sum(item.id in gold_ids for item in result.items),
        latency_ms=latency_ms,
        violation=budget_violation(result, context_tokens, budget),
        expansion_reason=result.expansion_reason,
        found_depths=packing_depths(result, found),
    )


def packing_depths(result: DisclosureResult, ids: Sequence[str]) -> tuple[int | None, ...]:
    """For each of ``ids``: the budget it takes to show that item again, i.e. where it ends in
    packing order (the result's items, in order) plus the context's frame that no item pays
    for; None for an id that is no item of its own (shown inside another, as a neighbour)."""
    ends: dict[str, int] = {}
    position = 0
    for item in result.items:
        position += item.tokens
        ends.setdefault(item.id, position)
    frame = max(result.tokens_used - position, 0)
    return tuple(ends[i] + frame if i in ends else None for i in ids)


def budget_violation(
    result: DisclosureResult, context_tokens: int, budget: int | None
) -> str | None:
    """A description of how ``result`` broke its budget, or None when it kept to it."""
    limit = result.budget if budget is None else budget
    problems = []
    if result.tokens_used > limit:
        problems.append(f"tokens_used {result.tokens_used} > budget {limit}")
    if context_tokens > limit:
        problems.append(f"text has {context_tokens} tokens > budget {limit}")
    if budget is not None and result.budget > budget:
        problems.append(f"result budget {result.budget} > requested {budget}")
    return "; ".join(problems) or None


# -- summaries ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    """The figures of a set of records (one system, maybe one category or level)."""

    questions: int
    scored: int
    recall: float | None
    hit_rate: float | None
    precision: float | None
    tokens_mean: float
    tokens_p50: float
    tokens_p95: float
    full_tokens_mean: float
    compression: float | None
    latency_p50_ms: float
    latency_p95_ms: float
    violations: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summarize(records: Sequence[QuestionRecord]) -> Summary:
    """Recall, hit rate, precision, tokens, compression, latency and violations of ``records``."""
    if not records:
        raise ValueError("cannot summarise zero records")
    scored = [r for r in records if r.scored]
    precisions = [p for r in scored if (p := r.precision) is not None]
    tokens = np.array([r.context_tokens for r in records], dtype=float)
    latency = np.array([r.latency_ms for r in records], dtype=float)
    full_mean = float(np.mean([r.full_tokens for r in records]))
    tokens_mean = float(tokens.mean())
    return Summary(
        questions=len(records),
        scored=len(scored),
        recall=_mean([r.recall for r in scored if r.recall is not None]),
        hit_rate=_mean([float(bool(r.hit)) for r in scored]),
        precision=_mean(precisions),
        tokens_mean=tokens_mean,
        tokens_p50=float(np.percentile(tokens, 50)),
        tokens_p95=float(np.percentile(tokens, 95)),
        full_tokens_mean=full_mean,
        compression=full_mean / tokens_mean if tokens_mean else None,
        latency_p50_ms=float(np.percentile(latency, 50)),
        latency_p95_ms=float(np.percentile(latency, 95)),
        violations=sum(r.violation is not None for r in records),
    )


def breakdown(
    records: Iterable[QuestionRecord], key: Callable[[QuestionRecord], str | None]
) -> dict[str, Summary]:
    """One summary per value of ``key`` (records whose key is None are left out), sorted."""
    groups: dict[str, list[QuestionRecord]] = {}
    for record in records:
        value = key(record)
        if value is not None:
            groups.setdefault(value, []).append(record)
    return {name: summarize(groups[name]) for name in sorted(groups)}

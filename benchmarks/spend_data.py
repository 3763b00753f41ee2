"""Each dev question's candidates, as the shipped pipeline gathers and ranks them, for fitting
and checking how much a question should spend (``benchmarks/fit_spend.py``).

For every question of LoCoMo dev (categories 1-4) and LongMemEval dev with gold evidence, the
profile's controller ingests the conversation and gathers at the standard level, exactly as
``disclose`` does; per candidate it keeps the memory id, the ranking features
(:data:`disclosure.core.pipeline.ranking.FEATURES`), whether it is gold evidence, the tokens its
line costs and its (session, day) group; per question its text, category, analyzer signals and the
gold ids. One ``.npz`` file per conversation under ``benchmarks/.cache/`` (per profile and data
file), so a run that stops keeps what it collected.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
ITEM_OVERHEAD = 11  # citation, speaker separator, newline (as in fit_ranker)
LONG = 400  # formatting.excerpt_tokens: a longer memory is shown as its excerpt


@dataclass
class Asked:
    """One question and its ranked pool of candidates."""

    dataset: str
    conversation: str
    text: str
    category: str
    signals: tuple[str, ...]
    evidence: tuple[str, ...]
    ids: list[str]
    matrix: np.ndarray
    labels: np.ndarray
    costs: np.ndarray
    groups: list[tuple[str, str]]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def found(self) -> int:
        """Gold turns among the candidates."""
        return int(self.labels.sum())


def collect(
    dataset_name: str,
    profile: Any,
    cache: Any,
    *,
    tag: str = "",
    available: bool = False,
    only: Collection[str] | None = None,
    limit: int | None = None,
    progress: bool = True,
    reverse: bool = False,
) -> list[Asked]:
    """Every scored question of ``dataset_name`` with its candidates (cached per conversation:
    ``tag`` names what else the pool depends on; ``reverse``: the last conversation first)."""
    from disclosure.evaluation.experiment import DatasetSpec
    from disclosure.evaluation.loading import load_dataset

    dataset = load_dataset(DatasetSpec(format=dataset_name))  # type: ignore[arg-type]
    folder = CACHE / f"spend-{dataset_name}-{_fingerprint(profile, tag)}"
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Asked] = []
    conversations = list(dataset.conversations)
    for number, conversation in enumerate(reversed(conversations) if reverse else conversations):
        if limit is not None and number >= limit:
            break
        questions = [q for q in dataset.questions_of(conversation.id) if q.evidence]
        if not questions or (only is not None and conversation.id not in only):
            continue
        path = folder / f"{hashlib.sha256(conversation.id.encode()).hexdigest()[:16]}.npz"
        if path.is_file():
            out.extend(load(path))
            continue
        if available:
            continue
        found = _conversation(dataset_name, profile, cache, conversation, questions)
        save(path, found)
        out.extend(found)
        if progress:
            print(f"  {dataset_name}: {conversation.id} ({len(out)} questions)", flush=True)
    return out


def _conversation(
    name: str, profile: Any, cache: Any, conversation: Any, questions: Sequence[Any]
) -> list[Asked]:
    from disclosure.core.controller import DisclosureController

    with (
        tempfile.TemporaryDirectory() as tmp,
        DisclosureController.from_profile(
            profile, data_dir=tmp, embedder=cache, facets=getattr(cache, "facets", None)
        ) as c,
    ):
        with cache.documents():
            c.ingest(conversation.memories)
        c.settle()
        return [_question(name, c, conversation, q) for q in questions]


def _question(name: str, c: Any, conversation: Any, question: Any) -> Asked:
    from disclosure.core.pipeline.ranking import features
    from disclosure.core.pipeline.spend import query_signals
    from disclosure.core.pipeline.trace import Trace

    config = c.profile.level("standard")
    now = conversation.now
    analysis = c.analyzer.analyze(question.text, now=now)
    named = tuple(c.participants.named_in(question.text))
    lists = c.gatherer.search_lists(
        question.text, config, now=now, named=named, trace=Trace(), analysis=analysis
    )
    table = features(lists, c.gatherer.ask(lists, question.text, analysis, config, named))
    ids = [m.id for m in table.memories]
    tokens = c.store.line_tokens(ids)
    gold = set(question.evidence)
    return Asked(
        dataset=name,
        conversation=conversation.id,
        text=question.text,
        category=question.category or "-",
        signals=tuple(analysis.detected_signals) + tuple(f"named:{n}" for n in named),
        evidence=tuple(question.evidence),
        ids=ids,
        matrix=table.matrix,
        labels=np.array([i in gold for i in ids], dtype=float),
        costs=np.array([tokens.get(i, 50) + ITEM_OVERHEAD for i in ids], dtype=float),
        groups=[(m.session_id, f"{m.timestamp:%Y%m%d}") for m in table.memories],
        extra={
            "found_by": [list(f) for f in table.found_by],
            "query": query_signals(analysis, len(named)),
        },
    )


def _fingerprint(profile: Any, tag: str) -> str:
    relevant = profile.model_dump_json(include={"tiers", "analyzer", "fusion"})
    relevant += profile.level("standard").model_dump_json() + tag
    return hashlib.sha256(relevant.encode()).hexdigest()[:16]


def save(path: Path, asked: Sequence[Asked]) -> None:
    arrays: dict[str, Any] = {}
    meta = []
    for n, a in enumerate(asked):
        arrays[f"m{n}"], arrays[f"l{n}"], arrays[f"c{n}"] = a.matrix, a.labels, a.costs
        meta.append(
            {
                "dataset": a.dataset,
                "conversation": a.conversation,
                "text": a.text,
                "category": a.category,
                "signals": list(a.signals),
                "evidence": list(a.evidence),
                "ids": a.ids,
                "groups": [list(g) for g in a.groups],
                "extra": a.extra,
            }
        )
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)


def load(path: Path) -> list[Asked]:
    data = np.load(path)
    out = []
    for n, m in enumerate(json.loads(str(data["meta"]))):
        out.append(
            Asked(
                dataset=m["dataset"],
                conversation=m["conversation"],
                text=m["text"],
                category=m["category"],
                signals=tuple(m["signals"]),
                evidence=tuple(m["evidence"]),
                ids=m["ids"],
                matrix=data[f"m{n}"],
                labels=data[f"l{n}"],
                costs=data[f"c{n}"],
                groups=[(g[0], g[1]) for g in m["groups"]],
                extra=m.get("extra", {}),
            )
        )
    return out

"""Fit the ranking model's weights (``fusion.learned``) and check them across the two dev sets.

For every question of LoCoMo dev (categories 1-4) and LongMemEval dev, the real pipeline of a
profile (``default`` unless ``--profile``) searches the tiers at the standard level; each
candidate's features (:data:`disclosure.core.pipeline.ranking.FEATURES`) are kept with its label
(is it gold evidence?) and the tokens its line costs. A logistic regression is fitted on them
(each question weighs the same), then judged the way the product uses it: candidates packed by
chance of use per token into a fixed budget, evidence recall counted as in ``disclosure eval``
(whole memories only). It reports, at several budgets:

* in-set figures, by 5-fold cross-validation over conversations;
* trained on LoCoMo, scored on LongMemEval, and the reverse;
* trained on both (the weights that ship), cross-validated on each.

    python -m benchmarks.fit_ranker --embedding-cache ~/.cache/eval-vectors.sqlite3

Writes ``benchmarks/results/fit_ranker.json`` (figures and weights) and prints the weights as
the profile's YAML. Features are cached in ``benchmarks/.cache/`` per profile, data file and
conversation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from disclosure.core.pipeline.ranking import FEATURES

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
BUDGETS = (500, 1000, 1500, 2000, 3000)
ITEM_OVERHEAD = 11  # citation, speaker separator, newline: measured on the full_content formatter
HEADER = 9  # a session-and-day heading
FRAME = 25  # the context's own heading and footer
L2 = 1.0


@dataclass
class Question:
    """One question's candidates: features, labels, costs, sessions and days, evidence count."""

    conversation: str
    matrix: np.ndarray
    labels: np.ndarray
    costs: np.ndarray
    groups: list[tuple[str, str]]
    evidence: int


def collect(
    dataset_name: str,
    profile: Any,
    cache: Any,
    folder: Path,
    *,
    available: bool,
    only: Collection[str] | None = None,
) -> list[Question]:
    """Every question's features, one file per conversation in ``folder`` (a run that stops
    keeps what it collected); with ``available``, only the conversations collected already;
    with ``only``, only those conversations."""
    from disclosure.core.controller import DisclosureController
    from disclosure.evaluation.experiment import DatasetSpec
    from disclosure.evaluation.loading import load_dataset

    spec = DatasetSpec(format=dataset_name)  # type: ignore[arg-type]
    dataset = load_dataset(spec)
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Question] = []
    for conversation in dataset.conversations:
        questions = [q for q in dataset.questions_of(conversation.id) if q.evidence]
        path = folder / f"{hashlib.sha256(conversation.id.encode()).hexdigest()[:16]}.npz"
        if not questions or (only is not None and conversation.id not in only):
            continue
        if path.is_file():
            out.extend(_load(path))
            continue
        if available:
            continue
        with (
            tempfile.TemporaryDirectory() as tmp,
            DisclosureController.from_profile(profile, data_dir=tmp, embedder=cache) as c,
        ):
            with cache.documents():
                c.ingest(conversation.memories)
            c.settle()
            found = _questions(c, conversation, questions)
        _save(path, found)
        out.extend(found)
        print(f"  {dataset_name}: {conversation.id} ({len(out)} questions)", flush=True)
    return out


def _questions(c: Any, conversation: Any, questions: Sequence[Any]) -> list[Question]:
    from disclosure.core.pipeline.ranking import features
    from disclosure.core.pipeline.trace import Trace

    config = c.profile.level("standard")
    out = []
    for question in questions:
        now = conversation.now
        analysis = c.analyzer.analyze(question.text, now=now)
        named = tuple(c.participants.named_in(question.text))
        lists = c.gatherer.search_lists(
            question.text, config, now=now, named=named, trace=Trace(), analysis=analysis
        )
        table = features(lists, c.gatherer.ask(lists, question.text, analysis, config, named))
        ids = [m.id for m in table.memories]
        tokens = c.store.line_tokens(ids)
        out.append(
            Question(
                conversation=conversation.id,
                matrix=table.matrix,
                labels=np.array([i in question.evidence for i in ids], dtype=float),
                costs=np.array([tokens.get(i, 50) + ITEM_OVERHEAD for i in ids], dtype=float),
                groups=[(m.session_id, f"{m.timestamp:%Y%m%d}") for m in table.memories],
                evidence=len(question.evidence),
            )
        )
    return out


def fit(questions: Sequence[Question], columns: Sequence[int]) -> np.ndarray:
    from disclosure.core.pipeline.usemodel import fit_arrays

    x = np.concatenate([_design(q.matrix, columns) for q in questions])
    y = np.concatenate([q.labels for q in questions])
    w = np.concatenate([np.full(len(q.labels), 1.0 / max(q.labels.sum(), 1.0)) for q in questions])
    return np.array(fit_arrays(x, y, w, l2=L2))


def recall_at(
    questions: Sequence[Question],
    coef: np.ndarray,
    columns: Sequence[int],
    budgets: Sequence[int] = BUDGETS,
    token_cost: float = 0.5,
) -> dict[int, float]:
    """Mean evidence recall when each question's candidates fill a fixed budget."""
    totals = dict.fromkeys(budgets, 0.0)
    for q in questions:
        logits = _design(q.matrix, columns) @ coef
        value = -np.logaddexp(0.0, -logits) - token_cost * np.log(q.costs)
        order = np.argsort(-value, kind="stable")
        for budget in budgets:
            used, seen, found = FRAME, set(), 0.0
            for row in order:
                cost = q.costs[row] + (HEADER if q.groups[row] not in seen else 0)
                if used + cost <= budget:
                    used += cost
                    seen.add(q.groups[row])
                    found += q.labels[row]
            totals[budget] += found / q.evidence
    return {b: round(v / len(questions), 4) for b, v in totals.items()}


def floor_curve(
    questions: Sequence[Question],
    coef: np.ndarray,
    columns: Sequence[int],
    budget: int,
    floors: Sequence[float],
    token_cost: float = 0.5,
) -> dict[str, Any]:
    """Recall and mean tokens at ``budget`` when candidates under a chance floor are left out:
    what ``fusion.min_chance`` trades."""
    out: dict[str, Any] = {}
    for floor in floors:
        recall = tokens = 0.0
        for q in questions:
            logits = _design(q.matrix, columns) @ coef
            chance = 1.0 / (1.0 + np.exp(-logits))
            value = np.log(np.maximum(chance, 1e-12)) - token_cost * np.log(q.costs)
            used, seen, found = FRAME, set(), 0.0
            for row in np.argsort(-value, kind="stable"):
                if chance[row] < floor:
                    continue
                cost = q.costs[row] + (HEADER if q.groups[row] not in seen else 0)
                if used + cost <= budget:
                    used += cost
                    seen.add(q.groups[row])
                    found += q.labels[row]
            recall += found / q.evidence
            tokens += used
        n = len(questions)
        out[str(floor)] = {"recall": round(recall / n, 4), "tokens": round(tokens / n)}
    return out


def folds(questions: Sequence[Question], k: int = 5) -> list[set[str]]:
    ids = sorted({q.conversation for q in questions})
    return [set(ids[i::k]) for i in range(k)]


def cross_validated(
    test: Sequence[Question], columns: Sequence[int], extra: Sequence[Question] = ()
) -> dict[int, float]:
    """``test``'s recall with models fitted on the other folds (plus ``extra``, all of it)."""
    sums: dict[int, float] = dict.fromkeys(BUDGETS, 0.0)
    for held in folds(test):
        train = [q for q in test if q.conversation not in held] + list(extra)
        scored = [q for q in test if q.conversation in held]
        for budget, value in recall_at(scored, fit(train, columns), columns).items():
            sums[budget] += value * len(scored)
    return {b: round(v / len(test), 4) for b, v in sums.items()}


def _design(matrix: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    return np.hstack([np.ones((len(matrix), 1)), matrix[:, list(columns)]])


def _cached(
    name: str,
    profile: Any,
    cache: Any,
    *,
    available: bool,
    only: Collection[str] | None = None,
) -> list[Question]:
    """The features of ``name``'s questions, from the cache when what they depend on (the
    standard level, the tiers, the analyzer, name stripping) is unchanged."""
    relevant = profile.model_dump_json(include={"tiers", "analyzer"}) + name
    relevant += profile.level("standard").model_dump_json()
    relevant += str(profile.fusion.strip_participants)
    fingerprint = hashlib.sha256(relevant.encode()).hexdigest()[:16]
    folder = CACHE / f"ranker-{name}-{fingerprint}"
    return collect(name, profile, cache, folder, available=available, only=only)


def _save(path: Path, questions: Sequence[Question]) -> None:
    arrays: dict[str, Any] = {}
    for n, q in enumerate(questions):
        arrays[f"m{n}"], arrays[f"l{n}"], arrays[f"c{n}"] = q.matrix, q.labels, q.costs
        arrays[f"g{n}"] = np.array(["\x1f".join(g) for g in q.groups], dtype=str)
    meta = [(q.conversation, q.evidence) for q in questions]
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)


def _load(path: Path) -> list[Question]:
    data = np.load(path)
    meta = json.loads(str(data["meta"]))
    return [
        Question(
            conversation=conversation,
            matrix=data[f"m{n}"],
            labels=data[f"l{n}"],
            costs=data[f"c{n}"],
            groups=[tuple(g.split("\x1f")) for g in data[f"g{n}"]],  # type: ignore[misc]
            evidence=evidence,
        )
        for n, (conversation, evidence) in enumerate(meta)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--embedding-cache", type=Path, required=True)
    parser.add_argument("--drop", action="append", default=[], help="leave a feature out")
    parser.add_argument(
        "--available", action="store_true", help="fit on the conversations collected so far"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "fit_ranker.json")
    args = parser.parse_args(argv)
    from disclosure.core.profiles import load_profile
    from disclosure.evaluation.embedding import DocumentVectorCache
    from tiers.embedders import get_embedder

    cache = DocumentVectorCache(get_embedder("auto"), args.embedding_cache)
    profile = load_profile(args.profile)
    sets = {
        name: _cached(name, profile, cache, available=args.available)
        for name in ("locomo", "longmemeval")
    }
    columns = [i for i, f in enumerate(FEATURES) if f not in set(args.drop)]
    locomo, lme = sets["locomo"], sets["longmemeval"]
    report: dict[str, Any] = {
        "features": [FEATURES[i] for i in columns],
        "in_set": {n: cross_validated(qs, columns) for n, qs in sets.items()},
        "locomo_to_longmemeval": recall_at(lme, fit(locomo, columns), columns),
        "longmemeval_to_locomo": recall_at(locomo, fit(lme, columns), columns),
        "joint": {
            "locomo": cross_validated(locomo, columns, extra=lme),
            "longmemeval": cross_validated(lme, columns, extra=locomo),
        },
    }
    coef = fit(locomo + lme, columns)
    weights = {"bias": coef[0]} | {FEATURES[c]: coef[i + 1] for i, c in enumerate(columns)}
    report["weights"] = {k: round(float(v), 3) for k, v in weights.items()}
    report["chance_floor_at_2000"] = {
        name: floor_curve(qs, coef, columns, 2000, (0.0, 0.005, 0.01, 0.02, 0.05))
        for name, qs in sets.items()
    }
    for key, value in report.items():
        print(f"{key}: {value}")
    print("fusion:\n  learned:")
    for name, value in report["weights"].items():
        print(f"    {name}: {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(math.isfinite(v) for v in weights.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

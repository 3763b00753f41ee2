"""Fit and check how much a question spends: the ranking model (``fusion.learned``) and the
spending model (``budget.need``), on both dev sets, validated across them.

Each dev question's candidates are collected as ``disclose`` gathers them
(``benchmarks/spend_data.py``). Then, as ``benchmarks/fit_ranker.py`` does for the ranking alone:

1. **Ranking.** A logistic model of the chance that a candidate is evidence, over
   :data:`disclosure.core.pipeline.ranking.FEATURES`; recall at fixed budgets in-set (5-fold
   cross-validation over conversations), across sets (trained on one, scored on the other), and
   jointly trained (cross-validated on each set, the other set always in the training data).
2. **Spending.** Each question's candidates are ordered as they are packed (chance per
   token^0.5, under the chance floors) with the chances of a ranking model that never saw the
   question's conversation; its recall at each budget of :data:`disclosure.core.pipeline.spend.GRID`
   is counted as ``disclosure eval`` counts it (whole memories). A logistic model over
   :data:`disclosure.core.pipeline.spend.FEATURES` learns the share of the question's best recall
   each budget holds; a question then gets the budget with the most predicted share less its
   price (``budget.need.price`` per thousand tokens), and the price is swept into a curve.
   Scored in-set, across sets and jointly, per question type, beside fixed budgets and the
   perfect stop (each question stops right after its last gold candidate: no stopping rule over
   this ranking does better).

    python -m benchmarks.fit_spend --embedding-cache ~/.cache/eval-vectors.sqlite3

Writes ``benchmarks/results/fit_spend.json`` and prints the weights of both models as profile
YAML.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import fit_ranker
from benchmarks.spend_data import Asked, collect

HERE = Path(__file__).resolve().parent
TOKEN_COST = 0.5
MIN_CHANCE = 0.003
RELATIVE = 0.01
CEILING = 2000  # the standard level's
L2 = 1.0
PRICES = (0.4, 0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.04, 0.02)
FIXED = (300, 400, 500, 650, 800, 1000, 1300, 1600, 2000)


@dataclass
class Prepared:
    """One question, ready for the spending model: its candidates' packing shape, the recall
    and tokens each budget of the grid gives, and its best recall."""

    asked: Asked
    shape: Any
    recall: np.ndarray
    tokens: np.ndarray
    hits: np.ndarray

    @property
    def best(self) -> float:
        return float(self.recall.max())


def chances(a: Asked, coef: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    logits = fit_ranker._design(a.matrix, columns) @ coef
    return 1.0 / (1.0 + np.exp(-np.clip(logits, -40, 40)))


def pack_order(
    p: np.ndarray, costs: np.ndarray, min_chance: float = MIN_CHANCE, relative: float = RELATIVE
) -> np.ndarray:
    """Candidates kept by the chance floors, best value (chance per token^0.5) first."""
    if not len(p):
        return np.array([], dtype=int)
    keep = np.flatnonzero(p >= max(min_chance, relative * p.max()))
    value = np.log(np.maximum(p[keep], 1e-12)) - TOKEN_COST * np.log(costs[keep])
    return keep[np.argsort(-value, kind="stable")]


def pack(a: Asked, rows: Sequence[int], budget: float) -> tuple[float, float, bool]:
    """``rows`` in order into ``budget`` tokens: tokens, recall, all evidence present."""
    from disclosure.core.pipeline.spend import FRAME, HEADER

    used, seen, found = FRAME, set(), 0.0
    for row in rows:
        cost = a.costs[row] + (HEADER if a.groups[row] not in seen else 0)
        if used + cost <= budget:
            used += cost
            seen.add(a.groups[row])
            found += a.labels[row]
    evidence = len(a.evidence)
    return (used if len(rows) else 0.0), found / evidence, found >= evidence


def query_of(a: Asked, analyzer: Any) -> dict[str, float]:
    """The question's inputs to the spending model (as ``disclose`` computes them)."""
    from disclosure.core.pipeline.spend import query_signals

    if "query" in a.extra:
        return dict(a.extra["query"])
    named = sum(s.startswith("named:") for s in a.signals)
    analysis = analyzer.analyze(a.text)
    analysis = analysis.model_copy(update={"detected_signals": tuple(a.signals)})
    return query_signals(analysis, named)


def prepare(a: Asked, p: np.ndarray, query: dict[str, float], grid: Sequence[int]) -> Prepared:
    from disclosure.core.pipeline.spend import Shape

    order = pack_order(p, a.costs)
    shape = Shape(
        chances=p[order], costs=a.costs[order], groups=[a.groups[i] for i in order], query=query
    )
    outcomes = [pack(a, order, b) for b in grid]
    return Prepared(
        asked=a,
        shape=shape,
        recall=np.array([o[1] for o in outcomes]),
        tokens=np.array([o[0] for o in outcomes]),
        hits=np.array([o[2] for o in outcomes]),
    )


def need_rows(items: Sequence[Prepared], grid: Sequence[int]) -> tuple[np.ndarray, ...]:
    from disclosure.core.pipeline.spend import need_features

    xs, ys, ws = [], [], []
    for item in items:
        x = need_features(item.shape, grid)
        best = item.best
        y = item.recall / best if best > 0 else np.ones(len(grid))
        xs.append(np.hstack([np.ones((len(grid), 1)), x]))
        ys.append(y)
        ws.append(np.full(len(grid), 1.0 / len(grid)))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def fit_need(items: Sequence[Prepared], grid: Sequence[int]) -> dict[str, float]:
    from disclosure.core.pipeline.spend import FEATURES
    from disclosure.core.pipeline.usemodel import fit_arrays

    x, y, w = need_rows(items, grid)
    coef = fit_arrays(x, y, w, l2=L2)
    return {"bias": float(coef[0])} | {f: float(c) for f, c in zip(FEATURES, coef[1:], strict=True)}


def spend(
    items: Sequence[Prepared], weights: dict[str, float], price: float, grid: Sequence[int]
) -> list[tuple[float, float, bool]]:
    """Each question's (tokens, recall, all present) at the budget the model picks."""
    from disclosure.core.pipeline.spend import choose, predict

    out = []
    for item in items:
        n = choose(predict(item.shape, grid, weights), grid, price)
        out.append((float(item.tokens[n]), float(item.recall[n]), bool(item.hits[n])))
    return out


def summary(outcomes: Sequence[tuple[float, float, bool]]) -> dict[str, float]:
    n = max(len(outcomes), 1)
    return {
        "recall": round(sum(o[1] for o in outcomes) / n, 4),
        "hit": round(sum(o[2] for o in outcomes) / n, 4),
        "tokens": round(sum(o[0] for o in outcomes) / n, 1),
    }


def by_category(
    items: Sequence[Prepared], outcomes: Sequence[tuple[float, float, bool]]
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[tuple[float, float, bool]]] = {}
    for item, outcome in zip(items, outcomes, strict=True):
        groups.setdefault(item.asked.category, []).append(outcome)
    return {c: summary(o) | {"n": len(o)} for c, o in sorted(groups.items())}


def fixed(items: Sequence[Prepared], grid: Sequence[int], budget: int) -> list[Any]:
    n = list(grid).index(budget)
    return [(float(i.tokens[n]), float(i.recall[n]), bool(i.hits[n])) for i in items]


def perfect(items: Sequence[Prepared], grid: Sequence[int]) -> list[Any]:
    """Each question at its cheapest budget of the grid holding its best recall."""
    out = []
    for i in items:
        n = int(np.flatnonzero(i.recall >= i.best - 1e-9)[0])
        out.append((float(i.tokens[n]), float(i.recall[n]), bool(i.hits[n])))
    return out


Folds = Callable[[Sequence[Prepared]], list[set[str]]]


def folds_of(items: Sequence[Prepared], k: int = 5) -> list[set[str]]:
    ids = sorted({i.asked.conversation for i in items})
    return [set(ids[n::k]) for n in range(k)]


def cross_validated(
    test: Sequence[Prepared],
    grid: Sequence[int],
    prices: Sequence[float],
    extra: Sequence[Prepared] = (),
) -> dict[float, list[tuple[float, float, bool]]]:
    """``test``'s outcomes at each price with spending models fitted on its other folds (plus
    ``extra``)."""
    out: dict[float, dict[int, tuple[float, float, bool]]] = {p: {} for p in prices}
    for held in folds_of(test):
        train = [i for i in test if i.asked.conversation not in held] + list(extra)
        scored = [n for n, i in enumerate(test) if i.asked.conversation in held]
        weights = fit_need(train, grid)
        for price in prices:
            outcomes = spend([test[n] for n in scored], weights, price, grid)
            out[price].update(zip(scored, outcomes, strict=True))
    return {p: [out[p][n] for n in range(len(test))] for p in prices}


def ranked_out_of_fold(
    sets: dict[str, list[Asked]], columns: Sequence[int]
) -> dict[str, list[np.ndarray]]:
    """Every question's chances from a ranking model trained on both sets without the
    question's own conversation fold (so the spending model sees honest chances)."""
    questions = {name: [_as_question(a) for a in asked] for name, asked in sets.items()}
    out: dict[str, list[np.ndarray]] = {}
    for name, asked in sets.items():
        other = [q for n, qs in questions.items() if n != name for q in qs]
        chance: dict[int, np.ndarray] = {}
        for held in fit_ranker.folds(questions[name]):
            train = [q for q in questions[name] if q.conversation not in held] + other
            coef = fit_ranker.fit(train, columns)
            for n, a in enumerate(asked):
                if a.conversation in held:
                    chance[n] = chances(a, coef, columns)
        out[name] = [chance[n] for n in range(len(asked))]
    return out


def _as_question(a: Asked) -> fit_ranker.Question:
    return fit_ranker.Question(
        a.conversation, a.matrix, a.labels, a.costs, a.groups, len(a.evidence)
    )


def candidates_report(asked: Sequence[Asked]) -> dict[str, Any]:
    """How many gold turns reach the candidates, and how many only through the gathering
    index (its list alone found them), overall and per question type."""

    def count(questions: Sequence[Asked]) -> dict[str, Any]:
        gold = sum(len(a.evidence) for a in questions)
        found = sum(a.found for a in questions)
        only = 0
        for a in questions:
            finders = a.extra.get("found_by", [])
            only += sum(1 for n, f in enumerate(finders) if a.labels[n] and f == ["facets"])
        whole = sum(a.found >= len(a.evidence) for a in questions)
        return {
            "questions": len(questions),
            "gold": gold,
            "gold_in_candidates": round(found / max(gold, 1), 4),
            "gold_only_from_the_gathering_index": only,
            "questions_with_all_gold_in_candidates": round(whole / max(len(questions), 1), 4),
        }

    categories = sorted({a.category for a in asked})
    return count(asked) | {
        "by_category": {c: count([a for a in asked if a.category == c]) for c in categories}
    }


def ranking_report(sets: dict[str, list[Asked]], columns: Sequence[int]) -> dict[str, Any]:
    qs = {name: [_as_question(a) for a in asked] for name, asked in sets.items()}

    def across(train: list[Any], test: list[Any]) -> dict[int, float]:
        return fit_ranker.recall_at(test, fit_ranker.fit(train, columns), columns)

    locomo, lme = qs["locomo"], qs["longmemeval"]
    return {
        "in_set": {n: fit_ranker.cross_validated(q, columns) for n, q in qs.items()},
        "locomo_to_longmemeval": across(locomo, lme),
        "longmemeval_to_locomo": across(lme, locomo),
        "joint": {
            "locomo": fit_ranker.cross_validated(locomo, columns, extra=lme),
            "longmemeval": fit_ranker.cross_validated(lme, columns, extra=locomo),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--embedding-cache", type=Path, required=True)
    parser.add_argument("--available", action="store_true", help="only what is collected")
    parser.add_argument("--drop", action="append", default=[], help="leave a ranking feature out")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "fit_spend.json")
    args = parser.parse_args(argv)
    from analyzers import QueryComplexityAnalyzer
    from disclosure.core.pipeline.ranking import FEATURES
    from disclosure.core.pipeline.spend import GRID
    from disclosure.core.profiles import load_profile
    from disclosure.evaluation.embedding import DocumentVectorCache
    from tiers.embedders import get_embedder

    cache = DocumentVectorCache(get_embedder("auto"), args.embedding_cache)
    profile = load_profile(args.profile)
    analyzer = QueryComplexityAnalyzer(profile.analyzer)
    sets = {
        n: collect(n, profile, cache, available=args.available) for n in ("locomo", "longmemeval")
    }
    columns = [i for i, f in enumerate(FEATURES) if f not in set(args.drop)]
    report: dict[str, Any] = {"features": [FEATURES[i] for i in columns]}
    report["candidates"] = {name: candidates_report(asked) for name, asked in sets.items()}
    report["ranking"] = ranking_report(sets, columns)
    everything = [a for asked in sets.values() for a in asked]
    coef = fit_ranker.fit([_as_question(a) for a in everything], columns)
    ranker = {"bias": coef[0]} | {FEATURES[c]: coef[n + 1] for n, c in enumerate(columns)}
    report["ranking"]["weights"] = {k: round(float(v), 3) for k, v in ranker.items()}

    grid = [b for b in GRID if b <= CEILING]
    honest = ranked_out_of_fold(sets, columns)
    items = {
        name: [
            prepare(a, p, query_of(a, analyzer), grid)
            for a, p in zip(asked, honest[name], strict=True)
        ]
        for name, asked in sets.items()
    }
    report["spending"] = spending_report(items, grid)
    joint = fit_need([i for its in items.values() for i in its], grid)
    report["spending"]["weights"] = {k: round(v, 3) for k, v in joint.items()}
    print(json.dumps(report, indent=1))
    print("fusion:\n  learned:")
    for name, value in report["ranking"]["weights"].items():
        print(f"    {name}: {value}")
    print("budget:\n  need:\n    weights:")
    for name, value in report["spending"]["weights"].items():
        print(f"      {name}: {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(math.isfinite(v) for v in joint.values()) else 1


def spending_report(items: dict[str, list[Prepared]], grid: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = list(items)
    for name in names:
        its = items[name]
        other = [i for n in names if n != name for i in items[n]]
        across = fit_need(other, grid)
        joint = cross_validated(its, grid, PRICES, extra=other)
        out[name] = {
            "questions": len(its),
            "fixed": {b: summary(fixed(its, grid, b)) for b in FIXED if b in grid},
            "perfect": summary(perfect(its, grid)),
            "in_set": {p: summary(o) for p, o in cross_validated(its, grid, PRICES).items()},
            "across": {p: summary(spend(its, across, p, grid)) for p in PRICES},
            "joint": {p: summary(o) for p, o in joint.items()},
            "joint_by_category": {p: by_category(its, joint[p]) for p in (0.2, 0.1, 0.06)},
            "fixed_by_category": {
                b: by_category(its, fixed(its, grid, b)) for b in (800, 1000, 1300) if b in grid
            },
        }
    return out


if __name__ == "__main__":
    raise SystemExit(main())

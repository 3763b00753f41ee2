"""How far can spending alone go over the present ranking? Bounds for the spend-by-need targets.

Each dev question's candidates are collected and ranked as ``disclose`` ranks them
(``benchmarks/spend_data.py``, the profile's own ranking weights), each line costed with its
citation in the profile's alphabet. Nothing is refitted; the question is what *any* choice of
budget could reach over this ranking:

1. **Everything packed.** Each question given a fixed budget, up to unlimited room, with and
   without the chance floors (``fusion.min_chance``, ``fusion.relative_chance``): recall, all
   evidence present and mean tokens per question type. What no budget can add is the ranking's
   or the candidates' to give.
2. **Question type known in hindsight.** Each question type (the dataset's own category, which
   ``disclose`` never sees) may get its own spending: the profile's chooser at any price with
   room up to 4,000 tokens, or any fixed budget, with or without the chance floors. A dynamic
   programme over the types finds the best mean recall within a mean-token bound, optionally
   with a floor on one type's all-evidence-present share. A rule that reads only the question
   and the candidates cannot beat a perfect type oracle that may also pick per-type settings.
3. **Per-question hindsight** (each question stops right after its last gold candidate): the
   level a chooser that knew where the evidence lies would reach.

    python -m benchmarks.spend_bounds --embedding-cache ~/.cache/eval-vectors.sqlite3 \\
        --bound locomo=800 --bound longmemeval=1000 --require locomo:multi-hop=0.55

Writes ``benchmarks/results/spend_bounds.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import fit_spend as fs
from benchmarks.spend_data import Asked, collect

HERE = Path(__file__).resolve().parent
PRICES = (0.4, 0.3, 0.2, 0.16, 0.14, 0.12, 0.1, 0.08, 0.06, 0.04, 0.02, 0.01)
ROOMS = (500, 800, 1000, 1300, 1600, 2000, 2600, 3200, 4000, 10**9)
BUCKET = 10  # tokens per step of the dynamic programme (totals rounded down: an upper bound)

Outcome = tuple[float, float, bool]  # tokens, recall, all evidence present


def _mean(outcomes: Sequence[Outcome]) -> dict[str, float]:
    return fs.summary(outcomes) | {"n": len(outcomes)}


def _packed(
    asked: Sequence[Asked], chances: Sequence[np.ndarray], room: int, floors: bool
) -> list[Outcome]:
    """Each question's candidates (``chances``, one array per question) in packing order into
    ``room`` tokens."""
    limits = (fs.MIN_CHANCE, fs.RELATIVE) if floors else (0.0, 0.0)
    return [
        fs.pack(a, list(fs.pack_order(p, a.costs, *limits)), room)
        for a, p in zip(asked, chances, strict=True)
    ]


def _columns() -> range:
    from disclosure.core.pipeline.ranking import FEATURES

    return range(len(FEATURES))


def options(
    asked: Sequence[Asked],
    chances: Sequence[np.ndarray],
    queries: Sequence[dict[str, float]],
    weights: dict[str, float],
) -> dict[str, list[Outcome]]:
    """Every spending this benchmark lets a question type pick, as per-question outcomes
    (``chances`` and ``queries``: each question's candidates' chances and its question's
    inputs to the spending model)."""
    from disclosure.core.pipeline.spend import GRID

    grid = [b for b in GRID if b <= 4000]
    items = [fs.prepare(a, p, q, grid) for a, p, q in zip(asked, chances, queries, strict=True)]
    out = {f"chooser at price {p}": fs.spend(items, weights, p, grid) for p in PRICES}
    for room in ROOMS[:-1]:
        out[f"fixed {room}"] = _packed(asked, chances, room, floors=True)
        out[f"fixed {room}, no floor"] = _packed(asked, chances, room, floors=False)
    return out


def best_split(
    by_type: dict[str, dict[str, list[Outcome]]], bound: float, require: dict[str, float]
) -> dict[str, Any] | None:
    """The per-type choice with the most mean recall at mean tokens <= ``bound`` (each type in
    ``require`` holding at least that all-evidence-present share), or None if none qualifies."""
    total = sum(len(next(iter(opts.values()))) for opts in by_type.values())
    cap = int(bound * total) // BUCKET
    best = np.full(cap + 1, -np.inf)
    best[0] = 0.0
    picks: list[np.ndarray] = []
    names: list[list[str]] = []
    for kind, opts in by_type.items():
        allowed = [
            (name, outcomes)
            for name, outcomes in opts.items()
            if np.mean([o[2] for o in outcomes]) >= require.get(kind, 0.0)
        ]
        step = np.full(cap + 1, -np.inf)
        pick = np.full(cap + 1, -1)
        for n, (_, outcomes) in enumerate(allowed):
            cost = int(sum(o[0] for o in outcomes)) // BUCKET
            gain = sum(o[1] for o in outcomes)
            if cost > cap:
                continue
            shifted = np.full(cap + 1, -np.inf)
            shifted[cost:] = best[: cap + 1 - cost] + gain
            better = shifted > step
            step[better], pick[better] = shifted[better], n
        best = step
        picks.append(pick)
        names.append([name for name, _ in allowed])
    if not np.isfinite(best).any():
        return None
    at = int(np.argmax(best))
    chosen: dict[str, str] = {}
    for kind, pick, labels in reversed(list(zip(by_type, picks, names, strict=True))):
        name = labels[int(pick[at])]
        chosen[kind] = name
        at -= int(sum(o[0] for o in by_type[kind][name])) // BUCKET
    outcomes = [o for kind, name in chosen.items() for o in by_type[kind][name]]
    per_type = {
        kind: _mean(by_type[kind][name]) | {"spending": name} for kind, name in chosen.items()
    }
    return {"overall": _mean(outcomes), "per_type": dict(sorted(per_type.items()))}


def _shipped(items: Sequence[fs.Prepared], profile: Any, grid: Sequence[int]) -> list[Outcome]:
    """Each question at the budget the profile's chooser picks, at its price (lower for a
    question that reckons time across events, as ``disclose`` prices it)."""
    from disclosure.core.pipeline.spend import question_price

    need = profile.budget.need
    out: list[Outcome] = []
    for item in items:
        price = question_price(item.asked.text, need.price, need.reckoning_price)
        out += fs.spend([item], dict(need.weights), price, grid)
    return out


def report(
    asked: Sequence[Asked],
    profile: Any,
    analyzer: Any,
    bound: float | None,
    require: dict[str, float],
) -> dict[str, Any]:
    from disclosure.core.pipeline.ranking import FEATURES
    from disclosure.core.pipeline.spend import GRID

    learned = profile.fusion.learned
    coef = np.array([learned["bias"]] + [learned[f] for f in FEATURES])
    weights = dict(profile.budget.need.weights)
    kinds = sorted({a.category for a in asked})
    out: dict[str, Any] = {"questions": len(asked)}
    grid = [b for b in GRID if b <= fs.CEILING]
    # each question's chances and analysed question, once: every spending below reuses them
    chances = [fs.chances(a, coef, _columns()) for a in asked]
    queries = [fs.query_of(a, analyzer) for a in asked]
    items = [fs.prepare(a, p, q, grid) for a, p, q in zip(asked, chances, queries, strict=True)]
    shipped = _shipped(items, profile, grid)
    out["shipped"] = _mean(shipped) | {"by_type": fs.by_category(items, shipped)}
    perfect = fs.perfect(items, grid)
    out["perfect_stop"] = _mean(perfect) | {"by_type": fs.by_category(items, perfect)}
    packed: dict[str, Any] = {}
    for floors in (True, False):
        for room in ROOMS:
            key = f"{'all' if room >= 10**9 else room}{'' if floors else ', no floor'}"
            outcomes = _packed(asked, chances, room, floors)
            packed[key] = _mean(outcomes) | {"by_type": fs.by_category(items, outcomes)}
    out["packed"] = packed
    if bound is not None:
        by_type = {}
        for kind in kinds:
            rows = [n for n, a in enumerate(asked) if a.category == kind]
            by_type[kind] = options(
                [asked[n] for n in rows],
                [chances[n] for n in rows],
                [queries[n] for n in rows],
                weights,
            )
        out["type_known"] = {
            "bound": bound,
            "best": best_split(by_type, bound, {}),
            "required": require,
            "best_with_required": best_split(by_type, bound, require) if require else None,
        }
    return out


def citation_saving(asked: Sequence[Asked], profile: Any) -> float:
    """How many tokens fewer a line's citation takes in the profile's alphabet than in
    base64url, on average over the candidates: the collected line costs count a base64url
    citation (``spend_data.ITEM_OVERHEAD``), and a bound should count the lines as they read."""
    from formatters import get_token_counter
    from tiers.citations import citation_code

    counter = get_token_counter(profile.tokens.encoding)
    config = profile.citations
    ids = sorted({i for a in asked for i in a.ids})
    if not ids or not config.enabled:
        return 0.0

    def tag(memory_id: str, alphabet: str) -> int:
        return counter(f"[{config.prefix}:{citation_code(memory_id, config.length, alphabet)}] ")

    return float(np.mean([tag(i, "base64url") - tag(i, config.alphabet) for i in ids]))


def _pairs(values: Sequence[str], what: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, number = value.partition("=")
        if not sep:
            raise SystemExit(f"--{what} takes NAME=NUMBER, not {value!r}")
        out[key] = number
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--embedding-cache", type=Path, required=True)
    parser.add_argument("--bound", action="append", default=[], help="SET=TOKENS: mean-token bound")
    parser.add_argument(
        "--require", action="append", default=[], help="SET:TYPE=SHARE: all-evidence floor"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "spend_bounds.json")
    args = parser.parse_args(argv)
    from analyzers import QueryComplexityAnalyzer
    from disclosure.core.profiles import load_profile
    from disclosure.evaluation.embedding import DocumentVectorCache
    from tiers.embedders import get_embedder

    bounds = {k: float(v) for k, v in _pairs(args.bound, "bound").items()}
    require: dict[str, dict[str, float]] = {}
    for key, value in _pairs(args.require, "require").items():
        name, _, kind = key.partition(":")
        require.setdefault(name, {})[kind] = float(value)
    cache = DocumentVectorCache(get_embedder("auto"), args.embedding_cache)
    profile = load_profile(args.profile)
    analyzer = QueryComplexityAnalyzer(profile.analyzer)
    result: dict[str, Any] = {"profile": args.profile}
    for name in ("locomo", "longmemeval"):
        asked = collect(name, profile, cache)
        saving = citation_saving(asked, profile)
        asked = [dataclasses.replace(a, costs=a.costs - saving) for a in asked]
        result[name] = report(asked, profile, analyzer, bounds.get(name), require.get(name, {}))
        result[name]["citation_saving"] = round(saving, 2)
        _show(name, result[name])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def _show(name: str, r: dict[str, Any]) -> None:
    def line(label: str, s: dict[str, Any]) -> str:
        return (
            f"  {label:34s} recall {s['recall']:.3f}  all present {s['hit']:.3f}  "
            f"tokens {s['tokens']:.0f}"
        )

    print(f"{name} ({r['questions']} questions)")
    print(line("shipped chooser", r["shipped"]))
    print(line("per-question hindsight", r["perfect_stop"]))
    for key in ("1000", "2000", "4000", "all", "2000, no floor", "all, no floor"):
        s = r["packed"][key]
        print(line(f"fixed {key}", s))
        for kind, t in s["by_type"].items():
            print("  " + line(kind, t))
    known = r.get("type_known")
    if known:
        for label, key in (("type known", "best"), ("type known, required", "best_with_required")):
            best = known[key]
            if best is None:
                if key == "best_with_required" and known["required"]:
                    print(f"  {label}: nothing within {known['bound']:.0f} tokens")
                continue
            print(line(f"{label} (<= {known['bound']:.0f})", best["overall"]))
            for kind, t in best["per_type"].items():
                print("  " + line(f"{kind}: {t['spending']}", t))


if __name__ == "__main__":
    raise SystemExit(main())

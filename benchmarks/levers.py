"""Each retrieval lever's effect on both dev sets: the table docs/results.md cites.

A lever is either one of the ranking model's features (left out: the model is refitted without
it) or a setting (a variant of the profile: its features are collected again and the model
refitted). Every row is scored as ``benchmarks.fit_ranker`` scores the shipped model: trained on
both sets, 5-fold cross-validated over conversations, candidates packed by chance per token into
fixed budgets, evidence recall counted on whole memories. Rows give the change from the full
model in points of recall at each budget, per set.

    python -m benchmarks.levers --embedding-cache ~/.cache/eval-vectors.sqlite3

Writes ``benchmarks/results/levers.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.fit_ranker import HERE, _cached, cross_validated
from disclosure.core.pipeline.ranking import FEATURES

SETS = ("locomo", "longmemeval")
SHOWN = (1000, 2000)

FEATURE_LEVERS: dict[str, tuple[str, ...]] = {
    "cold tier (BM25 score and rank)": ("lexical", "lexical_rank"),
    "warm tier (vector score and rank)": ("vector", "vector_rank"),
    "hot tier (recent)": ("recent",),
    "session (share of the best hits)": ("session",),
    "participant prior (named / other speaker)": ("named_speaker", "other_speaker"),
    "role (assistant turns, unless asked about)": ("assistant_unasked", "assistant_asked"),
    "temporal (in the query's time range)": ("in_time_range",),
}

SETTING_LEVERS: dict[str, dict[str, Any]] = {
    "contextual embedding (previous turn)": {"tiers": {"warm": {"context": "line"}}},
    "name stripping": {"fusion": {"strip_participants": False}},
    "stemming": {"tiers": {"tokenizer": {"stem": "none"}}},
}


def _variant(changes: dict[str, Any], folder: Path) -> Any:
    import yaml

    from disclosure.core.profiles import load_profile

    path = folder / "variant.yaml"
    path.write_text(yaml.safe_dump({"extends": "default", **changes}), encoding="utf-8")
    return load_profile(path)


def _joint(sets: dict[str, list[Any]], columns: Sequence[int]) -> dict[str, dict[int, float]]:
    locomo, lme = sets["locomo"], sets["longmemeval"]
    return {
        "locomo": cross_validated(locomo, columns, extra=lme),
        "longmemeval": cross_validated(lme, columns, extra=locomo),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedding-cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "levers.json")
    parser.add_argument("--skip-settings", action="store_true", help="feature levers only")
    parser.add_argument(
        "--settings-conversations",
        type=int,
        default=40,
        help="setting levers: collect again only this many conversations of each set (0: all)",
    )
    parser.add_argument(
        "--available",
        action="store_true",
        help="only the conversations whose default features are collected already",
    )
    args = parser.parse_args(argv)
    from disclosure.core.profiles import load_profile
    from disclosure.evaluation.embedding import DocumentVectorCache
    from tiers.embedders import get_embedder

    cache = DocumentVectorCache(get_embedder("auto"), args.embedding_cache)
    profile = load_profile("default")
    every = list(range(len(FEATURES)))
    sets = {n: _cached(n, profile, cache, available=args.available) for n in SETS}
    rows: dict[str, dict[str, dict[int, float]]] = {"full model": _joint(sets, every)}
    for lever, dropped in FEATURE_LEVERS.items():
        columns = [i for i, f in enumerate(FEATURES) if f not in dropped]
        rows[f"without {lever}"] = _joint(sets, columns)
    if not args.skip_settings:
        # Collecting a variant ingests every conversation again: on a subset, compared with the
        # full model on the same subset.
        limit = args.settings_conversations or None
        subset = {n: sorted({q.conversation for q in qs})[:limit] for n, qs in sets.items()}
        kept = {c for ids in subset.values() for c in ids}
        base = _joint(
            {n: [q for q in qs if q.conversation in kept] for n, qs in sets.items()}, every
        )
        for lever, changes in SETTING_LEVERS.items():
            with tempfile.TemporaryDirectory() as tmp:
                variant = _variant(changes, Path(tmp))
                other = {n: _cached(n, variant, cache, available=False, only=kept) for n in SETS}
            found = _joint(other, every)
            rows[f"without {lever} (subset)"] = {
                s: {b: round(full_b + found[s][b] - base[s][b], 4) for b, full_b in v.items()}
                for s, v in rows["full model"].items()
            }
    full = rows["full model"]
    print("| lever | " + " | ".join(f"{s} @{b}" for s in SETS for b in SHOWN) + " |")
    print("|---|" + "---|" * (len(SETS) * len(SHOWN)))
    for name, row in rows.items():
        cells = []
        for s in SETS:
            for b in SHOWN:
                value = row[s][b]
                cells.append(
                    f"{value:.3f}" if name == "full model" else f"{100 * (value - full[s][b]):+.1f}"
                )
        print(f"| {name} | " + " | ".join(cells) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The paired difference between systems of two ``disclosure eval`` runs made side by side on the
same questions (same dataset, sample and seed), as the report of one run would give it.

    python -m benchmarks.paired_runs REFERENCE_RUN/records.jsonl OTHER_RUN/records.jsonl \\
        [--reference default] [--out benchmarks/results/paired_runs.json]

Every system of the second run is compared with ``--reference`` of the first: recall, all
evidence present and tokens, system minus reference, with the bootstrap interval (2,000
resamples of questions) and McNemar's exact test, overall and per question type.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def read(path: Path) -> list[Any]:
    """The records of a run's ``records.jsonl``."""
    from disclosure.evaluation.metrics import QuestionRecord

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            fields = set(QuestionRecord.__dataclass_fields__)
            kept = {k: v for k, v in row.items() if k in fields}
            for name in ("gold", "found", "found_depths"):
                kept[name] = tuple(kept.get(name, ()))
            out.append(QuestionRecord(**kept))
    return out


def paired(reference: Sequence[Any], others: Sequence[Any]) -> dict[str, Any]:
    """Each system of ``others`` against ``reference`` (one system's records)."""
    from disclosure.evaluation.metrics import summarize
    from disclosure.evaluation.stats import compare

    out: dict[str, Any] = {"reference": _summary(summarize(reference))}
    for system in dict.fromkeys(r.system for r in others):
        mine = [r for r in others if r.system == system]
        out[system] = {
            "summary": _summary(summarize(mine)),
            "against_reference": compare(reference, mine).to_dict(),
        }
    return out


def _summary(summary: Any) -> dict[str, Any]:
    keys = ("questions", "scored", "recall", "hit_rate", "tokens_mean", "violations")
    return {k: getattr(summary, k) for k in keys}


def by_category(records: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Recall, all evidence present and mean tokens per question type."""
    from disclosure.evaluation.metrics import summarize

    kinds = sorted({r.category or "-" for r in records})
    return {k: _summary(summarize([r for r in records if (r.category or "-") == k])) for k in kinds}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--reference", default="default")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "paired_runs.json")
    args = parser.parse_args(argv)
    first, second = read(args.first), read(args.second)
    reference = [r for r in first if r.system == args.reference]
    if not reference:
        raise SystemExit(f"{args.first}: no system named {args.reference!r}")
    report = {"pairs": paired(reference, second)}
    report["by_category"] = {
        system: by_category([r for r in [*first, *second] if r.system == system])
        for system in dict.fromkeys(r.system for r in [*first, *second])
    }
    text = json.dumps(report, indent=1, default=str)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

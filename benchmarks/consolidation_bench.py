"""Consolidation speed on the LoCoMo dev conversations: a full first run, an idempotent re-run,
a forget that rebuilds one session, and summary search. Prints a table and writes
benchmarks/results/consolidation_bench.json.

    python -m benchmarks.consolidation_bench      (from the repository root)

The controller runs without a warm tier (consolidation reads the archive only).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from disclosure import DisclosureController, Profile, load_profile
from disclosure.evaluation.experiment import default_locomo_path
from disclosure.evaluation.locomo import load_locomo

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "dance studio",
    "adoption agency",
    "marathon training",
    "painting class",
    "job interview",
]


def _profile() -> Profile:
    data = load_profile("default").model_dump(mode="json")
    data["tiers"]["warm"]["embedder"] = "none"
    return Profile.model_validate(data)


def run() -> dict[str, Any]:
    conversations = load_locomo(default_locomo_path()).conversations
    rows = []
    for conversation in conversations:
        with (
            tempfile.TemporaryDirectory() as tmp,
            DisclosureController(_profile(), data_dir=tmp) as controller,
        ):
            controller.ingest(conversation.memories)
            started = time.perf_counter()
            first = controller.consolidate(include_working_set=True)
            first_s = time.perf_counter() - started
            started = time.perf_counter()
            controller.consolidate(include_working_set=True)
            again_s = time.perf_counter() - started
            started = time.perf_counter()
            controller.forget(ids=[conversation.memories[0].id])
            forget_s = time.perf_counter() - started
            searches = []
            for query in QUERIES * 4:
                started = time.perf_counter()
                controller.search_summaries(query)
                searches.append((time.perf_counter() - started) * 1000)
            counts = controller.consolidation.summaries.count()
        rows.append(
            {
                "conversation": conversation.id,
                "memories": len(conversation.memories),
                "sessions": len(first.sessions),
                "topics": counts["topic"],
                "first_run_s": round(first_s, 3),
                "memories_per_s": round(len(conversation.memories) / first_s, 1),
                "rerun_s": round(again_s, 3),
                "forget_rebuild_s": round(forget_s, 3),
                "search_p50_ms": round(median(searches), 2),
            }
        )
    return {"rows": rows}


def main() -> None:
    data = run()
    head = ("conversation", "memories", "sessions", "topics", "first_run_s", "memories_per_s",
            "rerun_s", "forget_rebuild_s", "search_p50_ms")  # fmt: skip
    print(" | ".join(head))
    for row in data["rows"]:
        print(" | ".join(str(row[k]) for k in head))
    out = ROOT / "benchmarks" / "results" / "consolidation_bench.json"
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""What an erasing forget costs: one memory forgotten from stores of several sizes.

A forget merges the FTS5 index, truncates the archive's WAL, clears the disk caches and, with
an embedded Chroma, drops the forgotten records' log entries and vacuums ``chroma.sqlite3``
(see tiers/erasure.py). Both grow with the store. Prints a table and writes
benchmarks/results/forget_bench.json.

    python -m benchmarks.forget_bench            (from the repository root; ~2 minutes)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import Profile, load_profile
from tiers.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"archive only": (2_000, 20_000), "archive + Chroma": (500, 2_000)}
REPEATS = 5


def _profile(warm: bool) -> Profile:
    data = load_profile("default").model_dump(mode="json")
    if not warm:
        data["tiers"]["warm"]["embedder"] = "none"
    return Profile.model_validate(data)


def _memories(n: int) -> list[Memory]:
    words = ["invoice", "billing", "gateway", "postgres", "migration"]
    words += ["batch", "email", "refund", "ledger", "audit"]
    return [
        Memory(
            id=f"m{i}",
            content=f"note {i}: the {words[i % 10]} and the {words[(i * 7) % 10]} ({i * 31 % 997})",
            session_id=f"s{i // 20}",
        )
        for i in range(n)
    ]


def _measure(n: int, *, warm: bool) -> dict[str, float]:
    times = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        DisclosureController.from_profile(_profile(warm), data_dir=Path(tmp)) as controller,
    ):
        memories = _memories(n)
        for start in range(0, n, 500):
            controller.ingest(memories[start : start + 500])
        controller.store.flush(timeout=600)
        for i in range(REPEATS):
            started = time.perf_counter()
            controller.forget(ids=[f"m{i * 13}"])
            times.append(time.perf_counter() - started)
    times.sort()
    return {"memories": n, "median_ms": round(times[len(times) // 2] * 1e3, 1)}


def main() -> int:
    results: dict[str, list[dict[str, float]]] = {}
    print(f"{'store':<18} {'memories':>9} {'forget (median)':>16}")
    for name, sizes in SIZES.items():
        results[name] = []
        for n in sizes:
            row = _measure(n, warm=name != "archive only")
            results[name].append(row)
            print(f"{name:<18} {n:>9} {row['median_ms']:>13} ms")
    out = ROOT / "benchmarks" / "results" / "forget_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Interleaved A/B of ``disclose`` latency between two checkouts, on one machine, in one run.

    python -m benchmarks.latency_ab BEFORE_CHECKOUT [AFTER_CHECKOUT] [--rounds 2] [--queries 200]
    python -m benchmarks.latency_ab BEFORE_CHECKOUT --ingest 2000     # ingest throughput instead

Each round runs :mod:`benchmarks.run`'s ``disclose`` phase on the 10k scenario once per
checkout (alternating which goes first), each in a fresh process with that checkout's code
first on ``sys.path``; the medians of the per-round p50s are compared. The 10k data directory
is the one this checkout's ``benchmarks/.cache`` holds (built by ``benchmarks.run`` first); the
other checkout reads it through a symbolic link. Prints a table and writes
benchmarks/results/latency_ab.json. On a shared machine only ratios from one run mean much.
With ``--ingest N``, each round runs the ``ingest`` phase instead (N memories through the
controller with the real embedder, inline, 100 at a time: the enrichment, the archive, the
embedding) and compares memories per second as acknowledged, and until the background work a
checkout has (the gathering index's recogniser) is done (benchmarks/results/ingest_ab.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ("minimal", "standard", "detailed", "comprehensive")


def run_in_checkout(checkout: Path, command: list[str], what: str) -> Any:
    """Run ``command`` (Python's arguments) in ``checkout`` with its own packages and this
    checkout's built benchmark directories; the JSON on its last line of output."""
    cache = checkout / "benchmarks" / ".cache"
    if checkout != ROOT and not cache.exists():
        cache.symlink_to(ROOT / "benchmarks" / ".cache")
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run(
        [sys.executable, *command],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{checkout}: {what} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _phase(checkout: Path, queries: int) -> dict[str, object]:
    phase = ["--phase", "disclose", "warm-10000", "default", str(queries)]
    return dict(run_in_checkout(checkout, ["-m", "benchmarks.run", *phase], "the disclose phase"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=ROOT)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ingest", type=int, help="compare ingest of this many memories")
    args = parser.parse_args(argv)
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    if args.ingest:
        return _ingest_ab(sides, args.rounds, args.ingest)
    runs: dict[str, list[dict[str, object]]] = {"before": [], "after": []}
    for n in range(args.rounds):
        for name in ("before", "after") if n % 2 == 0 else ("after", "before"):
            result = _phase(sides[name], args.queries)
            levels = result["levels"]
            assert isinstance(levels, dict)
            row = {lv: levels[lv]["p50_ms"] for lv in LEVELS}
            row["stages_standard"] = levels["standard"]["stages_mean_ms"]
            row["load"] = os.getloadavg()[0]
            runs[name].append(row)
    medians = {
        name: {lv: statistics.median(float(r[lv]) for r in rows) for lv in LEVELS}  # type: ignore[arg-type]
        for name, rows in runs.items()
    }
    print(f"{'p50 ms':<14}" + "".join(f"{lv:>15}" for lv in LEVELS))
    for name, row in medians.items():
        print(f"{name:<14}" + "".join(f"{row[lv]:>15.2f}" for lv in LEVELS))
    out = ROOT / "benchmarks" / "results" / "latency_ab.json"
    record = {"sides": {k: str(v) for k, v in sides.items()}, "medians": medians, "runs": runs}
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


def _ingest_ab(sides: dict[str, Path], rounds: int, n: int) -> int:
    runs: dict[str, list[dict[str, object]]] = {"before": [], "after": []}
    for k in range(rounds):
        for name in ("before", "after") if k % 2 == 0 else ("after", "before"):
            phase = ["-m", "benchmarks.run", "--phase", "ingest", str(n), "100"]
            result = dict(run_in_checkout(sides[name], phase, "the ingest phase"))
            settled = result.get("settled_per_s", result["per_s"])  # no background work
            row = {"per_s": result["per_s"], "settled_per_s": settled}
            runs[name].append(row | {"load": os.getloadavg()[0]})
    medians = {
        name: statistics.median(float(r["per_s"]) for r in rows)  # type: ignore[arg-type]
        for name, rows in runs.items()
    }
    settled = {
        name: statistics.median(float(r["settled_per_s"]) for r in rows)  # type: ignore[arg-type]
        for name, rows in runs.items()
    }
    for name, value in medians.items():
        print(f"{name:<8} {value:8.1f} memories/s acknowledged, {settled[name]:8.1f} settled")
    print(f"after / before: {medians['after'] / medians['before']:.3f} acknowledged, "
          f"{settled['after'] / settled['before']:.3f} settled")  # fmt: skip
    out = ROOT / "benchmarks" / "results" / "ingest_ab.json"
    record = {
        "sides": {k: str(v) for k, v in sides.items()},
        "medians": medians,
        "settled_medians": settled,
        "runs": runs,
    }
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

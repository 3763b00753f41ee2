"""The performance benchmarks of ``disclose``, ingest, memory and disk (issue 7, item 8).

    python -m benchmarks.run                       # 1k and 10k warm, ingest: a few minutes
    python -m benchmarks.run --full                # + 100k warm and the 1M cold archive
    python -m benchmarks.run --sizes 10000 --profiles default --skip-ingest
    python -m benchmarks.run --report-only           # RESULTS.md from the JSON, nothing run

Never run by the test suite. Each measurement runs in its own subprocess (clean RSS). Data
directories are built once and cached under ``benchmarks/.cache`` (gitignored; see
:mod:`benchmarks.datadirs` and :mod:`benchmarks.vectors`): the first ``--full`` run embeds 100k
synthetic turns (~10 min on 2 cores) and builds a 1M archive (~5 min); later runs reuse them.

Per scenario and profile: ``disclose`` latency p50/p95 at each forced level over distinct
5-word queries (a fresh set per level, so no cache or query-embedding hit; the process is warm:
store open, 20 queries asked first), the mean time per stage, the cache-hit latency (the same
query asked again), RSS and disk per memory; ingest throughput through the controller with the
real embedder. Results merge into ``benchmarks/results/disclose_bench.json`` (a partial run
replaces only what it measured) and ``benchmarks/results/RESULTS.md`` is rewritten from it.
Targets (issue 5): p50 <= 20 ms at the standard level with 10k memories; p95 <= 100 ms at the
comprehensive level with 100k warm and 1M cold memories.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.datadirs import cold_dir, disk_bytes, ensure_cold, ensure_warm, warm_dir
from benchmarks.report import write_markdown
from benchmarks.tiers_bench import peak_rss_mb, rss_mb

RESULTS = Path(__file__).resolve().parent / "results"
OUT_JSON = RESULTS / "disclose_bench.json"
LEVELS = ("minimal", "standard", "detailed", "comprehensive")
NOW = datetime(2030, 1, 1, tzinfo=UTC)  # fixed: ages and temporal reads never drift
WARMUP = 20
REPEATS = 50


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(int(q * (len(ordered) - 1) + 0.5), len(ordered) - 1)], 2)


def summary(times: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": pct(times, 0.95),
        "mean_ms": round(statistics.fmean(times), 2),
        "max_ms": round(max(times), 2),
        "n": len(times),
    }


# -- phases (each in a fresh subprocess) ---------------------------------------------------------


def phase_build(scenario: str) -> dict[str, Any]:
    """Build (or find) the scenario's data directory."""
    kind, total, warm = parse_scenario(scenario)
    started = time.perf_counter()
    record = ensure_warm(warm) if kind == "warm" else ensure_cold(total, warm)
    out = {k: v for k, v in record.items() if k != "probes"}
    return out | {"seconds_this_run": round(time.perf_counter() - started, 1)}


def phase_disclose(scenario: str, profile: str, queries: int) -> dict[str, Any]:
    """Latency per level, stage times, cache hits, RSS and disk on a built directory."""
    from disclosure.core.controller import DisclosureController
    from tiers import get_embedder

    kind, total, warm = parse_scenario(scenario)
    path = warm_dir(warm) if kind == "warm" else cold_dir(total, warm)
    record = ensure_warm(warm) if kind == "warm" else ensure_cold(total, warm)
    shutil.rmtree(path / "cache", ignore_errors=True)  # no answer cached by an earlier run
    (path / "usage.sqlite3").unlink(missing_ok=True)
    probes: list[str] = record["probes"]
    embedder = get_embedder("auto")
    baseline_rss = rss_mb()
    started = time.perf_counter()
    with DisclosureController.from_profile(profile, data_dir=path, embedder=embedder) as ctl:
        open_s = time.perf_counter() - started
        for probe in probes[-WARMUP:]:
            ctl.disclose(probe, now=NOW, level="standard")
        levels = {}
        for k, level in enumerate(LEVELS):
            levels[level] = _time_level(ctl, probes[k * queries : (k + 1) * queries], level)
        repeats = probes[len(LEVELS) * queries : len(LEVELS) * queries + REPEATS]
        cache_hit = _time_repeats(ctl, repeats)
        stats = ctl.stats()["store"]
    return {
        "scenario": scenario,
        "profile": profile,
        "memories": total,
        "warm": warm,
        "store": stats,
        "open_s": round(open_s, 2),
        "levels": levels,
        "cache_hit": cache_hit,
        "rss_mb": round(rss_mb(), 1),
        "rss_over_baseline_mb": round(rss_mb() - baseline_rss, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "disk_bytes": disk_bytes(path),
        "disk_bytes_per_memory": round(disk_bytes(path) / total),
    }


def _time_level(ctl: Any, probes: list[str], level: str) -> dict[str, Any]:
    times: list[float] = []
    stages: dict[str, list[float]] = {}
    tokens: list[int] = []
    for probe in probes:
        begin = time.perf_counter()
        result = ctl.disclose(probe, now=NOW, level=level)
        times.append((time.perf_counter() - begin) * 1000)
        tokens.append(result.tokens_used)
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    return summary(times) | {
        "stages_mean_ms": {k: round(statistics.fmean(v), 2) for k, v in stages.items()},
        "tokens_mean": round(statistics.fmean(tokens)),
    }


def _time_repeats(ctl: Any, probes: list[str]) -> dict[str, Any]:
    first: list[float] = []
    again: list[float] = []
    for probe in probes:
        for bucket in (first, again):
            begin = time.perf_counter()
            ctl.disclose(probe, now=NOW, level="comprehensive")
            bucket.append((time.perf_counter() - begin) * 1000)
    return {"level": "comprehensive", "first": summary(first), "repeated": summary(again)}


def phase_ingest(n: int, batch: int) -> dict[str, Any]:
    """Controller ingest with the real embedder (inline embedding), into a fresh directory: as
    acknowledged (``per_s``), and until background work such as the gathering index's is done
    (``settled_per_s``; the same where a checkout has none)."""
    from benchmarks.corpus import batched, generate
    from disclosure.core.controller import DisclosureController
    from tiers import get_embedder

    memories = list(generate(n, seed=11))
    embedder = get_embedder("auto")
    embedder.embed(["warm the session up"])
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        data = Path(tmp)
        with DisclosureController.from_profile("default", data_dir=data, embedder=embedder) as ctl:
            begin = time.perf_counter()
            for chunk in batched(iter(memories), batch):
                ctl.ingest(chunk)
            seconds = time.perf_counter() - begin
            settle = getattr(ctl, "settle", None)
            if callable(settle):
                settle()
            settled = time.perf_counter() - begin
        disk = disk_bytes(data)
    return {
        "n": n,
        "batch": batch,
        "embedder": embedder.name,
        "seconds": round(seconds, 2),
        "per_s": round(n / seconds),
        "settled_per_s": round(n / settled, 1),
        "disk_bytes_per_memory": round(disk / n),
    }


PHASES = {"build": phase_build, "disclose": phase_disclose, "ingest": phase_ingest}


def parse_scenario(scenario: str) -> tuple[str, int, int]:
    """``warm-10000`` -> ("warm", 10000, 10000); ``cold-1000000-warm-100000`` -> ("cold", ...)."""
    parts = scenario.split("-")
    if parts[0] == "warm":
        return "warm", int(parts[1]), int(parts[1])
    return "cold", int(parts[1]), int(parts[3])


# -- orchestration -----------------------------------------------------------------------------


def run_phase(name: str, *args: Any) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.run", "--phase", name, *map(str, args)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"phase {name} {args} failed:\n{done.stderr[-4000:]}")
    result = dict(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"  {name} {' '.join(map(str, args))}: {time.perf_counter() - started:.0f} s",
          file=sys.stderr)  # fmt: skip
    return result


def scenarios(args: argparse.Namespace) -> list[str]:
    sizes = args.sizes or ([1_000, 10_000, 100_000] if args.full else [1_000, 10_000])
    names = [f"warm-{n}" for n in sizes]
    cold = args.cold or (1_000_000 if args.full else None)
    if cold:
        names.append(f"cold-{cold}-warm-{args.cold_warm}")
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("phase_args", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--full", action="store_true", help="add 100k warm and the 1M archive")
    parser.add_argument("--sizes", type=int, nargs="+", help="warm corpus sizes")
    parser.add_argument("--cold", type=int, help="archive size of the cold scenario (1000000)")
    parser.add_argument("--cold-warm", type=int, default=100_000, help="its warm part")
    parser.add_argument("--profiles", nargs="+", default=["default", "long-memory"])
    parser.add_argument("--queries", type=int, default=200, help="distinct queries per level")
    parser.add_argument("--ingest", type=int, default=2_000, help="memories for the ingest run")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="rewrite RESULTS.md only")
    args = parser.parse_args(argv)
    if args.phase:
        typed = [int(a) if a.isdigit() else a for a in args.phase_args]
        print(json.dumps(PHASES[args.phase](*typed)))
        return
    if args.report_only:
        print(write_markdown(_load(), RESULTS / "RESULTS.md"))
        return
    results = _load()
    started = time.perf_counter()
    for scenario in scenarios(args):
        results["builds"][scenario] = run_phase("build", scenario)
        for profile in args.profiles:
            key = f"{scenario}/{profile}"
            results["disclose"][key] = run_phase("disclose", scenario, profile, args.queries)
    if not args.skip_ingest:
        results["ingest"] = run_phase("ingest", args.ingest, 100)
    results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_avg_at_end": [round(x, 2) for x in os.getloadavg()]}  # fmt: skip
    results["when"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["last_run_seconds"] = round(time.perf_counter() - started)
    RESULTS.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(write_markdown(results, RESULTS / "RESULTS.md"))


def _load() -> dict[str, Any]:
    data: dict[str, Any] = {}
    if OUT_JSON.is_file():
        data = dict(json.loads(OUT_JSON.read_text(encoding="utf-8")))
    data.setdefault("builds", {})
    data.setdefault("disclose", {})
    return data


if __name__ == "__main__":
    main()

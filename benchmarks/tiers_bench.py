"""Tier benchmarks: ingest throughput, hot and cold search latency, memory and disk per memory.

    python -m benchmarks.tiers_bench                 # everything (cold FTS5 at 1M: minutes)
    python -m benchmarks.tiers_bench --cold-n 100000 # a quicker cold run
    python -m benchmarks.tiers_bench --only hot,ingest

Each measurement runs in its own subprocess (clean RSS). Prints a table and writes
``benchmarks/results/tiers_bench.json``. Corpus: :mod:`benchmarks.corpus` (seeded).
Targets (issue 3): hot search <= 1 ms at 1k items; cold FTS5 p95 <= 50 ms at 1M.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.corpus import batched, generate, queries

RESULTS = Path(__file__).resolve().parent / "results"
QUERIES = 300


def rss_mb() -> float:
    """Current resident set size of this process, in MB."""
    with Path("/proc/self/statm").open() as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def latencies(call: Callable[[str], object], probes: list[str]) -> dict[str, float]:
    for probe in probes[:20]:  # warm caches
        call(probe)
    times = []
    for probe in probes:
        start = time.perf_counter()
        call(probe)
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 3),
        "max_ms": round(times[-1], 3),
    }


# -- phases (each runs in a fresh subprocess) ---------------------------------------------------


def phase_ingest(n: int, batch: int) -> dict[str, Any]:
    """TieredStore ingest (archive + hot, no warm tier), fsync per batch (synchronous=FULL)."""
    from tiers.store import TieredStore

    memories = list(generate(n, seed=3))
    with tempfile.TemporaryDirectory() as tmp, TieredStore(Path(tmp)) as store:
        start = time.perf_counter()
        for chunk in batched(iter(memories), batch):
            store.ingest(chunk)
        seconds = time.perf_counter() - start
    return {"n": n, "batch": batch, "seconds": round(seconds, 2), "per_s": round(n / seconds)}


def phase_ingest_warm(n: int, batch: int) -> dict[str, Any]:
    """TieredStore ingest with the real warm tier (inline embedding with MiniLM)."""
    from tiers.store import TieredStore

    embedder = _default_embedder()
    memories = list(generate(n, seed=3))
    with tempfile.TemporaryDirectory() as tmp, TieredStore(Path(tmp), embedder=embedder) as store:
        start = time.perf_counter()
        for chunk in batched(iter(memories), batch):
            store.ingest(chunk)
        left = store.flush(timeout=600)
        seconds = time.perf_counter() - start
    return {
        "n": n,
        "batch": batch,
        "embedder": embedder.name,
        "seconds": round(seconds, 2),
        "per_s": round(n / seconds),
        "left_pending": left,
    }


def _default_embedder() -> Any:
    from tiers.embedders import get_embedder

    return get_embedder("auto")  # ONNX when its one-time export exists or can be made


def phase_hot(n: int) -> dict[str, Any]:
    """HotTier search and active order over a working set of ``n`` items."""
    from tiers.config import HotConfig
    from tiers.hot import HotTier

    memories = list(generate(n, seed=3))
    hot = HotTier(HotConfig(max_items=n, max_age_hours=24 * 365))
    start = time.perf_counter()
    hot.admit(memories)
    build = time.perf_counter() - start
    probes = queries(memories, QUERIES, seed=4)
    result = {"n": n, "admit_ms": round(build * 1e3, 2)}
    result["search"] = latencies(lambda q: hot.search(q, 5), probes)
    result["active"] = latencies(lambda q: hot.active(5), probes)
    # the first search after a change (the index is incremental: nothing to rebuild)
    fresh = list(generate(QUERIES, seed=11))

    def after_change(q: str) -> None:
        hot.admit([fresh.pop()])
        hot.search(q, 5)

    result["search_after_admit"] = latencies(after_change, probes[: QUERIES - 25])
    return result


def phase_cold(engine: str, n: int) -> dict[str, Any]:
    """ColdArchive build (batches of 10k, one transaction each), search latency, RSS, disk."""
    from tiers.cold import ColdArchive
    from tiers.config import ColdConfig

    config = ColdConfig(engine=engine, verify_on_open_max_mb=0)  # type: ignore[arg-type]
    sample: list[Any] = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        rss0 = rss_mb()
        archive = ColdArchive(Path(tmp), config)
        start = time.perf_counter()
        for chunk in batched(generate(n, seed=3), 10_000):
            archive.add(chunk)
            if len(sample) < 20_000:
                sample.extend(chunk[:200])
        build = time.perf_counter() - start
        probes = queries(sample, QUERIES, seed=4)
        start = time.perf_counter()
        archive.search(probes[0], 10)  # rank_bm25 loads its index here
        first = time.perf_counter() - start
        lat = latencies(lambda q: archive.search(q, 10), probes)
        rss = rss_mb() - rss0
        archive.close()
        disk = sum(p.stat().st_size for p in Path(tmp).iterdir())
        start = time.perf_counter()
        reopened = ColdArchive(Path(tmp), config)
        reopened.search(probes[1], 10)
        reopen = time.perf_counter() - start
        reopened.close()
    return {
        "engine": engine,
        "n": n,
        "build_s": round(build, 1),
        "first_query_s": round(first, 3),
        "search": lat,
        "rss_mb": round(rss, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "disk_mb": round(disk / 1e6, 1),
        "disk_bytes_per_memory": round(disk / n),
        "reopen_and_query_s": round(reopen, 3),
    }


PHASES: dict[str, Callable[..., dict[str, Any]]] = {
    "ingest": phase_ingest,
    "ingest_warm": phase_ingest_warm,
    "hot": phase_hot,
    "cold": phase_cold,
}


def run_phase(name: str, *args: Any) -> dict[str, Any]:
    """Run one phase in a fresh interpreter and return its JSON result."""
    command = [sys.executable, "-m", "benchmarks.tiers_bench", "--phase", name, *map(str, args)]
    print(f"  running {name} {' '.join(map(str, args))} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--only", default="ingest,hot,cold,rank_bm25,warm")
    parser.add_argument("--cold-n", type=int, default=1_000_000)
    parser.add_argument("--rank-bm25-n", default="10000,100000")
    args = parser.parse_args(argv)
    if args.phase:
        name, *rest = args.phase
        parsed = [int(a) if a.isdigit() else a for a in rest]
        print(json.dumps(PHASES[name](*parsed)))
        return
    only = set(args.only.split(","))
    out = RESULTS / "tiers_bench.json"
    # a partial run (--only) updates its own sections of the last full run's file
    results: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
    results["when"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if "ingest" in only:
        results["ingest"] = [run_phase("ingest", 20_000, 100), run_phase("ingest", 2_000, 1)]
    if "warm" in only:
        results["ingest_warm"] = [run_phase("ingest_warm", 2_000, 100)]
    if "hot" in only:
        results["hot"] = [run_phase("hot", 100), run_phase("hot", 1_000)]
    cold = {f"{r.get('engine')}-{r.get('n')}": r for r in results.get("cold", [])}
    if "cold" in only:
        cold[f"fts5-{args.cold_n}"] = run_phase("cold", "fts5", args.cold_n)
    if "rank_bm25" in only:
        sizes = [int(s) for s in args.rank_bm25_n.split(",") if s]
        for n in sizes:
            cold[f"rank_bm25-{n}"] = run_phase("cold", "rank_bm25", n)
    if cold:
        results["cold"] = list(cold.values())
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_table(results)
    print(f"\nwritten: {out}")


def _lat(s: dict[str, float]) -> str:
    return f"p50 {s['p50_ms']} ms, p95 {s['p95_ms']} ms"


def print_table(results: dict[str, Any]) -> None:
    rows = [("measure", "n", "figure")]
    for r in results.get("ingest", []) + results.get("ingest_warm", []):
        if "error" in r:
            rows.append(("ingest", "-", r["error"][:60]))
            continue
        label = "ingest + warm" if "embedder" in r else "ingest archive+hot"
        rows.append((f"{label} (batch {r['batch']})", f"{r['n']:,}", f"{r['per_s']:,} memories/s"))
    for r in results.get("hot", []):
        if "error" in r:
            rows.append(("hot", "-", r["error"][:60]))
            continue
        for key in ("search", "search_after_admit", "active"):
            rows.append((f"hot {key}", f"{r['n']:,}", _lat(r[key])))
    for r in results.get("cold", []):
        if "error" in r:
            rows.append(("cold", "-", r["error"][:60]))
            continue
        name, n = f"cold {r['engine']}", f"{r['n']:,}"
        rows.append((f"{name} search k=10", n, _lat(r["search"])))
        rows.append((f"{name} build", n, f"{r['build_s']} s (first query {r['first_query_s']} s)"))
        memory = f"RSS +{r['rss_mb']} MB, disk {r['disk_bytes_per_memory']} B/memory"
        rows.append((f"{name} memory/disk", n, memory))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    main()

"""The local service: CLI start-up through it, and the bulk write path (issue 13's targets).

1. Start-up. A root holds the bundled sample conversation. ``disclosure query`` runs as a
   subprocess, end to end (interpreter start, imports, the request, printing), ``--runs`` times
   through a running service and a few times without one (the store opened in the process, as
   before the service existed). Target: p50 under 0.5 s through the service.
2. Write path. LoCoMo's dev file ($DISCLOSURE_LOCOMO, else ../shared/datasets/locomo/
   locomo_dev.json next to the repository) goes in through ``disclosure ingest``: through the
   service (acknowledged when the CLI returns; fully embedded when the service's outbox is
   empty), and without a service (embedding inline, the previous path). Targets: acknowledged
   >= 2,000 memories/s, fully embedded >= 400 memories/s.

Subprocesses run with bytecode caching on (as an installed wheel has it) after one warm-up run;
the machine's load average is recorded beside the figures, since they move with it. Prints a
table and writes benchmarks/results/service_bench.json.

    python -m benchmarks.service_bench [--runs 15] [--limit N] [--skip-direct-ingest] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "disclosure" / "data" / "sample_conversation.jsonl"
QUERY = ("query", "Why did we move billing off SQLite?", "--now", "2026-04-10T09:00:00+00:00")
OUT = ROOT / "benchmarks" / "results" / "service_bench.json"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached
    return env


def _cli(*args: str, check: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "disclosure", *args],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        check=False,
    )
    took = time.perf_counter() - started
    if check and done.returncode != 0:
        raise SystemExit(f"disclosure {' '.join(args)} failed:\n{done.stderr}")
    return took, done


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "runs": len(ordered),
        "p50_s": round(statistics.median(ordered), 3),
        "p95_s": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 3),
        "min_s": round(ordered[0], 3),
    }


def startup(base: Path, runs: int) -> dict[str, Any]:
    root = base / "startup"
    scope = ("--root", str(root), "--user", "bench")
    _cli("ingest", str(SAMPLE), *scope)
    direct = [_cli(*QUERY, *scope)[0] for _ in range(max(3, runs // 5))]
    _cli("service", "start", "--root", str(root))
    try:
        _cli(*QUERY, *scope)  # the service opens the namespace once
        served = [_cli(*QUERY, *scope)[0] for _ in range(runs)]
        helped = [_cli("--help")[0] for _ in range(5)]
    finally:
        _cli("service", "stop", "--root", str(root))
    return {
        "query_through_service": _summary(served),
        "query_without_service": _summary(direct),
        "help": _summary(helped),
        "target_p50_s": 0.5,
    }


def _locomo() -> Path:
    given = os.environ.get("DISCLOSURE_LOCOMO")
    path = (
        Path(given) if given else ROOT.parent / "shared" / "datasets" / "locomo" / "locomo_dev.json"
    )
    if not path.is_file():
        raise SystemExit(f"LoCoMo dev file not found at {path} (set $DISCLOSURE_LOCOMO)")
    return path


def _subset(path: Path, limit: int | None, base: Path) -> tuple[Path, int]:
    from disclosure.faces.cli.importers import read_memories

    memories, _ = read_memories(path)
    if limit:
        memories = memories[:limit]
    out = base / "locomo.jsonl"
    out.write_text("".join(m.model_dump_json() + "\n" for m in memories), encoding="utf-8")
    return out, len(memories)


def _wait_drained(root: Path, timeout: float = 3600) -> float:
    from disclosure.service.client import MemoryClient

    started = time.perf_counter()
    with MemoryClient.for_root(root, namespace={"user": "bench"}) as client:
        while client.stats()["store"]["pending"]:
            if time.perf_counter() - started > timeout:
                raise SystemExit("the outbox did not drain")
            time.sleep(0.2)
    return time.perf_counter() - started


def _warm(root: Path) -> None:
    from disclosure.service.client import MemoryClient

    with MemoryClient.for_root(root, namespace={"user": "bench"}) as client:
        client.ingest([{"id": "warm-up", "content": "The benchmark opens this namespace."}])
    _wait_drained(root)


def write_path(base: Path, limit: int | None, direct: bool) -> dict[str, Any]:
    data, count = _subset(_locomo(), limit, base)
    root = base / "ingest-service"
    scope = ("--root", str(root), "--user", "bench")
    _cli("service", "start", "--root", str(root))
    try:
        _warm(root)  # the namespace is open (models loaded) before the clock starts
        acked, _ = _cli("ingest", str(data), "--no-progress", *scope)
        drained = _wait_drained(root)
    finally:
        _cli("service", "stop", "--root", str(root))
    result: dict[str, Any] = {
        "memories": count,
        "through_service": {
            "acknowledged_s": round(acked, 2),
            "acknowledged_per_s": round(count / acked, 1),
            "embedded_s": round(acked + drained, 2),
            "embedded_per_s": round(count / (acked + drained), 1),
        },
        "targets": {"acknowledged_per_s": 2000, "embedded_per_s": 400},
    }
    if direct:
        plain = ("--root", str(base / "ingest-direct"), "--user", "bench")
        took, _ = _cli("ingest", str(data), "--no-progress", "--wait", *plain)
        result["without_service_inline"] = {
            "embedded_s": round(took, 2),
            "embedded_per_s": round(count / took, 1),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="queries through the service")
    parser.add_argument("--limit", type=int, help="ingest only the first N LoCoMo memories")
    parser.add_argument("--skip-direct-ingest", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    _cli("--help")  # bytecode cached before anything is timed
    with tempfile.TemporaryDirectory(prefix="service-bench-") as tmp:
        base = Path(tmp)
        started = startup(base, args.runs)
        written = write_path(base, args.limit, not args.skip_direct_ingest)
    report = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "startup": started,
        "write_path": written,
        "command": "python -m benchmarks.service_bench " + " ".join(argv or sys.argv[1:]),
    }
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    _print(report, out)
    return 0


def _print(report: dict[str, Any], out: Path) -> None:
    s = report["startup"]
    print(f"load average {report['load_average']} on {report['cpus']} CPUs")
    print(f"{'CLI start-up':<34} {'p50 s':>7} {'p95 s':>7} {'runs':>5}")
    for key in ("query_through_service", "query_without_service", "help"):
        row = s[key]
        print(f"{key:<34} {row['p50_s']:>7} {row['p95_s']:>7} {row['runs']:>5}")
    w = report["write_path"]
    t = w["through_service"]
    print(f"bulk ingest of {w['memories']} LoCoMo memories through the CLI")
    print(
        f"  through the service: acknowledged {t['acknowledged_per_s']}/s "
        f"({t['acknowledged_s']} s), fully embedded {t['embedded_per_s']}/s ({t['embedded_s']} s)"
    )
    if "without_service_inline" in w:
        d = w["without_service_inline"]
        print(f"  without a service (inline): {d['embedded_per_s']}/s ({d['embedded_s']} s)")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

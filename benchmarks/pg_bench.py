"""The cold archive on each backend: SQLite (FTS5) in the data directory against PostgreSQL.

For each size: build the archive in batches of 1,000 (one transaction each: memories/s), then
BM25 search latency (top-10, 200 five-word queries from the synthetic chat corpus, p50/p95),
one forget (the rows, the BM25 statistics and, for PostgreSQL, a vacuum of the namespace's
tables; for SQLite the FTS5 merge and WAL truncation), and the outbox: claims of 64 items as
replicas make them (PostgreSQL: ``FOR UPDATE SKIP LOCKED`` with a lease). PostgreSQL runs
locally on loopback (the tests' throwaway server: fsync off, so commit costs are not measured),
both on the same machine. Prints a table and writes benchmarks/results/pg_bench.json.

    python -m benchmarks.pg_bench                 (10k memories, about a minute)
    python -m benchmarks.pg_bench --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.corpus import batched, generate, queries
from tests.pg_server import PostgresServer
from tiers.cold import ColdArchive, content_sha
from tiers.pg_archive import PgArchive
from tiers.pg_outbox import PgOutbox

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "pg_bench.json"


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def measure(archive: ColdArchive, n: int) -> dict[str, Any]:
    memories = list(generate(n, seed=3))
    start = time.perf_counter()
    for batch in batched(iter(memories), 1000):
        archive.add(batch)
    build = time.perf_counter() - start
    probes = queries(memories, 200, seed=4)
    for probe in probes[:20]:  # warm the caches
        archive.search(probe, 10)
    search = [_timed(lambda p=probe: archive.search(p, 10)) for probe in probes]  # type: ignore[misc]
    forget = _timed(lambda: archive.forget([memories[n // 2].id]))
    return {
        "memories": n,
        "ingest_per_s": round(n / build),
        "search": _percentiles(search),
        "forget_ms": round(forget, 1),
        "disk_mb": round(archive.disk_bytes() / 1e6, 1),
    }


def claims(archive: PgArchive, items: int = 2000) -> dict[str, Any]:
    box = PgOutbox(archive, claimer="bench")
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [(f"q{i}", content_sha(str(i))) for i in range(items)])
    times: list[float] = []
    while True:
        start = time.perf_counter()
        got = box.due(64)
        times.append((time.perf_counter() - start) * 1000)
        if not got:
            break
        box.discard(got)
    return {"claim_64": _percentiles(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    args = parser.parse_args(argv)
    server = PostgresServer().start()
    rows: list[dict[str, Any]] = []
    try:
        for n in args.sizes:
            with tempfile.TemporaryDirectory() as tmp:
                sqlite = ColdArchive(Path(tmp))
                rows.append({"backend": "sqlite-fts5", **measure(sqlite, n)})
                sqlite.close()
            pg = PgArchive(server.url, f"bench-{n}")
            rows.append({"backend": "postgres", **measure(pg, n), **claims(pg)})
            pg.close()
    finally:
        server.stop()
    print("| backend | memories | ingest/s | search p50 / p95 ms | forget ms | disk MB ", end="")
    print("| claim 64 p50 ms |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        claim = row.get("claim_64", {}).get("p50_ms", "-")
        print(
            f"| {row['backend']} | {row['memories']:,} | {row['ingest_per_s']:,} | "
            f"{row['search']['p50_ms']} / {row['search']['p95_ms']} | {row['forget_ms']} | "
            f"{row['disk_mb']} | {claim} |"
        )
    OUT.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

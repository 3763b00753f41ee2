"""The server backend at scale: replicas under a mixed load, and disclose at 100k per namespace.

1. Mixed load. A throwaway PostgreSQL (the tests' server: loopback, fsync off) and a
   ``chroma run`` on loopback; one, then two ``disclosure serve --database-url ...
   --chroma-url ...`` replicas, each with its own data directory, on the ``default`` profile
   (the real ONNX embedder: ingested turns are acknowledged, then embedded by whichever
   replica claims them from the outbox). Each namespace is preloaded with synthetic chat turns;
   then ``--clients`` threads send requests for ``--seconds``: one ingest (a batch of 5 turns)
   per 4 discloses, each to a random namespace, round-robin across the replicas. Requests/s
   and p50/p95 per kind, with one replica and with two.
2. Disclose at ``--size`` memories in one namespace (default 100,000), through the controller,
   on each backend: SQLite + embedded Chroma in a data directory, and PostgreSQL + the Chroma
   server. The corpus is :mod:`benchmarks.corpus`'s synthetic chat; its vectors are seeded
   random unit vectors (embedding 100k turns takes ~8 minutes on 2 cores, and HNSW latency
   barely depends on the data), while every query is embedded by the real ONNX model, so the
   latency includes query embedding. p50/p95 over ``--queries`` distinct five-word queries.

Everything runs on one machine, whose load average and CPU count are recorded beside the
figures. Prints a table and writes benchmarks/results/replica_bench.json.

    python -m benchmarks.replica_bench                      (100k; about 20 minutes on 2 cores)
    python -m benchmarks.replica_bench --size 10000 --seconds 20
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from benchmarks.corpus import batched, generate, queries
from disclosure.service.vector_server import CHROMA_URL_VARIABLE
from tests.pg_server import PostgresServer, free_port
from tiers.base import Embedder
from tiers.chroma_server import ChromaServer
from tiers.config import DATABASE_URL_VARIABLE

if TYPE_CHECKING:
    import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "replica_bench.json"
PROFILE = "default"
INGEST_EVERY = 5  # one ingest, then four discloses
BATCH = 5


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    if not samples:
        return {"p50_ms": 0.0, "p95_ms": 0.0}
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
    }


# -- 1. mixed load through replicas ----------------------------------------------------------------


def _start_replica(root: Path, pg_url: str, chroma_url: str) -> tuple[str, subprocess.Popen[str]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen(
        [sys.executable, "-m", "disclosure", "serve", "--port", str(port), "--data-dir",
         str(root), "--profile", PROFILE, "--database-url", pg_url, "--chroma-url", chroma_url,
         "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a replica exited with code {process.returncode}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return base, process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("a replica did not answer /health in time")


def _turns(user: str, memories: Sequence[Any]) -> list[dict[str, str]]:
    return [
        {"id": f"{user}-{m.id}", "content": m.content, "session_id": m.session_id} for m in memories
    ]


class _Load:
    """Client threads sending a mixed load for a fixed time; latencies per kind."""

    def __init__(self, bases: Sequence[str], users: Sequence[str], probes: Sequence[str]) -> None:
        self.bases = list(bases)
        self.users = list(users)
        self.probes = list(probes)
        self.times: dict[str, list[float]] = {"ingest": [], "disclose": []}
        self.errors = 0
        self._lock = threading.Lock()
        self._turn = 0
        self._fresh = generate(10**7, seed=11)  # new turns to ingest, never the preloaded ones

    def _next(self) -> tuple[int, str]:
        with self._lock:
            self._turn += 1
            return self._turn, self.bases[self._turn % len(self.bases)]

    def _batch(self) -> list[Any]:
        with self._lock:
            fresh = [next(self._fresh) for _ in range(BATCH)]
        # ids of their own: new turns, never rewrites of preloaded ones or an earlier run's
        prefix = f"live{len(self.bases)}-"
        return [m.model_copy(update={"id": prefix + m.id}) for m in fresh]

    def worker(self, stop: float, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(timeout=120) as client:
            while time.monotonic() < stop:
                turn, base = self._next()
                user = rng.choice(self.users)
                kind = "ingest" if turn % INGEST_EVERY == 0 else "disclose"
                body: dict[str, Any]
                if kind == "ingest":
                    url, body = f"{base}/v1/ingest", {"memories": _turns(user, self._batch())}
                else:
                    url, body = f"{base}/v1/disclose", {"query": rng.choice(self.probes)}
                started = time.perf_counter()
                reply = client.post(url, params={"user": user}, json=body)
                took = (time.perf_counter() - started) * 1000
                with self._lock:
                    if reply.status_code == 200:
                        self.times[kind].append(took)
                    else:
                        self.errors += 1

    def run(self, clients: int, seconds: float) -> dict[str, Any]:
        stop = time.monotonic() + seconds
        threads = [threading.Thread(target=self.worker, args=(stop, i)) for i in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        done = sum(len(v) for v in self.times.values())
        return {
            "replicas": len(self.bases),
            "clients": clients,
            "seconds": round(wall, 1),
            "requests_per_s": round(done / wall, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "errors": self.errors,
            **{
                kind: {"requests": len(v), "per_s": round(len(v) / wall, 1), **_percentiles(v)}
                for kind, v in self.times.items()
            },
        }


def mixed_load(
    pg: PostgresServer, chroma: ChromaServer, base_dir: Path, args: argparse.Namespace
) -> list[dict[str, Any]]:
    users = [f"user{i}" for i in range(args.namespaces)]
    corpus = list(generate(args.preload, seed=3))
    probes = queries(corpus, 5000, seed=5)  # few repeats: a disclosure cache hit is rare
    first = _start_replica(base_dir / "replica-a", pg.url, chroma.url)
    processes = [first[1]]
    rows = []
    try:
        with httpx.Client(timeout=300) as client:
            for user in users:  # preload; every namespace opened (models loaded) before timing
                for chunk in batched(iter(corpus), 500):
                    reply = client.post(
                        f"{first[0]}/v1/ingest", params={"user": user},
                        json={"memories": _turns(user, chunk)},
                    )  # fmt: skip
                    reply.raise_for_status()
            wait_drained(client, first[0], users)
        rows.append(_Load([first[0]], users, probes).run(args.clients, args.seconds))
        second = _start_replica(base_dir / "replica-b", pg.url, chroma.url)
        processes.append(second[1])
        with httpx.Client(timeout=300) as client:
            for user in users:  # the second replica opens every namespace before timing
                client.post(f"{second[0]}/v1/disclose", params={"user": user}, json={"query": "x"})
            wait_drained(client, first[0], users)
        rows.append(_Load([first[0], second[0]], users, probes).run(args.clients, args.seconds))
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
    return rows


def wait_drained(client: httpx.Client, base: str, users: Sequence[str]) -> None:
    """Until no namespace of ``users`` has memories waiting for their vectors (30 min at most)."""
    deadline = time.monotonic() + 1800
    for user in users:
        while client.get(f"{base}/v1/stats", params={"user": user}).json()["stats"]["store"][
            "pending"
        ]:
            if time.monotonic() > deadline:
                raise SystemExit("the outbox did not drain")
            time.sleep(0.5)


# -- 2. disclose at --size memories per backend ----------------------------------------------------


class SyntheticEmbedder:
    """Benchmark-only: seeded random unit vectors for the corpus, the real model for queries."""

    def __init__(self, inner: Embedder, real: Sequence[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.real = set(real)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        real = [i for i, text in enumerate(texts) if text in self.real]
        for i, text in enumerate(texts):
            if text not in self.real:
                seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
                vector = np.random.default_rng(seed).standard_normal(self.dimension)
                out[i] = vector / np.linalg.norm(vector)
        if real:
            out[real] = self.inner.embed([texts[i] for i in real])
        return out


def at_size(backend: str, size: int, n_queries: int, data_dir: Path) -> dict[str, Any]:
    from disclosure.core.controller import DisclosureController
    from tiers.embedders import get_embedder

    corpus = generate(size, seed=3)
    sample = list(generate(min(size, 20_000), seed=3))
    probes = list(dict.fromkeys(queries(sample, n_queries + 20, seed=4)))
    embedder = SyntheticEmbedder(get_embedder("onnx"), probes)
    started = time.perf_counter()
    with DisclosureController.from_profile(PROFILE, data_dir=data_dir, embedder=embedder) as ctl:
        for chunk in batched(corpus, 1000):
            ctl.ingest(chunk)
        while ctl.stats()["store"]["pending"]:
            time.sleep(0.5)
        built = time.perf_counter() - started
        for probe in probes[:20]:  # warm the caches of each tier (not the disclosure cache)
            ctl.disclose(probe)
        times = []
        for probe in probes[20:]:
            t0 = time.perf_counter()
            ctl.disclose(probe)
            times.append((time.perf_counter() - t0) * 1000)
        count = ctl.stats()["store"]["cold"]
    return {
        "backend": backend,
        "memories": count,
        "build_s": round(built, 1),
        "queries": len(times),
        "disclose": _percentiles(times),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def per_backend(
    pg: PostgresServer, chroma: ChromaServer, base: Path, args: argparse.Namespace
) -> list[dict[str, Any]]:
    rows = [at_size("sqlite + embedded chroma", args.size, args.queries, base / "embedded" / "big")]
    print(rows[-1], flush=True)
    os.environ[DATABASE_URL_VARIABLE] = pg.url
    os.environ[CHROMA_URL_VARIABLE] = chroma.url
    try:
        rows.append(
            at_size("postgres + chroma server", args.size, args.queries, base / "server" / "big")
        )
    finally:
        os.environ.pop(DATABASE_URL_VARIABLE, None)
        os.environ.pop(CHROMA_URL_VARIABLE, None)
    print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="memories for part 2")
    parser.add_argument("--queries", type=int, default=200, help="timed discloses in part 2")
    parser.add_argument("--seconds", type=float, default=60, help="each mixed-load run")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--namespaces", type=int, default=4)
    parser.add_argument("--preload", type=int, default=2000, help="memories per namespace")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-size", action="store_true")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "profile": PROFILE,
        "settings": {k: v for k, v in vars(args).items() if not k.startswith("skip")},
        "command": " ".join(["python -m benchmarks.replica_bench", *(argv or sys.argv[1:])]),
    }
    with tempfile.TemporaryDirectory(prefix="replica-bench-") as tmp:
        base = Path(tmp)
        pg = PostgresServer().start()
        chroma = ChromaServer(base / "chroma").start()
        try:
            if not args.skip_load:
                report["mixed_load"] = mixed_load(pg, chroma, base, args)
                _save(report)  # each part is kept even if a later one does not finish
                _print_load(report["mixed_load"])
            if not args.skip_size:
                report["disclose_at_size"] = per_backend(pg, chroma, base, args)
                _save(report)
                _print_size(report["disclose_at_size"])
        finally:
            chroma.stop()
            pg.stop()
    print(f"load average {report['load_average']} on {report['cpus']} CPUs; wrote {OUT}")
    return 0


def _save(report: dict[str, Any]) -> None:
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _print_load(rows: list[dict[str, Any]]) -> None:
    print("| replicas | requests/s | ingest/s p50/p95 ms | disclose/s p50/p95 ms | errors |")
    print("|---|---|---|---|---|")
    for row in rows:
        i, d = row["ingest"], row["disclose"]
        print(
            f"| {row['replicas']} | {row['requests_per_s']} | {i['per_s']} {i['p50_ms']}/"
            f"{i['p95_ms']} | {d['per_s']} {d['p50_ms']}/{d['p95_ms']} | {row['errors']} |",
            flush=True,
        )


def _print_size(rows: list[dict[str, Any]]) -> None:
    print("| backend | memories | build s | disclose p50 / p95 ms |")
    print("|---|---|---|---|")
    for row in rows:
        d = row["disclose"]
        print(
            f"| {row['backend']} | {row['memories']:,} | {row['build_s']} | "
            f"{d['p50_ms']} / {d['p95_ms']} |"
        )


if __name__ == "__main__":
    sys.exit(main())

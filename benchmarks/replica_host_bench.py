"""Replicas on one host: a shared root, readiness, and a namespace's first open (issue 30).

A throwaway PostgreSQL (the tests' server: loopback, fsync off) and a ``chroma run`` on
loopback; ``disclosure serve --database-url ... --chroma-url ... --profile default`` replicas
started with the same command line except ``--port`` and no data directory (both take the
default root, here a temporary ``$TIERED_DISCLOSURE_HOME`` shared by every replica).

1. Shared host (``--requests``, default 1,000). Two replicas. ``--namespaces`` (8) namespaces
   are preloaded with ``--preload`` synthetic chat turns each through the first replica; then
   ``--clients`` threads send a mixed load, each request to a random namespace, alternating
   replicas: per ten requests one ingest (5 new turns), five discloses, one search, one show
   of a stored id, one stats and one feedback on an earlier disclosure. Every answer that is not
   2xx is counted by status and error code (target: 0).
2. First disclose after ``/ready`` (``--starts``, default 5). Each run starts a fresh replica,
   polls ``/ready`` until it answers 200 (noting when ``/health`` first answered and that
   ``/ready`` said 503 before), then times the first ``disclose`` of a namespace this replica has
   never opened (it was written through another replica), then a second one of the same
   namespace. Target: first disclose p50 <= 100 ms. ``--batch`` (default 250) is how many
   memories each ingest writing those namespaces carries: an ingest of more than 64 is a bulk
   import, whose texts are scanned for injection when first shown; a chat-sized one has them
   scanned as it comes in and the verdicts kept (``--batch 50``: figures under ``ready_50``).
3. A namespace's first open on a ready replica (``--opens``, default 40 namespaces): the time of
   the first read of one stored memory (``GET /v1/memories/{id}``) of each preloaded namespace
   the replica has not opened, so the open is nearly the whole of it; the same read again, on
   the open namespace, is timed beside it. Target: p50 <= 300 ms.

Everything runs on one machine, whose load average and CPU count are recorded beside the
figures. Prints the figures and writes benchmarks/results/replica_host_bench.json, each part
with its command, time and settings; a part run alone (``--only``) replaces its own figures.

    python -m benchmarks.replica_host_bench
    python -m benchmarks.replica_host_bench --only open --opens 20 --preload 200
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.corpus import generate, queries
from benchmarks.replica_bench import wait_drained
from tests.pg_server import PostgresServer, free_port
from tiers.chroma_server import ChromaServer

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "replica_host_bench.json"
PROFILE = "default"
BATCH = 5
# per ten requests: what each client thread sends (in order, then again)
MIX = ("ingest", "disclose", "search", "disclose", "show", "disclose", "stats", "disclose",
       "feedback", "disclose")  # fmt: skip


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    if not samples:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "max_ms": 0.0}
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(ordered[-1], 1),
    }


class Replica:
    """One ``disclosure serve`` process: the replicas' common command line and its own port."""

    def __init__(self, home: Path, pg_url: str, chroma_url: str, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
        env["PYTHONPATH"] = str(ROOT)
        env["TIERED_DISCLOSURE_HOME"] = str(home)  # the default root, the same for every replica
        self.started = time.perf_counter()
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "disclosure", "serve", "--port", str(self.port),
             "--profile", PROFILE, "--database-url", pg_url, "--chroma-url", chroma_url,
             "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait(self, path: str, timeout: float = 300) -> float:
        """Seconds from the start until ``path`` answers 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"a replica exited with code {self.process.returncode}")
            try:
                if httpx.get(f"{self.base}{path}", timeout=2).status_code == 200:
                    return time.perf_counter() - self.started
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise SystemExit(f"a replica did not answer {path} in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
        self._log.close()


@contextmanager
def replicas(
    n: int, home: Path, pg: PostgresServer, chroma: ChromaServer, log: Path, ready: str
) -> Iterator[list[Replica]]:
    started = [Replica(home, pg.url, chroma.url, log) for _ in range(n)]
    try:
        for replica in started:
            replica.wait(ready)
        yield started
    finally:
        for replica in started:
            replica.stop()


def _turns(user: str, memories: Sequence[Any], prefix: str = "") -> list[dict[str, str]]:
    return [
        {"id": f"{prefix}{user}-{m.id}", "content": m.content, "session_id": m.session_id}
        for m in memories
    ]


def preload(base: str, users: Sequence[str], corpus: Sequence[Any], batch: int = 250) -> None:
    with httpx.Client(timeout=600) as client:
        for user in users:
            for start in range(0, len(corpus), batch):
                reply = client.post(
                    f"{base}/v1/ingest", params={"user": user},
                    json={"memories": _turns(user, corpus[start : start + batch])},
                )  # fmt: skip
                reply.raise_for_status()
        wait_drained(client, base, users)


# -- 1. two replicas, one root, a mixed load -------------------------------------------------------


class MixedLoad:
    """Client threads sharing a count of requests; every non-2xx answer is kept."""

    def __init__(
        self, bases: Sequence[str], users: Sequence[str], probes: Sequence[str], total: int
    ) -> None:
        self.bases, self.users, self.probes = list(bases), list(users), list(probes)
        self.left = total
        self.sent = 0
        self.failures: Counter[str] = Counter()
        self.samples: list[str] = []
        self.times: dict[str, list[float]] = {kind: [] for kind in set(MIX)}
        self._lock = threading.Lock()
        self._fresh = generate(10**7, seed=13)
        self._disclosed: dict[str, list[tuple[str, str]]] = {u: [] for u in users}

    def _take(self) -> int | None:
        with self._lock:
            if self.left <= 0:
                return None
            self.left -= 1
            self.sent += 1
            return self.sent

    def worker(self, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(timeout=300) as client:
            while (turn := self._take()) is not None:
                base = rng.choice(self.bases)  # the kinds cycle; the replicas must not with them
                user = rng.choice(self.users)
                kind = MIX[turn % len(MIX)]
                started = time.perf_counter()
                reply = self._send(client, base, user, kind, rng)
                took = (time.perf_counter() - started) * 1000
                with self._lock:
                    if 200 <= reply.status_code < 300:
                        self.times[kind].append(took)
                    else:
                        code = _code(reply)
                        self.failures[f"{kind} {reply.status_code} {code}"] += 1
                        if len(self.samples) < 10:
                            self.samples.append(f"{kind} via {base}: {reply.text[:300]}")
                if kind == "disclose" and reply.status_code == 200:
                    with self._lock:
                        self._disclosed[user].append((base, reply.json()["disclosure_id"]))

    def _send(
        self, client: httpx.Client, base: str, user: str, kind: str, rng: random.Random
    ) -> httpx.Response:
        params = {"user": user}
        body: dict[str, Any]
        if kind == "ingest":
            with self._lock:
                fresh = [next(self._fresh) for _ in range(BATCH)]
            body = {"memories": _turns(user, fresh, prefix="live-")}
            return client.post(f"{base}/v1/ingest", params=params, json=body)
        if kind == "search":
            body = {"query": rng.choice(self.probes), "limit": 5}
            return client.post(f"{base}/v1/search", params=params, json=body)
        if kind == "show":
            memory = f"{user}-turn-{rng.randrange(100):07d}"  # a preloaded one
            return client.get(f"{base}/v1/memories/{memory}", params=params)
        if kind == "stats":
            return client.get(f"{base}/v1/stats", params=params)
        if kind == "feedback":
            with self._lock:
                earlier = self._disclosed[user].pop() if self._disclosed[user] else None
            if earlier is not None:  # feedback goes to the replica that holds the disclosure
                body = {"disclosure_id": earlier[1], "reply": "Noted, thanks."}
                return client.post(f"{earlier[0]}/v1/feedback", params=params, json=body)
        body = {"query": rng.choice(self.probes)}
        return client.post(f"{base}/v1/disclose", params=params, json=body)

    def run(self, clients: int) -> dict[str, Any]:
        threads = [threading.Thread(target=self.worker, args=(i,)) for i in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        done = sum(len(v) for v in self.times.values())
        return {
            "requests": self.sent,
            "ok": done,
            "non_2xx": sum(self.failures.values()),
            "failures": dict(self.failures),
            "failure_samples": self.samples,
            "seconds": round(wall, 1),
            "requests_per_s": round(self.sent / wall, 1),
            "latency": {kind: {"n": len(v), **_percentiles(v)} for kind, v in self.times.items()},
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }


def _code(reply: httpx.Response) -> str:
    try:
        return str(reply.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "-"


def shared_host(
    pg: PostgresServer, chroma: ChromaServer, base: Path, args: argparse.Namespace
) -> dict[str, Any]:
    users = [f"user{i}" for i in range(args.namespaces)]
    corpus = list(generate(args.preload, seed=3))
    probes = queries(corpus, 2000, seed=5)
    home = base / "home"
    with replicas(2, home, pg, chroma, base / "replicas.log", args.ready_path) as (one, two):
        preload(one.base, users, corpus)
        row = MixedLoad([one.base, two.base], users, probes, args.requests).run(args.clients)
        row["home_after"] = sorted(str(p.relative_to(home)) for p in home.glob("*/*"))
    return row


# -- 2. the first disclose after /ready ------------------------------------------------------------


def first_after_ready(
    pg: PostgresServer, chroma: ChromaServer, base: Path, args: argparse.Namespace
) -> dict[str, Any]:
    home = base / "home-ready"
    corpus = list(generate(args.preload, seed=3))
    users = [f"ready{i}" for i in range(args.starts)]
    with replicas(1, home, pg, chroma, base / "ready.log", args.ready_path) as (writer,):
        preload(writer.base, users, corpus, args.batch)
    probes = queries(corpus, 50, seed=7)
    runs = []
    for run, user in enumerate(users):
        replica = Replica(home, pg.url, chroma.url, base / "ready.log")
        try:
            early = _early_answers(replica)
            ready_s = replica.wait(args.ready_path)
            with httpx.Client(timeout=300) as client:
                times = []
                for query in (probes[run], probes[run + 20]):
                    started = time.perf_counter()
                    reply = client.post(
                        f"{replica.base}/v1/disclose", params={"user": user}, json={"query": query}
                    )
                    times.append((time.perf_counter() - started) * 1000)
                    if reply.status_code != 200 or not reply.json()["items"]:
                        raise SystemExit(f"disclose after ready: {reply.status_code} {reply.text}")
        finally:
            replica.stop()
        runs.append({"ready_s": round(ready_s, 2), **early, "first_ms": round(times[0], 1),
                     "second_ms": round(times[1], 1)})  # fmt: skip
        print(f"  start {run + 1}: {runs[-1]}", flush=True)
    return {
        "runs": runs,
        "first_disclose": _percentiles([r["first_ms"] for r in runs]),
        "second_disclose": _percentiles([r["second_ms"] for r in runs]),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _early_answers(replica: Replica) -> dict[str, Any]:
    """When /health first answered, and what /ready said then."""
    health_s = replica.wait("/health")
    try:
        early = httpx.get(f"{replica.base}{'/ready'}", timeout=5).status_code
    except httpx.TransportError:
        early = 0
    return {"health_s": round(health_s, 2), "ready_status_at_health": early}


# -- 3. a namespace's first open -------------------------------------------------------------------


def first_opens(
    pg: PostgresServer, chroma: ChromaServer, base: Path, args: argparse.Namespace
) -> dict[str, Any]:
    home = base / "home-open"
    corpus = list(generate(args.preload, seed=3))
    users = [f"open{i}" for i in range(args.opens)]
    with replicas(1, home, pg, chroma, base / "open.log", args.ready_path) as (writer,):
        preload(writer.base, users, corpus)
    opened: list[float] = []
    again: list[float] = []
    with (
        replicas(1, home, pg, chroma, base / "open.log", args.ready_path) as (replica,),
        httpx.Client(timeout=300) as client,
    ):
        for user in users:
            for into in (opened, again):
                started = time.perf_counter()
                reply = client.get(f"{replica.base}/v1/memories/{user}-{corpus[0].id}",
                                   params={"user": user})  # fmt: skip
                into.append((time.perf_counter() - started) * 1000)
                reply.raise_for_status()
    return {
        "namespaces": len(users),
        "memories_each": args.preload,
        "first_open": _percentiles(opened),
        "already_open": _percentiles(again),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--namespaces", type=int, default=8)
    parser.add_argument("--preload", type=int, default=500, help="memories per namespace")
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--batch", type=int, default=250, help="memories per ingest (ready)")
    parser.add_argument("--opens", type=int, default=40)
    parser.add_argument("--ready-path", default="/ready", help="what a replica is polled on")
    parser.add_argument("--only", choices=("host", "ready", "open"), action="append")
    args = parser.parse_args(argv)
    parts = args.only or ["host", "ready", "open"]
    command = " ".join(["python -m benchmarks.replica_host_bench", *(argv or sys.argv[1:])])
    report = _earlier() if args.only else {}  # a part run alone replaces its own figures only
    report.update({"cpus": os.cpu_count(), "profile": PROFILE})
    with tempfile.TemporaryDirectory(prefix="replica-host-") as tmp:
        base = Path(tmp)
        pg = PostgresServer().start()
        chroma = ChromaServer(base / "chroma").start()
        try:
            for part, run in (("host", shared_host), ("ready", first_after_ready),
                              ("open", first_opens)):  # fmt: skip
                if part in parts:
                    print(f"{part} ...", flush=True)
                    measured = datetime.now(UTC).isoformat(timespec="seconds")
                    row = run(pg, chroma, base, args)
                    key = part if part != "ready" or args.batch == 250 else f"ready_{args.batch}"
                    report[key] = {"measured": measured, "command": command,
                                   "settings": _settings(part, args), **row}  # fmt: skip
                    _save(report)
                    _print(part, report[key])
        finally:
            chroma.stop()
            pg.stop()
    print(f"load average {os.getloadavg()} on {report['cpus']} CPUs; wrote {OUT}")
    return 0


def _settings(part: str, args: argparse.Namespace) -> dict[str, Any]:
    names = {"host": ("requests", "clients", "namespaces", "preload"),
             "ready": ("starts", "preload", "batch", "ready_path"),
             "open": ("opens", "preload", "ready_path")}[part]  # fmt: skip
    return {name: getattr(args, name) for name in names}


def _earlier() -> dict[str, Any]:
    try:
        found = json.loads(OUT.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in found.items() if k in ("host", "open") or k.startswith("ready")}


def _save(report: dict[str, Any]) -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _print(part: str, row: dict[str, Any]) -> None:
    if part == "host":
        failed = row["failures"] or ""
        rate = f"{row['seconds']} s ({row['requests_per_s']}/s)"
        print(f"two replicas, one root: {row['requests']} requests, {row['non_2xx']} non-2xx")
        print(f"  {failed} in {rate}")
        for kind, figures in sorted(row["latency"].items()):
            line = f"p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms"
            print(f"  {kind:<9} n={figures['n']:<4} {line}")
    elif part == "ready":
        first, second = row["first_disclose"], row["second_disclose"]
        print(f"first disclose after /ready: p50 {first['p50_ms']} ms, max {first['max_ms']} ms")
        print(f"  (the second: p50 {second['p50_ms']} ms) over {len(row['runs'])} starts")
    else:
        first, again = row["first_open"], row["already_open"]
        print(f"first open of a namespace: p50 {first['p50_ms']} ms, p95 {first['p95_ms']} ms")
        print(f"  (already open: p50 {again['p50_ms']} ms) over {row['namespaces']} namespaces")


if __name__ == "__main__":
    sys.exit(main())

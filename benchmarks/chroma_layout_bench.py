"""How to lay namespaces out on a Chroma server (a script, not a test): prints a table, writes JSON.

    python -m benchmarks.chroma_layout_bench          # 4 namespaces, 2k and 10k each
    python -m benchmarks.chroma_layout_bench --namespaces 8 --sizes 5000

Starts its own ``chroma run`` on a free loopback port and compares, at each size (memories per
namespace) with several namespaces on the one server:

- ``per_namespace``: one collection per namespace, queried plainly;
- ``shared_filter``: one collection for all, each record tagged with its namespace, queried with
  ``where={"namespace": ...}``.

Both hold the same synthetic 384-d unit vectors (HNSW latency barely depends on the data); the
figures are query latency p50/p95 (k=10, the vector given: no embedding), recall@10 against the
exact top 10 of the namespace (brute force in numpy), and the insert rate. The warm tier ships the
faster layout: see :func:`tiers.warm_layout.collection_for`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from tiers.chroma_server import ChromaServer  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
DIMENSION = 384
K = 10
BATCH = 5000


def unit_vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    ms = np.asarray(samples_s) * 1000
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
        "mean_ms": round(float(ms.mean()), 3),
    }


def exact_top(vectors: np.ndarray, query: np.ndarray) -> set[int]:
    return set(np.argsort(-(vectors @ query))[:K].tolist())


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def fill(collection: Any, ids: list[str], vectors: np.ndarray, metas: list[Any] | None) -> None:
    for start in range(0, len(ids), BATCH):
        collection.add(
            ids=ids[start : start + BATCH],
            embeddings=vectors[start : start + BATCH],
            metadatas=None if metas is None else metas[start : start + BATCH],
        )


def bench_size(client: Any, size: int, namespaces: int, queries: int, seed: int) -> dict[str, Any]:
    data = [unit_vectors(size, seed + n) for n in range(namespaces)]
    probes = [unit_vectors(queries, seed + 1000 + n) for n in range(namespaces)]
    truth = [[exact_top(data[n], q) for q in probes[n]] for n in range(namespaces)]
    config = {"hnsw": {"space": "cosine"}}
    out: dict[str, Any] = {"per_namespace_size": size, "namespaces": namespaces}

    own = [
        client.create_collection(
            f"layout-{size}-ns{n}", configuration=config, embedding_function=None
        )
        for n in range(namespaces)
    ]
    insert, _ = timed(
        lambda: [fill(c, [f"{i}" for i in range(size)], data[n], None) for n, c in enumerate(own)]
    )

    def run_own() -> tuple[list[float], float]:
        samples, hits = [], 0
        for n, collection in enumerate(own):
            for q, expected in zip(probes[n], truth[n], strict=True):
                start = time.perf_counter()
                got = collection.query(query_embeddings=[q], n_results=K)
                took = time.perf_counter() - start
                samples.append(took)
                hits += len({int(i) for i in got["ids"][0]} & expected)
        return samples, hits / (namespaces * queries * K)

    shared = client.create_collection(
        f"layout-{size}-shared", configuration=config, embedding_function=None
    )
    insert_shared, _ = timed(
        lambda: [
            fill(
                shared,
                [f"ns{n}:{i}" for i in range(size)],
                data[n],
                [{"namespace": f"ns{n}"}] * size,
            )
            for n in range(namespaces)
        ]
    )

    def run_shared() -> tuple[list[float], float]:
        samples, hits = [], 0
        for n in range(namespaces):
            where = {"namespace": f"ns{n}"}
            for q, expected in zip(probes[n], truth[n], strict=True):
                start = time.perf_counter()
                got = shared.query(query_embeddings=[q], n_results=K, where=where)
                took = time.perf_counter() - start
                samples.append(took)
                hits += len({int(i.split(":")[1]) for i in got["ids"][0]} & expected)
        return samples, hits / (namespaces * queries * K)

    run_own()  # warm both up (HNSW segments load lazily on a server)
    run_shared()
    own_samples, own_recall = run_own()
    shared_samples, shared_recall = run_shared()
    total = size * namespaces
    out["per_namespace"] = {
        **percentiles(own_samples),
        "recall_at_10": round(own_recall, 4),
        "insert_per_s": round(total / insert, 1),
    }
    out["shared_filter"] = {
        **percentiles(shared_samples),
        "recall_at_10": round(shared_recall, 4),
        "insert_per_s": round(total / insert_shared, 1),
    }
    for collection in [*own, shared]:
        client.delete_collection(collection.name)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--namespaces", type=int, default=4)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--queries", type=int, default=100, help="per namespace")
    parser.add_argument("--out", type=Path, default=RESULTS / "chroma_layout.json")
    args = parser.parse_args(argv)

    import chromadb
    from chromadb.config import Settings

    load_start = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ChromaServer(Path(tmp)) as server:
        client = chromadb.HttpClient(
            host=server.host, port=server.port, settings=Settings(anonymized_telemetry=False)
        )
        for size in args.sizes:
            row = bench_size(client, size, args.namespaces, args.queries, seed=size)
            rows.append(row)
            a, b = row["per_namespace"], row["shared_filter"]
            print(
                f"{args.namespaces} x {size:>6}: per-namespace p50 {a['p50_ms']:7.2f} ms "
                f"p95 {a['p95_ms']:7.2f} recall {a['recall_at_10']:.3f} | shared+filter p50 "
                f"{b['p50_ms']:7.2f} ms p95 {b['p95_ms']:7.2f} recall {b['recall_at_10']:.3f}"
            )
    result = {
        "benchmark": "chroma_layout_bench",
        "command": "python -m benchmarks.chroma_layout_bench " + " ".join(argv or sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_start": [round(x, 2) for x in load_start],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "k": K,
        "dimension": DIMENSION,
        "queries_per_namespace": args.queries,
        "rows": rows,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How many of the true nearest vectors Chroma's HNSW index returns, and what that costs, by
``ef_search`` (``tiers.warm.search_ef``) and collection size.

    python -m benchmarks.hnsw_ef [--sizes 10000 50000] [--ef 100 200 300 400] [--queries 200]

For each size, the real MiniLM vectors of the first N synthetic turns (:mod:`benchmarks.vectors`,
computed once and cached) go into a Chroma collection of their own under
``benchmarks/.cache/hnsw-N``, made as the warm tier makes its collections (cosine, Chroma's
construction settings). Each ef is measured in a fresh process, since Chroma reads ``ef_search``
when it loads the index: the share of the exact top 100 (every vector compared) among the 100
returned, the share of the exact top 10 among them, and the query's p50 in ms. Prints a table
and writes benchmarks/results/hnsw_ef.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datadirs import SEED
from benchmarks.vectors import CACHE, corpus_vectors

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "hnsw_ef.json"
K = 100


def _collection(size: int, *, create: bool) -> Any:
    import chromadb

    client = chromadb.PersistentClient(str(CACHE / f"hnsw-{size}"))
    if not create:
        return client.get_collection("vectors", embedding_function=None)
    from tiers import get_embedder

    _, vectors = corpus_vectors(size, get_embedder("auto"), seed=SEED)
    if "vectors" in {c.name for c in client.list_collections()}:
        client.delete_collection("vectors")
    collection = client.create_collection(
        "vectors", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    step = client.get_max_batch_size()
    for start in range(0, size, step):
        rows = vectors[start : start + step]
        collection.add(ids=[str(start + i) for i in range(len(rows))], embeddings=rows)
    return collection


def measure(size: int, ef: int, queries: int) -> dict[str, Any]:
    """One ef on one size's collection, in this process (which must not have searched it)."""
    from benchmarks.corpus import generate
    from benchmarks.corpus import queries as make_queries
    from tiers import get_embedder

    collection = _collection(size, create=False)
    with warnings.catch_warnings():  # Chroma: "legacy embedding function config" (we have none)
        warnings.simplefilter("ignore", DeprecationWarning)
        collection.modify(configuration={"hnsw": {"ef_search": ef}})
    got = collection.get(include=["embeddings"])
    ids = list(got["ids"])
    matrix = np.asarray(got["embeddings"], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    texts = make_queries(list(generate(size, seed=SEED)), queries, seed=SEED + 2)
    vectors = get_embedder("auto").embed(texts)
    for vector in vectors[:10]:  # load the index
        collection.query(query_embeddings=[vector], n_results=K, include=["distances"])
    found, top10, times = [], [], []
    for vector in vectors:
        order = np.argsort(-(matrix @ vector))
        began = time.perf_counter()
        result = collection.query(query_embeddings=[vector], n_results=K, include=["distances"])
        times.append((time.perf_counter() - began) * 1000)
        returned = set(result["ids"][0])
        found.append(len(returned & {ids[i] for i in order[:K]}) / K)
        top10.append(len(returned & {ids[i] for i in order[:10]}) / 10)
    return {
        "size": size,
        "ef": ef,
        "recall_at_100": round(float(np.mean(found)), 3),
        "top10_in_100": round(float(np.mean(top10)), 3),
        "p50_ms": round(statistics.median(times), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--ef", type=int, nargs="+", default=[100, 200, 300, 400])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--measure", type=int, nargs=2, metavar=("SIZE", "EF"), help="internal")
    args = parser.parse_args(argv)
    if args.measure:
        size, ef = args.measure
        print(json.dumps(measure(size, ef, args.queries)))
        return 0
    rows = []
    for size in args.sizes:
        _collection(size, create=True)
        for ef in args.ef:
            command = [sys.executable, "-m", "benchmarks.hnsw_ef", "--measure", str(size)]
            command += [str(ef), "--queries", str(args.queries)]
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(rows[-1], flush=True)
    print("\n| vectors | ef_search | exact top 100 returned | exact top 10 returned | p50 ms |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['size']:,} | {r['ef']} | {r['recall_at_100']:.3f} | {r['top10_in_100']:.3f} "
            f"| {r['p50_ms']:.2f} |"
        )
    OUT.write_text(json.dumps({"k": K, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

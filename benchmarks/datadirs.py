"""Data directories for the disclosure benchmarks, built once and kept under ``benchmarks/.cache``.

* ``warm-<n>``: ``n`` synthetic turns (:mod:`benchmarks.corpus`, seed 3) ingested through
  ``DisclosureController.ingest`` in batches of 1,000 (privacy filter, enrichment, archive, hot
  set, warm index), the warm vectors coming from :class:`benchmarks.vectors.CachedEmbedder`
  (the real embedder's vectors, computed once).
* ``cold-<total>-warm-<n>``: a copy of ``warm-<n>`` plus turns ``n .. total`` of the same corpus,
  enriched by the controller's ``prepare`` and appended to the archive by a ``TieredStore``
  without a warm tier, then marked as evicted from the warm index (the state the lifecycle
  leaves old memories in: archived, found by BM25, no vector). So the archive holds ``total``
  memories and the warm index ``n`` of them. The warm set is the corpus's first ``n`` turns
  (whose vectors are cached), so the cold-only turns are the newer ones; for latency it does
  not matter which turns carry vectors.

Each directory records how it was built, and the probe queries drawn from its corpus, in
``built.json``; a directory without it (an interrupted build) is rebuilt.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.corpus import batched, generate
from benchmarks.vectors import CACHE, CachedEmbedder, corpus_vectors
from tiers.memory import Memory

BUILT = "built.json"
SEED = 3
QUERY_SEED = 4
PROBES = 2_000  # queries kept per directory: distinct sets per level, plus repeats
WARM_EVICTED = 2  # tiers.schema.WARM_EVICTED


def warm_dir(n: int) -> Path:
    return CACHE / "data" / f"warm-{n}"


def cold_dir(total: int, warm: int) -> Path:
    return CACHE / "data" / f"cold-{total}-warm-{warm}"


def built(path: Path) -> dict[str, Any] | None:
    """The build record of ``path``, or None when it was never (fully) built."""
    marker = path / BUILT
    return dict(json.loads(marker.read_text(encoding="utf-8"))) if marker.is_file() else None


def ensure_warm(n: int) -> dict[str, Any]:
    """``warm-<n>``, built unless it already is; returns its build record."""
    path = warm_dir(n)
    record = built(path)
    if record is not None:
        keep_scan_verdicts(path)  # a directory built before verdicts were kept
        return record
    shutil.rmtree(path, ignore_errors=True)
    from disclosure.core.controller import DisclosureController
    from disclosure.core.profiles import load_profile
    from tiers import get_embedder

    context = load_profile("default").tiers.warm.context
    texts, vectors = corpus_vectors(n, get_embedder("auto"), seed=SEED, context=context)
    embedder = CachedEmbedder(get_embedder("auto"), texts, vectors)
    started = time.perf_counter()
    with DisclosureController.from_profile("default", data_dir=path, embedder=embedder) as ctl:
        for chunk in batched(generate(n, seed=SEED), 1_000):
            ctl.ingest(chunk)
        ctl.settle()
    seconds = time.perf_counter() - started
    keep_scan_verdicts(path)
    record = {
        "memories": n,
        "warm": n,
        "ingest_seconds": round(seconds, 1),
        "ingest_per_s": round(n / seconds),
        "embedder": embedder.name,
        "embedded_at_ingest": embedder.misses,
        "probes": probe_queries(generate(n, seed=SEED), n),
    }
    return _mark(path, record)


def ensure_cold(total: int, warm: int) -> dict[str, Any]:
    """``cold-<total>-warm-<warm>``, built unless it already is; returns its build record."""
    path = cold_dir(total, warm)
    record = built(path)
    if record is not None:
        return record
    base = ensure_warm(warm)
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(warm_dir(warm), path)
    (path / BUILT).unlink()
    seconds = _append_cold_only(path, warm, total)
    record = {
        "memories": total,
        "warm": warm,
        "warm_ingest_seconds": base["ingest_seconds"],
        "cold_append_seconds": round(seconds, 1),
        "cold_append_per_s": round((total - warm) / seconds),
        "embedder": base["embedder"],
        "probes": probe_queries(generate(total, seed=SEED), total),
    }
    return _mark(path, record)


def _append_cold_only(path: Path, start: int, total: int) -> float:
    from disclosure.core.pipeline.ingest import prepare
    from disclosure.core.profiles import load_profile
    from formatters import get_token_counter
    from tiers.store import TieredStore

    profile = load_profile("default")
    counter = get_token_counter(profile.tokens.encoding)
    started = time.perf_counter()
    with TieredStore(
        path,
        profile.tiers,
        line_counter=counter,
        citation_length=profile.citations.length,
        citation_alphabet=profile.citations.alphabet,
    ) as store:
        for chunk in batched(_skip(generate(total, seed=SEED), start), 5_000):
            prepared, _ = prepare(chunk, profile.analyzer)
            store.ingest(prepared)
    with sqlite3.connect(path / "archive.sqlite3") as db:  # evicted: archived, no vector
        db.execute("UPDATE memories SET warm = ? WHERE warm = 0", (WARM_EVICTED,))
    return time.perf_counter() - started


def probe_queries(memories: Iterator[Memory], n: int) -> list[str]:
    """:data:`PROBES` 5-word queries, each from a random turn of the ``n`` (seeded)."""
    rng = random.Random(QUERY_SEED)
    wanted = sorted(rng.randrange(n) for _ in range(PROBES))
    picked: list[Memory] = []
    position = 0
    for index, memory in enumerate(memories):
        while position < len(wanted) and wanted[position] == index:
            picked.append(memory)
            position += 1
        if position == len(wanted):
            break
    rng.shuffle(picked)
    out = []
    for memory in picked:
        words = memory.content.rstrip(".?").split()
        out.append(" ".join(rng.sample(words, min(5, len(words)))))
    return out


def _skip(items: Iterator[Memory], n: int) -> Iterator[Memory]:
    for index, item in enumerate(items):
        if index >= n:
            yield item


def keep_scan_verdicts(path: Path) -> int:
    """The injection-scan verdicts of every memory in ``path``'s archive, as a directory holds
    them once its memories came in a few at a time (live chat) or were shown once
    (:mod:`disclosure.storage.scan_verdicts`; the benchmark builds its directories in bulk, which
    keeps none ahead): only texts without one are scanned. Returns how many were added."""
    from disclosure.storage.scan_verdicts import ScanVerdicts

    verdicts = ScanVerdicts(path)
    added = 0
    try:
        with sqlite3.connect(f"file:{path / 'archive.sqlite3'}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT body FROM memories ORDER BY rowid")
            while batch := rows.fetchmany(2_000):
                added += verdicts.record([Memory.from_json(r[0]) for r in batch])
    finally:
        verdicts.close()
    return added


def _mark(path: Path, record: dict[str, Any]) -> dict[str, Any]:
    record["disk_bytes"] = disk_bytes(path)
    record["built_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (path / BUILT).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def disk_bytes(path: Path) -> int:
    """Bytes of every file under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())

"""``benchmarks/results/RESULTS.md`` from ``disclose_bench.json``: tables docs/results.md links."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LEVELS = ("minimal", "standard", "detailed", "comprehensive")
STAGES = ("analyze", "gather", "search_hot", "search_warm", "search_cold", "expand", "render")
TARGETS = (  # (what, scenario, level, statistic, limit in ms)
    ("p50 at the standard level, 10k memories", "warm-10000", "standard", "p50_ms", 20.0),
    ("p95 at the comprehensive level, 100k warm + 1M cold", "cold-1000000-warm-100000",
     "comprehensive", "p95_ms", 100.0),
)  # fmt: skip


def write_markdown(results: dict[str, Any], path: Path) -> str:
    """Render every table, write them to ``path`` and return the text."""
    parts = [_intro(results), _targets(results), _latency(results), _stages(results),
             _cache(results), _footprint(results), _ingest(results)]  # fmt: skip
    text = "\n\n".join(p for p in parts if p) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def _intro(results: dict[str, Any]) -> str:
    machine = results.get("machine", {})
    return (
        "# Benchmarks: disclose latency, ingest, memory and disk\n\n"
        f"Measured {results.get('when', '?')} on {machine.get('cpus', '?')} shared CPU cores "
        f"(Python {machine.get('python', '?')}; load average at the end "
        f"{machine.get('load_avg_at_end', '?')}). Reproduce: `python -m benchmarks.run --full` "
        "(about 3 minutes once the data directories are cached under `benchmarks/.cache`; the "
        "first run builds them, about 35 minutes here: embedding 100k turns once, then a 1M "
        "archive). "
        "Synthetic chat turns from `benchmarks/corpus.py` (seed 3); queries are 5 words drawn "
        "from random turns, a distinct set of 200 per level; levels are forced; the process is "
        "warm (store open, 20 queries first); no answer comes from a cache except in the "
        "cache-hit table. Warm vectors are the real ONNX MiniLM embedder's, computed once and "
        "cached; query embedding is done live. Latency is wall time of `disclose` in ms."
    )


def _targets(results: dict[str, Any]) -> str:
    rows = []
    for what, scenario, level, stat, limit in TARGETS:
        for key, run in sorted(results["disclose"].items()):
            if key.split("/")[0] != scenario:
                continue
            value = run["levels"][level][stat]
            verdict = "met" if value <= limit else "MISSED"
            rows.append([what, run["profile"], f"<= {limit:g}", f"{value:.1f}", verdict])
    if not rows:
        return ""
    return "## Targets (issue 5)\n\n" + _table(["target", "profile", "ms", "measured", ""], rows)


def _latency(results: dict[str, Any]) -> str:
    header = ["scenario", "profile", *[f"{lv} p50 / p95" for lv in LEVELS], "tokens (comp.)"]
    rows = []
    for _, run in _ordered(results):
        cells = [f"{run['levels'][lv]['p50_ms']:.1f} / {run['levels'][lv]['p95_ms']:.1f}"
                 for lv in LEVELS]  # fmt: skip
        tokens = str(run["levels"]["comprehensive"]["tokens_mean"])
        rows.append([_scenario(run), run["profile"], *cells, tokens])
    return "## disclose latency per level (ms)\n\n" + _table(header, rows)


def _stages(results: dict[str, Any]) -> str:
    header = ["scenario", "profile", *STAGES, "total"]
    rows = []
    for _, run in _ordered(results):
        stages = run["levels"]["comprehensive"]["stages_mean_ms"]
        rows.append([_scenario(run), run["profile"],
                     *[f"{stages.get(s, 0.0):.1f}" for s in (*STAGES, "total")]])  # fmt: skip
    note = (
        "Mean ms per stage at the comprehensive level (`DisclosureResult.timings_ms`; tier "
        "searches run concurrently inside gather)."
    )
    return "## Where the time goes\n\n" + note + "\n\n" + _table(header, rows)


def _cache(results: dict[str, Any]) -> str:
    header = ["scenario", "profile", "first p50 / p95", "repeated p50 / p95"]
    rows = [
        [_scenario(run), run["profile"],
         f"{run['cache_hit']['first']['p50_ms']:.1f} / {run['cache_hit']['first']['p95_ms']:.1f}",
         f"{run['cache_hit']['repeated']['p50_ms']:.1f} / "
         f"{run['cache_hit']['repeated']['p95_ms']:.1f}"]
        for _, run in _ordered(results)
    ]  # fmt: skip
    note = "The same 50 queries asked twice at the comprehensive level; the second is a cache hit."
    return "## Cache hits (ms)\n\n" + note + "\n\n" + _table(header, rows)


def _footprint(results: dict[str, Any]) -> str:
    header = ["scenario", "memories", "warm", "disk MB", "disk bytes / memory",
              "RSS MB (profile)", "RSS bytes / memory", "build ingest / s"]  # fmt: skip
    rows = []
    smallest = _smallest_runs(results)
    for scenario, build in sorted(results["builds"].items(), key=lambda kv: kv[1]["memories"]):
        runs = [r for k, r in results["disclose"].items() if k.split("/")[0] == scenario]
        rss = ", ".join(f"{r['rss_mb']:.0f} ({r['profile']})" for r in runs)
        growth = ", ".join(_rss_per_memory(r, smallest.get(r["profile"])) for r in runs)
        speed = build.get("ingest_per_s") or build.get("cold_append_per_s")
        rows.append([scenario, f"{build['memories']:,}", f"{build['warm']:,}",
                     f"{build['disk_bytes'] / 1e6:,.0f}",
                     f"{build['disk_bytes'] / build['memories']:,.0f}", rss or "-",
                     growth or "-", f"{speed:,}" if speed else "-"])  # fmt: skip
    note = (
        "RSS: the benchmark process after opening the store and asking ~900 queries (Python, "
        "spaCy rules, tiktoken, onnxruntime and Chroma included: most of it is fixed). RSS "
        "bytes / memory: the growth over the smallest scenario of the same profile, per memory "
        "added. Build ingest: `DisclosureController.ingest` in batches of 1,000 with cached "
        "vectors (warm), or the archive-only append of the cold part (no embedding)."
    )
    return "## Memory and disk\n\n" + note + "\n\n" + _table(header, rows)


def _smallest_runs(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    smallest: dict[str, dict[str, Any]] = {}
    for run in results["disclose"].values():
        known = smallest.get(run["profile"])
        if known is None or run["memories"] < known["memories"]:
            smallest[run["profile"]] = run
    return smallest


def _rss_per_memory(run: dict[str, Any], base: dict[str, Any] | None) -> str:
    if base is None or run["memories"] <= base["memories"]:
        return "-"
    per = (run["rss_mb"] - base["rss_mb"]) * 1e6 / (run["memories"] - base["memories"])
    return f"{per:,.0f}"


def _ingest(results: dict[str, Any]) -> str:
    ingest = results.get("ingest")
    if not ingest:
        return ""
    row = [f"{ingest['n']:,}", str(ingest["batch"]), ingest["embedder"], f"{ingest['seconds']}",
           f"{ingest['per_s']:,}", f"{ingest['disk_bytes_per_memory']:,}"]  # fmt: skip
    note = (
        "`DisclosureController.ingest` into a fresh directory with the real embedder embedding "
        "inline (privacy filter, enrichment, archive fsync per batch, hot set, warm index)."
    )
    header = ["memories", "batch", "embedder", "seconds", "memories / s", "disk bytes / memory"]
    return "## Ingest throughput\n\n" + note + "\n\n" + _table(header, [row])


def _ordered(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(results["disclose"].items(), key=lambda kv: (kv[1]["memories"], kv[0]))


def _scenario(run: dict[str, Any]) -> str:
    if run["memories"] == run["warm"]:
        return f"{run['memories']:,} warm"
    return f"{run['warm']:,} warm + {run['memories']:,} archived"

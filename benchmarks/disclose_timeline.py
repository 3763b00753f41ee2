"""Where one warm ``disclose`` spends its time: when each step starts and ends, and which
threads burn the CPU.

    python -m benchmarks.disclose_timeline [--queries 200] [--level standard]

Opens the ``warm-10000`` directory (built by :mod:`benchmarks.run`) with the ``default`` profile
and the real embedder, asks 20 queries to warm up, then ``--queries`` distinct probes at
``--level``. Each step of the pipeline is wrapped to note the time (ms since ``disclose`` began)
at which it starts (``>``) and ends (``<``); the medians over the queries are printed in order,
with the median total. The steps run in several threads (the query's embedding, the tier
searches), so the marks show what waits for what. Then the CPU each thread of the process used
per query (from ``/proc``, Linux only), with the pool's workers summed. Nothing is written; the
wrappers add a few microseconds per step.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import shutil
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.datadirs import ensure_warm, warm_dir
from benchmarks.run import NOW

_marks: dict[str, float] = {}
_origin = [0.0]


def _wrap(owner: Any, name: str, label: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def marked(*args: Any, **kwargs: Any) -> Any:
        _marks.setdefault(label + " >", (time.perf_counter() - _origin[0]) * 1000)
        try:
            return original(*args, **kwargs)
        finally:
            _marks[label + " <"] = (time.perf_counter() - _origin[0]) * 1000

    setattr(owner, name, marked)


def _thread_cpu() -> dict[str, int]:
    """Clock ticks of CPU (user + system) per thread id of this process."""
    out: dict[str, int] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[task.name] = int(fields[11]) + int(fields[12])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--level", default="standard")
    args = parser.parse_args(argv)

    import disclosure.core.pipeline.compose as compose
    import disclosure.core.pipeline.gather as gather
    import tiers.embedders as embedders
    import tiers.warm as warm
    from disclosure.core.controller import DisclosureController
    from tiers import get_embedder

    _wrap(embedders.QueryEmbeddingCache, "_embed", "embed query")
    _wrap(warm.WarmTier, "search_ids", "warm search (waits for the vector)")
    _wrap(gather.Gatherer, "gather", "gather")
    _wrap(gather.Gatherer, "_rank", "rank")
    _wrap(compose.Composer, "shortlist", "shortlist")
    _wrap(compose.Composer, "render_items", "expand: render items")
    _wrap(compose.Composer, "render", "render")
    _wrap(compose.Composer, "result", "result")

    path = warm_dir(10_000)
    record = ensure_warm(10_000)
    shutil.rmtree(path / "cache", ignore_errors=True)
    (path / "usage.sqlite3").unlink(missing_ok=True)
    probes = record["probes"]
    marks: dict[str, list[float]] = collections.defaultdict(list)
    totals = []
    embedder = get_embedder("auto")
    with DisclosureController.from_profile("default", data_dir=path, embedder=embedder) as ctl:
        _wrap(type(ctl.analyzer), "analyze", "analyze")
        _wrap(type(ctl.budget), "decide", "budget")
        _wrap(type(ctl.store._archive), "get_indexed", "archive: read the warm hits")
        _wrap(type(ctl.store._archive), "search", "archive: BM25")
        for probe in probes[-20:]:
            ctl.disclose(probe, now=NOW, level=args.level)
        before = _thread_cpu()
        for probe in probes[: args.queries]:
            _marks.clear()
            _origin[0] = time.perf_counter()
            ctl.disclose(probe, now=NOW, level=args.level)
            totals.append((time.perf_counter() - _origin[0]) * 1000)
            for label, at in _marks.items():
                marks[label].append(at)
        after = _thread_cpu()
        names = {str(t.native_id): t.name for t in threading.enumerate()}
    print(f"{args.queries} queries at {args.level}, load {os.getloadavg()[0]:.2f}")
    print(f"median total {statistics.median(totals):.2f} ms; ms since disclose began (medians):")
    for label, values in sorted(marks.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"  {statistics.median(values):7.2f}  {label}")
    tick = os.sysconf("SC_CLK_TCK")
    per_thread: collections.Counter[str] = collections.Counter()
    for tid, used in after.items():
        name = names.get(tid, "native (onnxruntime, Chroma)").rstrip("0123456789_")
        per_thread[name] += used - before.get(tid, 0)
    print("CPU per query by thread (ms):")
    for name, used in per_thread.most_common():
        if used:
            print(f"  {used / tick * 1000 / args.queries:6.2f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

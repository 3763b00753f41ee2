"""Per-item overhead of every built-in formatter on the bundled sample conversation (cl100k).

Overhead is what a formatter spends beyond the memories' own text: citations, speakers, dates,
headers, separators. All 38 sample memories are rendered at the detail layer (every formatter
then shows each memory's full content) with a budget that fits them all, with citations on
(``[mem:xxxxxx]``, six characters, as the archive makes them) and off:

    overhead per item = (tokens(text) - sum(tokens(content))) / items

At the index layer, the figure is the whole text's tokens per item (summaries included). The
wrapper's own tokens and the render time (median of 20 runs) are reported beside. Prints a table
and writes benchmarks/results/formatter_overhead.json.

    python -m benchmarks.formatter_overhead      (from the repository root)
"""

from __future__ import annotations

import base64
import hashlib
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from disclosure.sample import load_sample_conversation
from formatters import (
    FORMATTERS,
    Layer,
    RenderItem,
    WrapperInfo,
    get_formatter,
    get_token_counter,
    wrapper_overhead,
)
from tiers.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)
BIG = 100_000


def _cite(memory_id: str) -> str:
    digest = hashlib.sha256(memory_id.encode("utf-8")).digest()
    return "mem:" + base64.urlsafe_b64encode(digest).decode("ascii")[:6]


def _items(memories: list[Memory], layer: Layer, *, citations: bool) -> list[RenderItem]:
    return [
        RenderItem(memory=m, citation=_cite(m.id) if citations else "", score=0.5, layer=layer)
        for m in memories
    ]


def main() -> int:
    counter = get_token_counter("cl100k_base")
    memories = load_sample_conversation()
    content_tokens = sum(counter(m.content) for m in memories)
    n = len(memories)
    rows = []
    for name in FORMATTERS.names():
        fmt = get_formatter(name)
        row: dict[str, object] = {"formatter": name}
        for citations in (True, False):
            out = fmt.render(
                _items(memories, Layer.DETAIL, citations=citations),
                budget=BIG,
                counter=counter,
                now=NOW,
            )
            assert len(out.items) == n and all(i.full for i in out.items), name
            key = "detail_overhead" + ("" if citations else "_no_cite")
            row[key] = round((out.tokens - content_tokens) / n, 1)
        index = fmt.render(
            _items(memories, Layer.INDEX, citations=True), budget=BIG, counter=counter, now=NOW
        )
        row["index_tokens_per_item"] = round(index.tokens / n, 1)
        items = _items(memories, Layer.DETAIL, citations=True)
        times = []
        for _ in range(20):
            start = time.perf_counter()
            fmt.render(items, budget=1000, counter=counter, now=NOW)
            times.append((time.perf_counter() - start) * 1000)
        row["render_ms_38_items_1000_budget"] = round(statistics.median(times), 2)
        rows.append(row)
    info = WrapperInfo(
        level="standard",
        signals=("temporal_reference",),
        complexity=0.4,
        full_history_tokens=content_tokens,
    )
    wrappers = {
        f"{style}{'+savings' if savings else ''}": wrapper_overhead(
            info, counter, style=style, savings=savings
        )
        for style in ("full", "compact", "none")
        for savings in (False, True)
    }
    print(f"sample conversation: {n} memories, {content_tokens} content tokens (cl100k)\n")
    print(f"{'formatter':<24}{'detail/item':>12}{'no cite':>9}{'index/item':>12}{'render ms':>11}")
    for row in rows:
        print(
            f"{row['formatter']:<24}{row['detail_overhead']:>12}{row['detail_overhead_no_cite']:>9}"
            f"{row['index_tokens_per_item']:>12}{row['render_ms_38_items_1000_budget']:>11}"
        )
    print("\nwrapper tokens reserved:", ", ".join(f"{k} {v}" for k, v in wrappers.items()))
    out = ROOT / "benchmarks" / "results" / "formatter_overhead.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "memories": n,
        "content_tokens": content_tokens,
        "formatters": rows,
        "wrapper_reserve": wrappers,
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the OpenAI-compatible proxy adds to a chat call, measured with the real ``openai`` SDK.

A stand-in upstream (a local HTTP server answering at once) is called N times directly, then N
times through ``disclosure serve``'s app (uvicorn on loopback, the lean profile: no warm tier)
with the bundled sample conversation in the caller's namespace. The difference per call is the
proxy's cost: disclosing, injecting, forwarding, recording both turns and the feedback. Also
times the mem0-style facade's ``add``, ``get_all`` (a page of 100) and ``search`` on 1,000
notes. Prints a table and writes benchmarks/results/proxy_overhead.json.

    python -m benchmarks.proxy_overhead [N]      (from the repository root)
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402

from disclosure import ControllerPool  # noqa: E402
from disclosure.faces.api import create_app  # noqa: E402
from disclosure.faces.memories import Memories  # noqa: E402
from disclosure.sample import load_sample_conversation  # noqa: E402
from tests.disclosure.conftest import make_lean_profile  # noqa: E402
from tests.disclosure.faces.api.test_proxy import serve  # noqa: E402
from tests.disclosure.faces.upstream import UPSTREAM_KEY, start_upstream  # noqa: E402

QUESTION = "Which database did we pick for billing, and who writes the migration?"


def timed(action: Callable[[], Any], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    upstream, stop_upstream = start_upstream()
    root = tempfile.mkdtemp(prefix="proxy-bench-")
    results: dict[str, Any] = {"runs": runs, "profile": "lean (default without a warm tier)"}
    with ControllerPool(make_lean_profile(), root=root) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        url, stop = serve(create_app(pool=pool, upstream=upstream.url))
        try:
            direct = openai.OpenAI(base_url=upstream.url, api_key=UPSTREAM_KEY, max_retries=0)
            proxied = openai.OpenAI(
                base_url=f"{url}/v1",
                api_key=UPSTREAM_KEY,
                max_retries=0,
                default_headers={"X-Disclosure-User": "dana", "X-Disclosure-Level": "standard"},
            )
            messages = [{"role": "user", "content": QUESTION}]

            def call(client: Any) -> Callable[[], Any]:
                return lambda: client.chat.completions.create(model="m", messages=messages)

            timed(call(proxied), 3)  # warm up
            results["direct"] = summary(timed(call(direct), runs))
            results["proxied"] = summary(timed(call(proxied), runs))
        finally:
            stop()
            stop_upstream()
        facade = Memories(pool)
        start = datetime(2026, 1, 1, tzinfo=UTC)
        notes = iter(range(10_000))

        def add() -> None:
            n = next(notes)
            facade.add(
                f"note {n} about topic {n % 37}",
                user_id="bench",
                timestamp=start + timedelta(minutes=n),
            )

        results["facade_add"] = summary(timed(add, 1000))
        results["facade_get_all_100"] = summary(
            timed(lambda: facade.get_all(user_id="bench", limit=100), runs)
        )
        results["facade_search_10"] = summary(
            timed(lambda: facade.search("topic 12", user_id="bench", limit=10), runs)
        )
    overhead = results["proxied"]["p50_ms"] - results["direct"]["p50_ms"]
    results["proxy_overhead_p50_ms"] = round(overhead, 2)
    results["when"] = datetime.now(UTC).isoformat(timespec="seconds")
    print(f"{'measure':<22} {'p50 ms':>8} {'p95 ms':>8}")
    for name in ("direct", "proxied", "facade_add", "facade_get_all_100", "facade_search_10"):
        print(f"{name:<22} {results[name]['p50_ms']:>8} {results[name]['p95_ms']:>8}")
    print(f"proxy overhead per call (p50): {overhead:.1f} ms")
    out = ROOT / "benchmarks" / "results" / "proxy_overhead.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How long moving a namespace takes (a script, not a test): prints figures, writes JSON.

    python -m benchmarks.transfer_bench                  # 5,000 memories, archive only
    python -m benchmarks.transfer_bench --n 2000 --embed # with the real embedder (warm index)

Fills a namespace with synthetic chat turns (``benchmarks/corpus.py``), every tenth one replaced
once (a second version), then times ``disclosure.core.transfer``: export to a file, import into an
empty namespace of another root (``--embed``: the default profile, which embeds every memory
into its warm index during the import; otherwise the warm tier is off), and a second export,
checking it equals the first but for ``replaced_at``. The source's own ingest of the same
memories is timed too: with the warm index, both are bound by the embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from benchmarks.corpus import generate  # noqa: E402
from disclosure import Profile, load_profile  # noqa: E402
from disclosure.core.transfer import export_namespace, import_namespace, read_export  # noqa: E402
from disclosure.service.pool import ControllerPool  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
REPLACED_AT = re.compile(r'"replaced_at":"[^"]+"')


def profile(embed: bool) -> Profile:
    data = load_profile("default").model_dump(mode="json")
    if not embed:
        data["tiers"]["warm"]["embedder"] = "none"
    return Profile.model_validate(data)


def export_to(pool: ControllerPool, path: Path) -> float:
    namespace = pool.namespace(user="bench")
    with pool.lease(namespace) as c, path.open("w", encoding="utf-8") as out:
        start = time.perf_counter()
        export_namespace(c, out, namespace=namespace.as_dict())
        return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--embed", action="store_true", help="the real embedder, warm index on")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    chosen = profile(args.embed)
    turns = list(generate(args.n, seed=3))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with ControllerPool(chosen, root=root / "a") as pool:
            with pool.lease(pool.namespace(user="bench")) as c:
                start = time.perf_counter()
                c.ingest(turns)
                c.ingest([t.replace(content=t.content + " (edited)") for t in turns[::10]])
                ingest_s = time.perf_counter() - start
            first = root / "first.jsonl"
            export_s = export_to(pool, first)
        with ControllerPool(chosen, root=root / "b") as pool:
            start = time.perf_counter()
            with first.open(encoding="utf-8") as lines:
                export = read_export(lines)
            read_s = time.perf_counter() - start
            with pool.lease(pool.namespace(user="bench")) as c:
                start = time.perf_counter()
                report = import_namespace(c, export)
                import_s = time.perf_counter() - start
            second = root / "second.jsonl"
            export_to(pool, second)
        same = REPLACED_AT.sub("", first.read_text()) == REPLACED_AT.sub("", second.read_text())
        size = first.stat().st_size
    figures = {
        "memories": args.n,
        "versions": report.versions,
        "file_mb": round(size / 1e6, 2),
        "export_s": round(export_s, 2),
        "read_and_check_s": round(read_s, 2),
        "import_s": round(import_s, 2),
        "import_memories_per_s": round(args.n / import_s, 1),
        "ingest_s_same_memories": round(ingest_s, 2),  # the source's own ingest, for scale
        "round_trip_identical_but_replaced_at": same,
    }
    print(json.dumps(figures, indent=2))
    result = {
        "benchmark": "transfer_bench",
        "command": "python -m benchmarks.transfer_bench " + " ".join(argv or sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "warm_index": args.embed,
        **figures,
    }
    name = "transfer_bench_embed.json" if args.embed else "transfer_bench.json"
    out = args.out or RESULTS / name
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

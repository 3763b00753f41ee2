"""Whether two checkouts give the same answers: ``disclose`` over the 10k scenario, compared.

    python -m benchmarks.answers_ab BEFORE_CHECKOUT [AFTER_CHECKOUT] [--queries 150]

A change made for speed must not change what is disclosed. Each checkout answers the same
queries (distinct probes of the ``warm-10000`` directory, at each of the four levels, ``now``
fixed, no cache) in a fresh process with its code first on ``sys.path``; an answer is its text,
its items (id, layer) and its token count, and agrees when all of these are the same; the
items' scores are compared apart (the largest difference is printed), since an embedder run
another way (the fused ONNX export) moves them in the seventh decimal without changing what
is shown. Prints how many agree and writes
benchmarks/results/answers_ab.json. The data directory is this checkout's (built by
:mod:`benchmarks.run` first); the other checkout reads it through a symbolic link, as
:mod:`benchmarks.latency_ab` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from benchmarks.latency_ab import run_in_checkout

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ("minimal", "standard", "detailed", "comprehensive")
FIRST_PROBE = 1_000  # past the probes benchmarks.run times, so its runs and these differ


def answers(queries: int) -> list[tuple[str, list[float]]]:
    """This process's answers (digest, items' scores), in a fixed order."""
    import shutil

    from benchmarks.datadirs import built, warm_dir
    from benchmarks.run import NOW
    from disclosure.core.controller import DisclosureController
    from tiers import get_embedder

    path = warm_dir(10_000)
    record = built(path)
    if record is None:
        raise SystemExit(f"{path} is not built: python -m benchmarks.run --phase build warm-10000")
    shutil.rmtree(path / "cache", ignore_errors=True)
    (path / "usage.sqlite3").unlink(missing_ok=True)
    probes = record["probes"][FIRST_PROBE : FIRST_PROBE + queries]
    out = []
    embedder = get_embedder("auto")
    with DisclosureController.from_profile("default", data_dir=path, embedder=embedder) as ctl:
        for level in LEVELS:
            for probe in probes:
                r = ctl.disclose(probe, now=NOW, level=level)
                items = [(i.id, str(i.layer)) for i in r.items]
                blob = json.dumps([r.text, items, r.tokens_used]).encode("utf-8")
                out.append((hashlib.sha256(blob).hexdigest(), [i.score for i in r.items]))
    return out


def _run(checkout: Path, queries: int) -> list[tuple[str, list[float]]]:
    # this file's answers(), run with the checkout's packages (an older one lacks this file)
    script = str(ROOT / "benchmarks" / "answers_ab.py")
    code = (
        f"import json, runpy; a = runpy.run_path({script!r}); "
        f"print(json.dumps(a['answers']({queries})))"
    )
    got = run_in_checkout(checkout, ["-c", code], "answering")
    return [(digest, scores) for digest, scores in got]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=ROOT)
    parser.add_argument("--queries", type=int, default=150)
    args = parser.parse_args(argv)
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    got = {name: _run(path, args.queries) for name, path in sides.items()}
    agree = [a[0] == b[0] for a, b in zip(got["before"], got["after"], strict=True)]
    same = sum(agree)
    per_level = {
        level: sum(agree[n * args.queries : (n + 1) * args.queries])
        for n, level in enumerate(LEVELS)
    }
    drift = max(
        (
            abs(x - y)
            for a, b, ok in zip(got["before"], got["after"], agree, strict=True)
            if ok
            for x, y in zip(a[1], b[1], strict=True)
        ),
        default=0.0,
    )
    total = len(got["before"])
    print(f"identical answers: {same} of {total} ({per_level})")
    print(f"largest score difference among them: {drift:.2e}")
    out = ROOT / "benchmarks" / "results" / "answers_ab.json"
    record = {
        "sides": {k: str(v) for k, v in sides.items()},
        "queries_per_level": args.queries,
        "identical": same,
        "answers": total,
        "identical_per_level": per_level,
        "largest_score_difference": drift,
    }
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())

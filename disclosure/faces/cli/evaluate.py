"""``disclosure eval``: profiles and baselines, A/B/n, over a dataset, with a report.

An experiment file gives everything (``--experiment configs/ab/locomo-dev.yaml``); flags give it
or override the file's values. Exit codes: 0 done, 1 an error, 2 a usage mistake, 3 the run
finished but some result broke its budget (the report says which, loudly).
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path
from typing import Any

EXIT_VIOLATIONS = 3


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "eval",
        aliases=["evaluate"],
        help="compare profiles and baselines on a dataset (A/B/n)",
        description="Run profiles and baselines over a dataset and write a comparison report.",
    )
    parser.add_argument("--experiment", type=Path, help="an experiment YAML (configs/ab/*.yaml)")
    parser.add_argument("--name", help="the experiment's name (default: the file's stem)")
    systems = parser.add_argument_group("systems (replace the file's lists when given)")
    systems.add_argument("--profile", action="append", help="a profile name or path; repeatable")
    systems.add_argument(
        "--baseline", action="append", help="full, recency, bm25, dense, hybrid or all; repeatable"
    )
    systems.add_argument("--budget", action="append", type=int, help="baseline budget; repeatable")
    systems.add_argument("--reference", help="the system the others are compared against")
    systems.add_argument(
        "--baselines-only", action="store_true", help="skip the profiles (no controller needed)"
    )
    systems.add_argument(
        "--reader",
        choices=("cite-gold",),
        help="a simulated reader whose replies go back through feedback (--profile systems)",
    )
    systems.add_argument(
        "--adaptive",
        choices=("learn", "start", "ceiling"),
        help="the --profile systems' budget: learned, kept at its start, or the level ceiling",
    )
    systems.add_argument(
        "--match-tokens",
        metavar="PROFILE",
        help="also run the budgeted baselines at this profile's mean context tokens",
    )
    systems.add_argument(
        "--oracle",
        action="store_true",
        help="also run each profile at every fixed level; report the analyzer's oracle level",
    )
    data = parser.add_argument_group("data")
    data.add_argument(
        "--dataset", type=Path, help="a LoCoMo JSON file, a LongMemEval JSONL(.gz), or JSONL"
    )
    data.add_argument(
        "--format",
        choices=("locomo", "longmemeval", "jsonl"),
        help="the dataset's format (default: read from the file: LongMemEval rows carry "
        "haystack_sessions; other *.jsonl files and directories are jsonl; else locomo)",
    )
    data.add_argument("--categories", help="comma-separated codes or names, or 'all'")
    data.add_argument("--limit-questions", type=int, help="a seeded sample of N questions")
    stats = parser.add_argument_group("statistics")
    stats.add_argument("--seed", type=int, help="seed for sampling and the bootstrap")
    stats.add_argument("--resamples", type=int, help="bootstrap resamples (default 2000)")
    stats.add_argument("--bootstrap-unit", choices=("questions", "conversations"))
    out = parser.add_argument_group("output")
    out.add_argument("--out", type=Path, help="report directory (default: results/<name>)")
    out.add_argument("--work", type=Path, help="keep the data directories here (default: temp)")
    out.add_argument("--no-plots", action="store_true", help="skip the plots (no matplotlib)")
    out.add_argument(
        "--embedding-cache",
        type=Path,
        help="keep the vectors of ingested turns in this SQLite file and reuse them across "
        "systems and runs (queries are always embedded afresh, so latencies stay real)",
    )
    out.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    from disclosure.evaluation.loading import load_dataset
    from disclosure.evaluation.report import build_report, render_markdown, write_report
    from disclosure.evaluation.runner import experiment_systems, run_experiment

    experiment = _experiment(args)
    dataset = load_dataset(experiment.dataset, seed=experiment.seed)
    cache = _embedding_cache(args.embedding_cache)
    systems = experiment_systems(experiment, baselines_only=args.baselines_only, embedder=cache)
    print(
        f"{experiment.name}: {len(systems)} systems x {len(dataset.questions)} questions "
        f"({len(dataset.issues)} dataset repairs/warnings)",
        file=sys.stderr,
    )
    run = run_experiment(
        experiment,
        dataset,
        systems,
        work_dir=args.work,
        progress=False if args.no_progress else None,
        cache=cache,
    )
    report = build_report(run, with_plots=not args.no_plots)
    out = args.out or Path("results") / experiment.name
    paths = write_report(report, out)
    print(render_markdown(report).split("\n## Evidence recall per category")[0])
    print(f"report: {paths['markdown']}  {paths['html']}  {paths['json']}", file=sys.stderr)
    if run.violations:
        print(
            f"disclosure: BUDGET VIOLATIONS: {len(run.violations)} results over budget "
            f"(see {paths['markdown']})",
            file=sys.stderr,
        )
        return EXIT_VIOLATIONS
    return 0


def _embedding_cache(path: Path | None) -> Any:
    if path is None:
        return None
    from disclosure.evaluation.embedding import DocumentVectorCache
    from tiers.embedders import get_embedder

    return DocumentVectorCache(get_embedder("auto"), path)


def _experiment(args: argparse.Namespace) -> Any:
    from disclosure.evaluation.experiment import load_experiment, validate_experiment
    from disclosure.faces.cli.common import UsageError

    if args.experiment is None and not (args.profile or args.baseline):
        raise UsageError("eval: give --experiment FILE, or --profile/--baseline flags")
    data: dict[str, Any] = {}
    where = "command line"
    if args.experiment is not None:
        data = load_experiment(args.experiment).model_dump(exclude_unset=True)
        where = f"{args.experiment} (with the command line's flags)"
    _override(data, args)
    return validate_experiment(data, where=where)


def _override(data: dict[str, Any], args: argparse.Namespace) -> None:
    top = {
        "name": args.name,
        "profiles": _profiles(args),
        "baselines": args.baseline,
        "budgets": args.budget,
        "reference": args.reference,
        "seed": args.seed,
        "oracle": True if args.oracle else None,
        "match_tokens": args.match_tokens,
    }
    data.update({k: v for k, v in top.items() if v is not None})
    dataset = dict(data.get("dataset") or {})
    categories = _categories(args.categories)
    fields = {
        "path": args.dataset,
        "format": args.format or _format_of(args.dataset),
        "categories": categories,
        "limit_questions": args.limit_questions,
    }
    dataset.update({k: v for k, v in fields.items() if v is not None})
    data["dataset"] = dataset
    boot = dict(data.get("bootstrap") or {})
    given = {"resamples": args.resamples, "unit": args.bootstrap_unit}
    boot.update({k: v for k, v in given.items() if v is not None})
    data["bootstrap"] = boot


def _profiles(args: argparse.Namespace) -> list[Any] | None:
    """``--profile`` names, with ``--reader`` and ``--adaptive`` applied to each."""
    if not args.profile:
        if args.reader or args.adaptive:
            from disclosure.faces.cli.common import UsageError

            raise UsageError("eval: --reader and --adaptive apply to --profile systems")
        return None
    extra = {"reader": args.reader, "adaptive": args.adaptive}
    extra = {k: v for k, v in extra.items() if v is not None}
    return [{"profile": name, **extra} if extra else name for name in args.profile]


def _format_of(path: Path | None) -> str | None:
    """``longmemeval`` for JSON Lines whose first row has ``haystack_sessions``, ``jsonl`` for
    other ``.jsonl`` files and directories; otherwise the experiment's (or default) format."""
    if path is None:
        return None
    if path.is_dir():
        return "jsonl"
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        return "longmemeval" if _first_line_has(path, '"haystack_sessions"') else "jsonl"
    return None


def _first_line_has(path: Path, marker: str) -> bool:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as stream:
            return marker in stream.readline(1 << 24)
    except (OSError, EOFError, UnicodeDecodeError):
        return False


def _categories(text: str | None) -> Any:
    if text is None:
        return None
    if text.strip().lower() == "all":
        return "all"
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return [int(p) if p.isdigit() else p for p in parts]

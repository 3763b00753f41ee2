"""``disclosure stats``: per tier counts, pending embeddings, disk; usage and budget history."""

from __future__ import annotations

import argparse
import json
from typing import Any

from disclosure.faces.cli.common import add_store_options, open_memory, print_warnings, root_of
from disclosure.storage.namespaces import iter_namespaces


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("stats", help="what a store holds, and what its budgets learned")
    parser.add_argument("--json", action="store_true", help="as JSON")
    parser.add_argument(
        "--all", action="store_true", help="list every namespace under the data directory"
    )
    add_store_options(parser)
    parser.set_defaults(handler=_stats)


def _stats(args: argparse.Namespace) -> int:
    if args.all:
        return _list_namespaces(args)
    with open_memory(args, create=False) as (memory, namespace, service):
        data = memory.stats()
    print_warnings(data.get("warnings") or ())  # a namespace nothing is stored in
    data["namespace"] = data.get("namespace") or namespace.as_dict()
    if service is not None:
        data["service"] = service
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    _print(data)
    return 0


def _print(data: dict[str, Any]) -> None:
    store = data["store"]
    where = data.get("data_dir") or (
        f"served by {data['service']}" if data.get("service") else "nothing stored"
    )
    named = ", ".join(f"{k}={v!r}" for k, v in data["namespace"].items()) or "(shared)"
    print(f"namespace {named} · profile {data['profile']} · {where}")
    warm = "-" if store["warm"] is None else store["warm"]
    print(
        f"tiers: hot {store['hot']} · warm {warm} · cold {store['cold']} "
        f"({store['cold_only']} cold only) · {store['pending']} waiting for embedding"
    )
    print(
        f"disk: {_mb(store['disk_bytes'])} ({_mb(store['archive_bytes'])} archive) · "
        f"cold engine {store['cold_engine']} · embedder {store['warm_embedder'] or 'none'}"
    )
    print(f"full history: {data['full_history_tokens']} tokens")
    caches = " · ".join(
        f"{name} {c['entries']} ({c['hits']} hits)" for name, c in data["caches"].items()
    )
    print(f"caches: {caches}")
    head = ("replies", "budget", "used", "depth")
    print(f"{'level':<14} {head[0]:>7} {head[1]:>8} {head[2]:>8} {head[3]:>8} {'share':>6} learned")
    for level, row in data["usage"].items():
        cells = [_cell(row[k]) for k in ("mean_budget", "mean_tokens_used", "mean_depth")]
        share = _cell(row["used_share"])
        print(
            f"{level:<14} {row['replies']:>7} {cells[0]:>8} {cells[1]:>8} {cells[2]:>8} "
            f"{share:>6} {'yes' if row['learned'] else 'no'}"
        )


def _list_namespaces(args: argparse.Namespace) -> int:
    root = root_of(args)
    rows: list[dict[str, Any]] = []
    for parts, directory in iter_namespaces(root):
        size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
        rows.append({"namespace": parts, "directory": str(directory), "disk_bytes": size})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no namespaces under {root}")
    for row in rows:
        named = ", ".join(f"{k}={v!r}" for k, v in row["namespace"].items()) or "(shared)"
        print(f"{named:<40} {_mb(row['disk_bytes']):>10}  {row['directory']}")
    return 0


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB"

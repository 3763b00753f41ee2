"""``disclosure query TEXT`` (the context for a query) and ``disclosure show REF``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

from disclosure.faces.cli.common import (
    add_store_options,
    open_memory,
    print_warnings,
    terminal_safe,
)

# DisclosureLevel's values (a test keeps them equal): naming them here spares every command the
# analyzer's import
LEVELS = ("minimal", "standard", "detailed", "comprehensive")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    query = sub.add_parser("query", help="print the context disclosed for a query")
    query.add_argument("text", help="the query")
    query.add_argument("--level", choices=LEVELS)
    query.add_argument("--budget", type=int, help="tokens (default: the adaptive budget)")
    query.add_argument("--history", action="append", default=[], help="an earlier user turn")
    query.add_argument("--now", type=datetime.fromisoformat, help="ISO time the query is asked")
    query.add_argument("--context-window", type=int, help="the model's context window")
    query.add_argument("--json", action="store_true", help="the whole result as JSON")
    add_store_options(query)
    query.set_defaults(handler=_query)

    show = sub.add_parser("show", help="one memory in full, by citation (mem:xxxxxx) or id")
    show.add_argument("ref", help="a citation like mem:a7Bc3x, or a memory id")
    add_store_options(show)
    show.set_defaults(handler=_show)


def _query(args: argparse.Namespace) -> int:
    options = {
        "history": args.history,
        "now": args.now,
        "level": args.level,
        "budget": args.budget,
        "context_window": args.context_window,
    }
    with open_memory(args, create=False) as (memory, namespace, service):
        if service is not None:  # the service's answer as it comes: nothing more to load
            data = memory.disclose_response(args.text, **options)  # type: ignore[attr-defined]
        else:
            result = memory.disclose(args.text, **options)
            data = result.model_dump(mode="json")
            data.update(savings=round(result.savings, 3), savings_line=result.savings_line)
    print_warnings(data.get("warnings") or ())  # a namespace nothing is stored in, ...
    if args.json:
        data["namespace"] = data.get("namespace") or namespace.as_dict()
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    if data["text"]:
        print(terminal_safe(data["text"]))
    print(
        f"{data['level']} · {data['tokens_used']}/{data['budget']} tokens · {data['savings_line']}",
        file=sys.stderr,
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    with open_memory(args, create=False) as (memory, _, _):
        print(terminal_safe(memory.show(args.ref)))
    return 0

"""``disclosure consolidate``: summaries of what left the working set; ``disclosure citations``:
the citations replies used most, or where one was used."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from disclosure.faces.cli.common import add_store_options, open_store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "consolidate",
        help="consolidate memories that left the working set into summaries (idempotent)",
    )
    parser.add_argument(
        "--all", action="store_true", help="the working set's memories too (everything)"
    )
    parser.add_argument("--show", action="store_true", help="print the summaries' index lines")
    parser.add_argument("--json", action="store_true", help="as JSON")
    add_store_options(parser)
    parser.set_defaults(handler=_consolidate)

    cites = sub.add_parser("citations", help="the citations replies used most, or where one was")
    cites.add_argument("--top", type=int, default=10, metavar="N", help="how many (default 10)")
    cites.add_argument("--where", metavar="REF", help="where this memory (id or citation) was used")
    cites.add_argument("--json", action="store_true", help="as JSON")
    add_store_options(cites)
    cites.set_defaults(handler=_citations)


def _consolidate(args: argparse.Namespace) -> int:
    with open_store(args) as (controller, namespace):
        report = controller.consolidate(include_working_set=args.all)
        summaries = controller.consolidation.summaries.all() if args.show or args.json else []
        counts = controller.consolidation.summaries.count()
    if args.json:
        data = {
            "namespace": namespace.as_dict(),
            "report": asdict(report),
            "counts": counts,
            "summaries": [
                {**asdict(s), "start": s.start.isoformat(), "end": s.end.isoformat()}
                for s in summaries
            ],
        }
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(
        f"{namespace}: {report.memories} memories consolidated in {len(report.sessions)} "
        f"sessions; summaries written {report.written}, unchanged {report.unchanged}, "
        f"removed {report.removed}; now {counts['topic']} topic and {counts['session']} session "
        f"summaries over {counts['memories']} memories"
    )
    for warning in report.warnings:
        print(f"warning: {warning}")
    for summary in summaries:
        indent = "" if summary.kind == "session" else "  "
        print(f"{indent}{summary.id}  {summary.index_line}")
    return 0


def _citations(args: argparse.Namespace) -> int:
    with open_store(args) as (controller, namespace):
        if args.where:
            uses = controller.where_cited(args.where)
            rows = [{**asdict(u), "at": u.at.isoformat()} for u in uses]
        else:
            counts = controller.citations(top=args.top)
            rows = [{**asdict(c), "total": c.total, "last": c.last.isoformat()} for c in counts]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"{namespace}: no reply has used a citation yet (feedback records them)")
        return 0
    for row in rows:
        if args.where:
            print(
                f"{row['at']}  {row['how']:<6}  session {row['session_id'] or '-'}  {row['query']}"
            )
        else:
            print(
                f"[{row['citation']}]  cited {row['cited']:>3}  echoed {row['echoed']:>3}  "
                f"last {row['last']}  {row['memory_id']}"
            )
    return 0

"""``disclosure forget --id REF | --session S``: remove memories everywhere, after a yes.

``--id`` takes an id or a citation (``mem:a7Bc3x``, as ``query`` and ``show`` print them)."""

from __future__ import annotations

import argparse
import sys

from disclosure.cli.common import absent_namespace, add_store_options, open_store
from tiers.errors import InvalidInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("forget", help="remove memories by id or session, from every tier")
    parser.add_argument(
        "--id",
        action="append",
        default=[],
        dest="ids",
        metavar="REF",
        help="an id or a citation such as mem:a7Bc3x (repeatable)",
    )
    parser.add_argument("--session", help="remove a whole session")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_store_options(parser)
    parser.set_defaults(handler=_forget)


def _forget(args: argparse.Namespace) -> int:
    if not args.ids and args.session is None:
        raise InvalidInputError("forget needs --id ID (repeatable) or --session SESSION")
    absent = absent_namespace(args)
    if absent is not None:
        print(f"nothing to forget in {absent}: no such memories")
        return 0
    with open_store(args) as (controller, namespace):
        found = [controller.resolve(ref) for ref in args.ids]  # ids or citations
        ids = [m.id for m in found if m is not None]
        if args.session is not None:
            ids += controller.store.ids_in_session(args.session)
        targets = list(dict.fromkeys(ids))
        if not targets:
            print(f"nothing to forget in {namespace}: no such memories")
            return 0
        question = f"forget {len(targets)} memories from {namespace}? [y/N] "
        if not args.yes and not _confirmed(question):
            print("disclosure: not confirmed; nothing forgotten", file=sys.stderr)
            return 1
        report = controller.forget(ids=ids or None, session_id=args.session)
    sessions = ", ".join(report.sessions) or "-"
    print(f"forgot {report.count} memories (sessions: {sessions}) from {namespace}")
    return 0


def _confirmed(question: str) -> bool:
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")

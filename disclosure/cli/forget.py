"""``disclosure forget --id ID | --session S``: remove memories everywhere, after a yes."""

from __future__ import annotations

import argparse
import sys

from disclosure.cli.common import add_store_options, open_memory
from tiers.errors import InvalidInputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("forget", help="remove memories by id or session, from every tier")
    parser.add_argument("--id", action="append", default=[], dest="ids", help="repeatable")
    parser.add_argument("--session", help="remove a whole session")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_store_options(parser)
    parser.set_defaults(handler=_forget)


def _forget(args: argparse.Namespace) -> int:
    if not args.ids and args.session is None:
        raise InvalidInputError("forget needs --id ID (repeatable) or --session SESSION")
    with open_memory(args) as (memory, namespace, service):
        store = getattr(memory, "store", None)
        if store is not None:  # a store opened here: say how many before asking
            ids = [m.id for m in store.get(args.ids)]
            if args.session is not None:
                ids += store.ids_in_session(args.session)
            targets = list(dict.fromkeys(ids))
            if not targets:
                print(f"nothing to forget in {namespace}: no such memories")
                return 0
            what = f"{len(targets)} memories"
        else:
            named = [f"id {i}" for i in args.ids]
            if args.session is not None:
                named.append(f"session {args.session}")
            what = ", ".join(named) + f" (through the service at {service})"
        question = f"forget {what} from {namespace}? [y/N] "
        if not args.yes and not _confirmed(question):
            print("disclosure: not confirmed; nothing forgotten", file=sys.stderr)
            return 1
        report = memory.forget(ids=args.ids or None, session_id=args.session)
    if not report.count:
        print(f"nothing to forget in {namespace}: no such memories")
        return 0
    sessions = ", ".join(report.sessions) or "-"
    print(f"forgot {report.count} memories (sessions: {sessions}) from {namespace}")
    return 0


def _confirmed(question: str) -> bool:
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")

"""``disclosure forget --id ID | --session S | --all``: remove memories everywhere, after a yes.

Forgetting erases: the text leaves every file of the namespace (see :mod:`tiers.erasure`).
``--all`` removes the namespace's whole directory.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import TYPE_CHECKING

from disclosure.core.empty import nothing_stored
from disclosure.faces.cli.common import (
    add_store_options,
    namespace_of,
    open_memory,
    pool_of,
    print_warnings,
    root_of,
)
from disclosure.storage.namespaces import Namespace, namespace_dir
from tiers.errors import InvalidInputError

if TYPE_CHECKING:
    from disclosure.service.pool import ControllerPool


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
    parser.add_argument(
        "--all", action="store_true", help="remove the whole namespace (its directory)"
    )
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_store_options(parser)
    parser.set_defaults(handler=_forget)


def _forget(args: argparse.Namespace) -> int:
    if args.all:
        if args.ids or args.session is not None:
            raise InvalidInputError("forget --all removes everything; give no --id or --session")
        return _forget_all(args)
    if not args.ids and args.session is None:
        raise InvalidInputError("forget needs --id ID (repeatable), --session SESSION or --all")
    if not _served(args):
        with pool_of(args, max_open=1) as pool:
            namespace = namespace_of(pool, args)
            if not pool.exists(namespace):  # nothing to forget, and nothing to create
                return _nothing_stored(pool, namespace)
    with open_memory(args, create=False) as (memory, namespace, service):
        store = getattr(memory, "store", None)
        resolve = getattr(memory, "resolve", None)
        if store is not None and resolve is not None:  # a store opened here: count, then ask
            found = [resolve(ref) for ref in args.ids]  # ids or citations
            ids = [m.id for m in found if m is not None]
            if args.session is not None:
                ids += store.ids_in_session(args.session)
            targets = list(dict.fromkeys(ids))
            if not targets:
                print(f"nothing to forget in {namespace}: no such memories")
                return 0
            what = f"{len(targets)} memories"
        else:  # the service resolves ids and citations alike
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


def _nothing_stored(pool: ControllerPool, namespace: Namespace) -> int:
    print(f"nothing to forget in {namespace}")
    print_warnings([nothing_stored(namespace, root=pool.root, first="ingest")])
    return 0


def _served(args: argparse.Namespace) -> bool:
    from disclosure.service import find_service, service_disabled

    return not service_disabled() and find_service(root_of(args)) is not None


def _confirmed(question: str) -> bool:
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _forget_all(args: argparse.Namespace) -> int:
    with pool_of(args, max_open=1) as pool:
        namespace = namespace_of(pool, args)
        directory = namespace_dir(pool.root, namespace)
        if not pool.exists(namespace):
            return _nothing_stored(pool, namespace)
        with pool.lease(namespace) as controller:  # waits for the store's lock: none in use
            count = controller.store.count()
        question = f"forget all {count} memories of {namespace} and delete {directory}? [y/N] "
        if not args.yes and not _confirmed(question):
            print("disclosure: not confirmed; nothing forgotten", file=sys.stderr)
            return 1
        profile = pool.profile
    from disclosure.service.vector_server import drop_server_vectors
    from tiers.backends import drop_from_database  # the archive's modules (numpy): not at start

    drop_server_vectors(profile, directory)  # on a Chroma server they are not in the directory
    shutil.rmtree(directory)
    where = "its directory removed"
    if drop_from_database(pool.profile.tiers, directory.name):
        where += ", and its schema from the PostgreSQL archive"
    print(f"forgot {namespace}: {count} memories, {where}")
    return 0

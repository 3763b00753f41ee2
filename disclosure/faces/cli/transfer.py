"""``disclosure export`` / ``disclosure import``: move a namespace between stores as JSON Lines.

The format and the rules are :mod:`disclosure.core.transfer`'s. ``import`` checks the whole file
first (a bad line names its number and nothing is imported), then writes into the namespace the
options name, or, without namespace options, the one the export came from.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from disclosure.faces.cli.common import add_store_options, describe, open_store, root_of
from disclosure.storage.namespaces import NAMESPACE_PARTS

EXIT_CONFLICTS = 1
IMPORT_FORMATS = ("auto", "export", "claude-code", "chatgpt")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export",
        help="write a namespace (every memory and version, participants, usage) as JSON Lines",
        description="Export one namespace: every memory with every version the archive keeps, "
        "the participants, the citation log and the adaptive budget's usage history. Forgotten "
        "memories are not in it. Import it elsewhere with `disclosure import`.",
    )
    export.add_argument(
        "-o", "--output", type=Path, help="the file to write (default: standard output)"
    )
    add_store_options(export)
    export.set_defaults(handler=_export)

    imp = sub.add_parser(
        "import",
        help="read a namespace written by `disclosure export`, agent transcripts or a ChatGPT "
        "export",
        description="Import an export into a namespace (the options', else the one it came "
        "from). The file is checked first: a bad or truncated one imports nothing. A namespace "
        "that already holds memories is refused unless --merge. Also reads history: Claude "
        "Code's transcripts (a session's .jsonl, or a directory of them such as "
        "~/.claude/projects/PROJECT; each session into its project's namespace unless the "
        "namespace options name one) and a ChatGPT export (conversations.json); importing the "
        "same file twice changes nothing.",
    )
    imp.add_argument(
        "file", type=Path, help="an export file ('-': standard input), a transcript or directory"
    )
    imp.add_argument(
        "--format",
        choices=IMPORT_FORMATS,
        default="auto",
        help="export (of `disclosure export`), claude-code (transcripts), chatgpt "
        "(conversations.json); default: from the content",
    )
    imp.add_argument(
        "--merge",
        action="store_true",
        help="into a namespace with memories: add new ids, skip identical ones, report (and "
        "leave as they are) ids stored with another record; exits 1 if any conflict",
    )
    add_store_options(imp)
    imp.set_defaults(handler=_import)


def _refuse_behind_a_service(args: argparse.Namespace, command: str) -> None:
    """Export and import open the store themselves: on a root whose local service runs, an
    import would write behind its back (its hot sets and caches would never see it), and an
    export would read stores the service may be writing. Refused, before anything is opened."""
    from disclosure.service import find_service
    from tiers.errors import ServiceError

    root = root_of(args)
    info = find_service(root)
    if info is not None:
        raise ServiceError(
            f"the local service (pid {info.pid}, {info.url}) owns {root}: `disclosure "
            f"{command}` opens the store itself and would go behind its back; stop the service "
            f"first (`disclosure service stop --root {root}`) and run it again, or go through "
            "the service (the other commands, MemoryClient.for_root) instead"
        )


def _export(args: argparse.Namespace) -> int:
    from disclosure.core.transfer import export_namespace

    _refuse_behind_a_service(args, "export")
    with open_store(args, create=False) as (controller, namespace):
        if args.output is None:
            report = export_namespace(controller, sys.stdout, namespace=namespace.as_dict())
        else:
            temporary = args.output.with_name(f".{args.output.name}.{os.getpid()}.tmp")
            try:
                with temporary.open("w", encoding="utf-8") as out:
                    report = export_namespace(controller, out, namespace=namespace.as_dict())
                temporary.replace(args.output)  # a failed export leaves no partial file
            finally:
                temporary.unlink(missing_ok=True)
    where = "standard output" if args.output is None else str(args.output)
    print(
        f"exported {report.memories} memories ({report.versions} versions), "
        f"{report.participants} participants, {report.citation_use} citation uses, "
        f"{report.citation_reply + report.budget_reply} usage records, {report.summaries} "
        f"summaries of "
        f"{describe(namespace)} to {where}",
        file=sys.stderr,
    )
    return 0


def _import(args: argparse.Namespace) -> int:
    from disclosure.core.transfer import import_namespace, read_export

    kind = args.format
    if kind == "auto" and str(args.file) != "-":
        from disclosure.faces.agent.history import detect_format

        kind = detect_format(args.file)
    if kind in ("claude-code", "chatgpt"):
        from disclosure.faces.cli.history import import_history

        return import_history(args, kind)
    _refuse_behind_a_service(args, "import")
    if str(args.file) == "-":
        export = read_export(sys.stdin, source="standard input")
    else:
        with args.file.open(encoding="utf-8") as lines:
            export = read_export(lines, source=str(args.file))
    if not any(getattr(args, part) for part in NAMESPACE_PARTS):
        for part, value in export.namespace.items():
            if part in NAMESPACE_PARTS:
                setattr(args, part, value)
    with open_store(args, create=True) as (controller, namespace):
        report = import_namespace(controller, export, merge=args.merge)
    logs = report.logs
    print(
        f"imported {report.memories} memories ({report.versions} versions), "
        f"{report.participants} new participants, {logs['citation_use']} citation uses, "
        f"{logs['citation_reply'] + logs['budget_reply']} usage records, {report.summaries} "
        "summaries into "
        f"{describe(namespace)}"
    )
    if report.secrets:
        print(f"{report.secrets} secrets in the memories were replaced by [redacted:...] markers")
    if report.skipped:
        print(f"skipped {len(report.skipped)} memories already stored with the same record")
    if report.recoded:
        print(
            f"note: {len(report.recoded)} memories got another citation code (a collision "
            f"with one already here): {', '.join(report.recoded[:10])}"
        )
    if report.conflicts:
        print(
            f"disclosure: {len(report.conflicts)} memories are stored here with another record "
            f"and were left as they are: {', '.join(report.conflicts[:20])}"
            + (" ..." if len(report.conflicts) > 20 else ""),
            file=sys.stderr,
        )
        return EXIT_CONFLICTS
    return 0

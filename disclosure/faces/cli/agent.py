"""``disclosure agent install|uninstall|status claude-code`` and ``disclosure agent mcp``: this
memory inside a coding agent (:mod:`disclosure.faces.agent`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from disclosure.faces.agent.install import Layout, Report

AGENTS = ("claude-code",)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "agent",
        help="install this memory into a coding agent (Claude Code), or remove it",
        description="Install into Claude Code what it reads: hooks that capture each session "
        "and hand each prompt its memory, slash commands (/mem-search, /mem-show, /mem-forget, "
        "/mem-stats) and the MCP server entry; merged into your settings, recorded, and "
        "removed exactly by uninstall. One namespace per project unless --namespace.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (
        ("install", "write the hooks, slash commands and MCP entry (idempotent)"),
        ("uninstall", "remove exactly what install added"),
        ("status", "what is installed where, and whether the service runs"),
    ):
        one = actions.add_parser(action, help=text, description=text)
        one.add_argument("agent", choices=AGENTS)
        one.add_argument(
            "--scope",
            choices=("project", "user"),
            default="project",
            help="project: <project>/.claude and .mcp.json (default); user: ~/.claude",
        )
        one.add_argument("--project", type=Path, help="the project directory (default: here)")
        one.set_defaults(handler=_HANDLERS[action])
        if action == "install":
            _install_options(one)
    mcp = actions.add_parser(
        "mcp",
        help="the MCP server for the project the agent runs in (what the MCP entry runs)",
        description="Serve the project's memory to the agent over stdio (the namespace: "
        "--namespace, else the project's, from $CLAUDE_PROJECT_DIR or the working directory).",
    )
    _store_options(mcp)
    mcp.set_defaults(handler=_mcp)


def _install_options(parser: argparse.ArgumentParser) -> None:
    _store_options(parser)
    parser.add_argument(
        "--no-mcp", action="store_true", help="leave the MCP server entry out (hooks only)"
    )


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--namespace",
        help="NAME (the user part) or tenant=...,user=...; default: one per project, from its "
        "directory (project scope: fixed now; user scope: each project its own)",
    )
    parser.add_argument("--root", "--data-dir", type=Path, help="the data root (default: usual)")
    parser.add_argument(
        "--profile", default="coding-agent", help="the profile of a service the hooks start"
    )


def _layout(args: argparse.Namespace) -> Layout:
    from disclosure.faces.agent.install import layout

    return layout(args.scope, args.project)


def _install(args: argparse.Namespace) -> int:
    from disclosure.core.profiles import load_profile
    from disclosure.faces.agent.install import install
    from disclosure.faces.agent.project import parse_namespace, project_namespace
    from disclosure.faces.extras import require
    from disclosure.storage.namespaces import default_home

    require("server", "the hooks' local service")
    load_profile(args.profile)  # a typo is said now, not by the first hook
    place = _layout(args)
    namespace = args.namespace
    if namespace is not None:
        parse_namespace(namespace)
    elif place.scope == "project":
        namespace = project_namespace(place.base)["user"]
    root = (args.root or default_home()).expanduser().absolute()
    report = install(
        place, root=root, profile=args.profile, namespace=namespace, mcp=not args.no_mcp
    )
    _print(report)
    state = "installed" if report.changed else "already installed, nothing changed"
    print(
        f"claude-code ({place.scope} scope, {place.claude_dir}): {state}; memory in {root}, "
        f"{_whose(namespace)}; the first hook starts the service (profile {args.profile})"
    )
    return 0


def _whose(namespace: str | None) -> str:
    if namespace is None:
        return "one namespace per project"
    return f"namespace {namespace}" if "=" in namespace else f"namespace user={namespace}"


def _uninstall(args: argparse.Namespace) -> int:
    from disclosure.faces.agent.install import uninstall

    place = _layout(args)
    report = uninstall(place)
    _print(report)
    print(
        f"claude-code ({place.scope} scope): uninstalled; the memory itself is kept "
        "(`disclosure forget` erases it)"
    )
    return 0


def _status(args: argparse.Namespace) -> int:
    from disclosure.service import find_service

    place = _layout(args)
    try:
        record = json.loads(place.record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(f"claude-code ({place.scope} scope): not installed in {place.claude_dir}")
        return 3
    root = Path(record.get("root", "."))
    info = find_service(root)
    running = f"service at {info.url}" if info else "no service runs (the first hook starts it)"
    print(json.dumps({"scope": place.scope, "settings": str(place.settings), **record}, indent=2))
    print(f"memory in {root}: {running}")
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from disclosure.faces.agent.project import parse_namespace, project_dir, project_namespace
    from disclosure.faces.cli.serve import serve_mcp
    from disclosure.storage.namespaces import default_home

    parts = parse_namespace(args.namespace) if args.namespace else project_namespace(project_dir())
    served = argparse.Namespace(
        data_dir=args.root or default_home(),
        profile=args.profile,
        chroma_url=None,
        **{part: parts.get(part) for part in ("tenant", "user", "conversation")},
    )
    return serve_mcp(served)


def _print(report: Report) -> None:
    for line in report.changed:
        print(f"  + {line}")
    for line in report.kept:
        print(f"  = {line}")
    for line in report.notes:
        print(f"  ! {line}")


_HANDLERS = {"install": _install, "uninstall": _uninstall, "status": _status}

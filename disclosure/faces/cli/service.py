"""``disclosure service start|stop|status``: the local service that owns a data directory.

While it runs, ``ingest``, ``query``, ``show``, ``stats``, ``forget``, the MCP server and
``MemoryClient.for_root`` talk to it instead of opening the stores themselves, so they all share
one memory (and a command answers without loading the models).
"""

from __future__ import annotations

import argparse
import json
import sys

from disclosure.faces.cli.common import add_store_options, root_of
from disclosure.faces.extras import require


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "service",
        help="start, stop or check the local service that owns the data directory",
        description="Run `disclosure serve --service` in the background for the data directory "
        "($TIERED_DISCLOSURE_HOME or --root), so that every command, MCP server and script "
        "shares its memory. Its address, process id and access token are in ROOT/service.json "
        "(readable by you only); its log in ROOT/service.log.",
    )
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--port", type=int, default=0, help="start: default any free port")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait")
    parser.add_argument("--json", action="store_true", help="status as JSON")
    add_store_options(parser)
    parser.set_defaults(handler=_service)


def _service(args: argparse.Namespace) -> int:
    return {"start": _start, "stop": _stop, "status": _status}[args.action](args)


def _start(args: argparse.Namespace) -> int:
    from disclosure.service import start_service

    require("server", "disclosure service start")
    root = root_of(args)
    extra = ["--chroma-url", args.chroma_url] if args.chroma_url else []
    info, started = start_service(
        root, profile=args.profile, port=args.port, timeout=args.timeout, extra_args=extra
    )
    verb = "started" if started else "already running"
    print(f"service for {root} {verb}: {info.url} (pid {info.pid}, profile {info.profile!r})")
    return 0


def _stop(args: argparse.Namespace) -> int:
    from disclosure.service import stop_service

    root = root_of(args)
    info = stop_service(root, timeout=args.timeout)
    if info is None:
        print(f"no service runs for {root}")
    else:
        print(f"service for {root} stopped (pid {info.pid})")
    return 0


def _status(args: argparse.Namespace) -> int:
    from disclosure.service import find_service

    root = root_of(args)
    info = find_service(root)
    data = {"root": str(root), "running": info is not None, **(info.public() if info else {})}
    if info is not None:
        data["health"] = _health(info.url, info.token)
    if args.json:
        print(json.dumps(data, indent=2))
    elif info is None:
        print(f"no service runs for {root}")
    else:
        health = data["health"]
        state = (
            f"{health['open_namespaces']} namespaces open"
            if isinstance(health, dict)
            else f"not answering: {health}"
        )
        print(
            f"service for {root}: {info.url} (pid {info.pid}, profile {info.profile!r}, "
            f"since {info.started}); {state}"
        )
    return 0 if info is not None else 3  # 3: not running, as service managers report it


def _health(url: str, token: str) -> dict[str, object] | str:
    from disclosure.service.client import MemoryClient
    from tiers.errors import ServiceError

    with MemoryClient(url, api_key=token, timeout=5.0, retries=1) as client:
        try:
            return client.health()
        except ServiceError as exc:
            print(f"disclosure: warning: {exc}", file=sys.stderr)
            return str(exc)

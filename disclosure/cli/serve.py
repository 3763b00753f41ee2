"""``disclosure serve``: the HTTP API (uvicorn), or ``--mcp``: the MCP server on stdio."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from disclosure.cli.common import add_store_options, pool_of
from disclosure.extras import require

DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="run the HTTP API ([server] extra), or the MCP server on stdio (--mcp)",
        description="Serve the memory of every namespace under the data directory over HTTP "
        "(API keys from $TIERED_DISCLOSURE_API_KEYS or --api-key-file), or one namespace's "
        "memory to an MCP client over stdio (--mcp with --tenant/--user/--conversation).",
    )
    parser.add_argument("--mcp", action="store_true", help="the MCP server on stdio instead")
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}")
    parser.add_argument(
        "--api-key-file",
        type=Path,
        help="accepted API keys, one a line: KEY [tenant=NAME] [read-only] [label=NAME]",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name to serve besides the loopback ones (repeatable; '*': any)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API, e.g. https://app.example (repeatable)",
    )
    parser.add_argument("--max-open", type=int, help="stores kept open (default: the profile's)")
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    add_store_options(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    if args.mcp:
        return _serve_mcp(args)
    if args.tenant or args.user or args.conversation:
        from disclosure.cli.common import UsageError

        raise UsageError(
            "serve: the HTTP API takes the namespace per request (?user=...); "
            "--tenant/--user/--conversation are for --mcp"
        )
    require("server", "disclosure serve")
    import uvicorn

    from disclosure.api import create_app, load_api_keys

    keys = load_api_keys(args.api_key_file)
    if not keys and not _loopback(args.host):
        print(
            f"disclosure: warning: serving {args.host} without API keys; anyone who can reach "
            "it can read every namespace (set TIERED_DISCLOSURE_API_KEYS or --api-key-file)",
            file=sys.stderr,
        )
    pool = pool_of(args, max_open=args.max_open)
    hosts = [*args.allowed_host, *([] if _loopback(args.host) else [args.host])]
    if not _loopback(args.host) and not args.allowed_host:
        print(
            "disclosure: note: only requests whose Host header is a loopback name or "
            f"{args.host} are served; add --allowed-host NAME for the names clients use",
            file=sys.stderr,
        )
    app = create_app(pool=pool, api_keys=keys, allowed_hosts=hosts, cors_origins=args.cors_origin)
    auth = f"{len(keys)} API keys" if keys else "no authentication"
    print(
        f"disclosure: serving {pool.root} (profile {pool.profile.name!r}, {auth}) on "
        f"http://{args.host}:{args.port}  (viewer: /, API reference: /docs)",
        file=sys.stderr,
    )
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        pool.close()
    return 0


def _serve_mcp(args: argparse.Namespace) -> int:
    from disclosure.mcp.server import create_mcp_server

    with pool_of(args, max_open=1) as pool:
        parts = {"tenant": args.tenant, "user": args.user, "conversation": args.conversation}
        given = {k: v for k, v in parts.items() if v is not None}
        server = create_mcp_server(pool, namespace=given)
        print(
            f"disclosure: MCP server on stdio for {pool.namespace(given)} in {pool.root}",
            file=sys.stderr,
        )
        server.run("stdio")
    return 0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

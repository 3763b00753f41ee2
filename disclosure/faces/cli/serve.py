"""``disclosure serve``: the HTTP API (uvicorn), or ``--mcp``: the MCP server on stdio."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disclosure.faces.cli.common import UsageError, add_store_options, pool_of, root_of
from disclosure.faces.extras import require
from tiers.config import DATABASE_URL_VARIABLE
from tiers.errors import ServiceError

if TYPE_CHECKING:
    from disclosure.service.pool import ControllerPool

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
    parser.add_argument(
        "--service",
        action="store_true",
        help="as the local service that owns the data directory (what `disclosure service "
        "start` runs): writes its address and access token to a file there; port 0 by default",
    )
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (loopback)")
    parser.add_argument("--port", type=int, help=f"default: {DEFAULT_PORT} (--service: any free)")
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
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="an OpenAI-compatible base URL (https://api.openai.com/v1): POST "
        "/v1/chat/completions then forwards to it with memory injected",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="keep every namespace's archive in PostgreSQL (postgresql://USER@HOST:PORT/DB), "
        "shared by every replica; default: $TIERED_DISCLOSURE_DATABASE_URL, else SQLite in the "
        "data directory",
    )
    parser.add_argument("--max-open", type=int, help="stores kept open (default: the profile's)")
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    parser.add_argument(
        "--log-json", action="store_true", help="log one JSON object a line (with request_id)"
    )
    add_store_options(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    _use_database(args.database_url)
    if args.mcp:
        return serve_mcp(args)
    if args.tenant or args.user or args.conversation:
        raise UsageError(
            "serve: the HTTP API takes the namespace per request (?user=...); "
            "--tenant/--user/--conversation are for --mcp"
        )
    require("server", "disclosure serve")
    if args.service:
        from disclosure.core.profiles import load_profile
        from disclosure.service.host import run_service
        from disclosure.service.vector_server import chroma_url_of, with_chroma_url

        if not _loopback(args.host):
            raise UsageError("serve --service listens on loopback only (--host 127.0.0.1)")
        _configure_logging(args.log_level, json_lines=args.log_json)
        _say_upstream(args.upstream)
        return run_service(
            root_of(args),
            with_chroma_url(load_profile(args.profile), chroma_url_of(args.chroma_url)),
            make_app=partial(_service_app, upstream=args.upstream),
            host=args.host,
            port=args.port or 0,
            max_open=args.max_open,
            log_level=args.log_level,
        )
    import uvicorn

    from disclosure.faces.api import create_app, load_api_keys
    from disclosure.service import find_service

    running = find_service(root_of(args))
    if running is not None:
        raise ServiceError(
            f"the local service (pid {running.pid}, {running.url}) owns {running.root}; "
            "use it (disclosure.service.client.MemoryClient.for_root) or "
            "`disclosure service stop` first"
        )

    _configure_logging(args.log_level, json_lines=args.log_json)
    keys = load_api_keys(args.api_key_file)
    if not keys and not _loopback(args.host):
        print(
            f"disclosure: warning: serving {args.host} without API keys; anyone who can reach "
            "it can read every namespace (set TIERED_DISCLOSURE_API_KEYS or --api-key-file)",
            file=sys.stderr,
        )
    port = DEFAULT_PORT if args.port is None else args.port
    pool = pool_of(args, max_open=args.max_open)
    hosts = [*args.allowed_host, *([] if _loopback(args.host) else [args.host])]
    if not _loopback(args.host) and not args.allowed_host:
        print(
            "disclosure: note: only requests whose Host header is a loopback name or "
            f"{args.host} are served; add --allowed-host NAME for the names clients use",
            file=sys.stderr,
        )
    app = create_app(
        pool=pool,
        api_keys=keys,
        allowed_hosts=hosts,
        cors_origins=args.cors_origin,
        upstream=args.upstream,
    )
    auth = f"{len(keys)} API keys" if keys else "no authentication"
    warm = pool.profile.tiers.warm
    if warm.backend == "server":
        scheme = "https" if warm.ssl else "http"
        print(
            f"disclosure: vectors on the Chroma server {scheme}://{warm.host}:{warm.port}",
            file=sys.stderr,
        )
    _say_upstream(args.upstream)
    print(
        f"disclosure: serving {pool.root} (profile {pool.profile.name!r}, {auth}) on "
        f"http://{args.host}:{port}  (viewer: /, API reference: /docs)",
        file=sys.stderr,
    )
    try:
        uvicorn.run(app, host=args.host, port=port, log_level=args.log_level)
    finally:
        pool.close()
    return 0


def _service_app(pool: ControllerPool, token: str, *, upstream: str | None) -> Any:
    """The HTTP API as the local service serves it: the service's token is its one key."""
    from disclosure.faces.api import create_app

    return create_app(pool=pool, api_keys=[token], upstream=upstream)


def serve_mcp(args: argparse.Namespace) -> int:
    """The MCP server on stdio for the namespace ``args`` names (``disclosure agent mcp`` too)."""
    from disclosure.faces.mcp.server import create_mcp_server

    parts = {"tenant": args.tenant, "user": args.user, "conversation": args.conversation}
    given = {k: v for k, v in parts.items() if v is not None}
    client = _service_client(args, given)
    if client is not None:
        with client:
            server = create_mcp_server(client)
            print(
                f"disclosure: MCP server on stdio for {given or '(default)'} through the service "
                f"at {client.base_url}",
                file=sys.stderr,
            )
            server.run("stdio")
        return 0
    with pool_of(args, max_open=1) as pool:
        server = create_mcp_server(pool, namespace=given)
        print(
            f"disclosure: MCP server on stdio for {pool.namespace(given)} in {pool.root}",
            file=sys.stderr,
        )
        server.run("stdio")
    return 0


def _use_database(url: str | None) -> None:
    """``--database-url``: every store this process opens keeps its archive there (the tiers
    read ``$TIERED_DISCLOSURE_DATABASE_URL`` unless a profile names its own)."""
    if url is None:
        return
    if not url.startswith(("postgresql://", "postgres://")):
        raise UsageError(f"serve: --database-url must be a postgresql:// URL, not {url[:20]!r}")
    os.environ[DATABASE_URL_VARIABLE] = url


def _configure_logging(level: str, *, json_lines: bool) -> None:
    """The service's own records (logger ``disclosure``), each with its request id."""
    import logging

    from disclosure.faces.api.observability import JsonFormatter, RequestIdFilter

    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        JsonFormatter()
        if json_lines
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    )
    logger = logging.getLogger("disclosure")
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False


def _say_upstream(upstream: str | None) -> None:
    if upstream:
        print(f"disclosure: proxying /v1/chat/completions to {upstream}", file=sys.stderr)


def _service_client(args: argparse.Namespace, namespace: dict[str, str]) -> Any:
    """A client of the root's service: the running one, else one started here unless the
    profile's ``service.autostart`` (or ``$TIERED_DISCLOSURE_NO_SERVICE``) says not to."""
    from disclosure.core.profiles import load_profile
    from disclosure.service import find_service, service_disabled, start_service
    from disclosure.service.client import MemoryClient

    if service_disabled():
        return None
    root = root_of(args)
    info = find_service(root)
    if info is None:
        if not load_profile(args.profile).service.autostart:
            return None
        require("server", "starting the local service")
        info, _ = start_service(root, profile=args.profile)
    return MemoryClient(info.url, api_key=info.token, namespace=namespace)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

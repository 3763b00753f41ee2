"""``disclosure serve --service``: the HTTP API as the local service that owns a data root.

It takes the root's service lock first (a second service for the same root is refused), binds
its socket (port 0: any free port), writes the service file with its address and access token,
and serves until SIGTERM or SIGINT; then it closes every store (the outbox keeps whatever is not
embedded yet) and removes the file. Ingests are acknowledged once archived and embedded in the
background (``service.background_embedding``), ``service.drain_batch`` memories at a time.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disclosure._version import __version__
from disclosure.core.profiles import Profile, load_profile
from disclosure.service import TOKEN_VARIABLE, ServiceInfo, ServiceLock, remove_info, write_info

if TYPE_CHECKING:
    from disclosure.service.pool import ControllerPool

log = logging.getLogger(__name__)

__all__ = ["run_service", "service_profile"]


def service_profile(profile: Profile) -> Profile:
    """``profile`` as the service runs it: embedding in a worker thread, in large batches."""
    settings = profile.service
    if not settings.background_embedding:
        return profile
    outbox = profile.tiers.outbox.model_copy(
        update={"drain": "background", "batch_size": settings.drain_batch}
    )
    tiers = profile.tiers.model_copy(update={"outbox": outbox})
    return profile.model_copy(update={"tiers": tiers})


def run_service(
    root: Path,
    profile: str | Path | Profile,
    *,
    make_app: Callable[[ControllerPool, str], Any],
    host: str = "127.0.0.1",
    port: int = 0,
    max_open: int | None = None,
    log_level: str = "info",
) -> int:
    """Serve ``root`` as its local service until stopped; the exit code. ``make_app(pool,
    token)`` builds the ASGI app it serves over ``pool``, with ``token`` its one access key
    (``disclosure serve --service`` passes the HTTP API's ``create_app``: the service sits
    below the faces and does not import them)."""
    import uvicorn

    from disclosure.service.pool import ControllerPool

    root = Path(root).expanduser()
    lock = ServiceLock(root)
    try:
        token = os.environ.pop(TOKEN_VARIABLE, "") or secrets.token_urlsafe(32)
        loaded = service_profile(load_profile(profile))
        listener = _listen(host, port)
        address = f"http://{_url_host(host)}:{listener.getsockname()[1]}"
        with ControllerPool(loaded, root=root, max_open=max_open) as pool:
            app = make_app(pool, token)
            server = uvicorn.Server(uvicorn.Config(app, log_level=log_level))
            info = ServiceInfo(
                url=address,
                pid=os.getpid(),
                token=token,
                root=str(root),
                profile=loaded.name,
                started=datetime.now(UTC).isoformat(timespec="seconds"),
                version=__version__,
            )
            write_info(root, info)  # the socket listens already: clients may connect at once
            print(
                f"disclosure: service for {root} (profile {loaded.name!r}) on {address}, "
                f"pid {info.pid}",
                file=sys.stderr,
                flush=True,
            )
            # uvicorn shuts down on SIGTERM, then raises it again with the handler it found: make
            # that an exit, so the cleanup below runs (the default handler would skip it)
            signal.signal(signal.SIGTERM, _exit)
            try:
                server.run(sockets=[listener])
            finally:
                remove_info(root, os.getpid())
    finally:
        lock.release()
    return 0


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    listener.set_inheritable(True)
    return listener


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

"""Host and Origin checks: what keeps a web page the user opens away from their memory.

A server on loopback without keys trusts whoever reaches it. A page on another site can reach
it through the browser, either directly (a cross-site request) or by pointing a DNS name of its
own at 127.0.0.1 (DNS rebinding: the request then carries that name in ``Host``). So:

- the ``Host`` header must name a host the server serves: the loopback names by default, more
  with ``allowed_hosts`` (``*`` turns the check off, for a server behind a proxy that checks);
- a browser request from another origin (an ``Origin`` header, or ``Sec-Fetch-Site:
  cross-site``) is refused unless its origin is one of ``cors_origins``; those get CORS headers.

Refusals are 403 with the API's JSON error shape.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str:
    """The host of a ``Host`` header value, lowercased, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HostGuard:
    """ASGI middleware refusing unknown Host names and cross-site browser requests (403)."""

    def __init__(
        self, app: Any, allowed_hosts: Iterable[str] = (), cors_origins: Iterable[str] = ()
    ) -> None:
        self.app = app
        hosts = {host_name(h) for h in (*LOOPBACK_HOSTS, *allowed_hosts) if h.strip()}
        self.any_host = "*" in hosts
        self.hosts = frozenset(hosts - {"*"})
        self.origins = frozenset(o.strip().rstrip("/").lower() for o in cors_origins if o.strip())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self._problem(headers)
        if problem:
            log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), problem)
            await _forbid(send, problem)
            return
        await self.app(scope, receive, send)

    def _problem(self, headers: dict[str, str]) -> str | None:
        host = host_name(headers.get("host", ""))
        if not self.any_host and host not in self.hosts:
            return (
                f"this server does not serve the host {host[:80]!r} (start it with "
                "--allowed-host NAME to serve more names)"
            )
        origin = headers.get("origin")
        if origin is not None:
            if origin.rstrip("/").lower() in self.origins or _same_origin(origin, host):
                return None
            return f"cross-site requests from {origin[:80]!r} are refused (see --cors-origin)"
        if headers.get("sec-fetch-site", "").lower() == "cross-site":
            return "cross-site browser requests are refused (see --cors-origin)"
        return None


def _same_origin(origin: str, host: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and (parts.hostname or "") == host


async def _forbid(send: Any, message: str) -> None:
    from disclosure.faces.api.errors import error_response

    response = error_response(403, "forbidden_origin", message)
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(k.encode(), v.encode()) for k, v in response.headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": response.body})


__all__ = ["LOOPBACK_HOSTS", "HostGuard", "host_name"]

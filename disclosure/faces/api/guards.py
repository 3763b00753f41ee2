"""What stands in front of the endpoints: the body size and depth limits, recent results.

API keys and their grants live in :mod:`disclosure.faces.api.keys`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

from disclosure.core.result import DisclosureResult
from disclosure.faces.limits import MAX_JSON_DEPTH, json_depth

_BODY_METHODS = {"POST", "PUT", "PATCH"}


class BodyLimit:
    """ASGI middleware: request bodies over ``max_bytes`` get 413 before any endpoint runs.

    The body is read (up to the limit) and replayed to the app, so a client that sends no
    Content-Length, or lies in it, is held to the same limit.
    """

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._reject(send)
            return
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._reject(send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        depth = json_depth(body)
        if depth > MAX_JSON_DEPTH:  # before the parser recurses into it
            await _send_error(
                send,
                422,
                "too_deep",
                f"the body nests {depth} levels; the limit is {MAX_JSON_DEPTH}",
            )
            return

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Any) -> None:
        message = f"the request body exceeds {self.max_bytes} bytes"
        await _send_error(send, 413, "payload_too_large", message)


async def _send_error(send: Any, status: int, code: str, message: str) -> None:
    from disclosure.faces.api.errors import error_response

    response = error_response(status, code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode(), v.encode()) for k, v in response.headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": response.body})


def _content_length(scope: dict[str, Any]) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RecentResults:
    """Disclosure results kept for feedback: bounded, expiring, keyed by namespace and id."""

    def __init__(self, max_items: int, ttl_seconds: float) -> None:
        self.max_items = max_items
        self.ttl = ttl_seconds
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], tuple[float, DisclosureResult]] = OrderedDict()

    def put(self, namespace_key: str, result: DisclosureResult) -> str:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._items[(namespace_key, token)] = (time.monotonic(), result)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)
        return token

    def take(self, namespace_key: str, token: str) -> DisclosureResult | None:
        """The result, removed (feedback counts once); None if unknown, expired or elsewhere."""
        with self._lock:
            entry = self._items.pop((namespace_key, token), None)
        if entry is None or time.monotonic() - entry[0] > self.ttl:
            return None
        return entry[1]

    def __len__(self) -> int:
        return len(self._items)

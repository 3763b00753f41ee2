"""What stands in front of the endpoints: API keys, the body size limit, recent results.

API keys come from ``$TIERED_DISCLOSURE_API_KEYS`` (comma-separated) or a file (one key a line,
``#`` comments); they are compared in constant time and never logged or echoed.
"""

from __future__ import annotations

import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from disclosure.result import DisclosureResult
from tiers.errors import InvalidInputError

API_KEYS_VARIABLE = "TIERED_DISCLOSURE_API_KEYS"
API_KEY_FILE_VARIABLE = "TIERED_DISCLOSURE_API_KEY_FILE"
MIN_KEY_CHARS = 16
_BODY_METHODS = {"POST", "PUT", "PATCH"}


class ApiKeys:
    """A set of accepted keys; ``bool(keys)`` says whether authentication is on."""

    def __init__(self, keys: Iterable[str] = ()) -> None:
        cleaned = [k.strip() for k in keys if k.strip()]
        short = [k for k in cleaned if len(k) < MIN_KEY_CHARS]
        if short:
            raise InvalidInputError(
                f"{len(short)} API key(s) shorter than {MIN_KEY_CHARS} characters; use long "
                f"random keys (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        self._keys = tuple(k.encode("utf-8") for k in dict.fromkeys(cleaned))

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:  # never the keys themselves
        return f"ApiKeys({len(self._keys)} keys)"

    def accepts(self, given: str | None) -> bool:
        """Constant-time comparison against every key (no early exit)."""
        if not given:
            return False
        candidate = given.encode("utf-8", "surrogateescape")
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(candidate, key)
        return matched


def load_api_keys(
    file: Path | str | None = None, *, environ: Mapping[str, str] | None = None
) -> ApiKeys:
    """Keys from ``file`` (else ``$TIERED_DISCLOSURE_API_KEY_FILE``), plus those in
    ``$TIERED_DISCLOSURE_API_KEYS``."""
    env = os.environ if environ is None else environ
    keys = [k for k in env.get(API_KEYS_VARIABLE, "").split(",") if k.strip()]
    path = file or env.get(API_KEY_FILE_VARIABLE)
    if path:
        try:
            lines = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            reason = exc.strerror or exc
            raise InvalidInputError(f"cannot read the API key file {path}: {reason}") from None
        keys += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return ApiKeys(keys)


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

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Any) -> None:
        from disclosure.api.errors import error_response

        response = error_response(
            413, "payload_too_large", f"the request body exceeds {self.max_bytes} bytes"
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
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

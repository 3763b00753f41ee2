"""An OpenAI-compatible proxy: ``POST /v1/chat/completions`` with memory, for any language.

``disclosure serve --upstream https://api.openai.com/v1`` makes the service a stand-in for the
upstream's chat endpoint. Each call: disclose for the last user message, insert the context as a
system message (as :class:`~disclosure.faces.middleware.DisclosureMiddleware` does), forward the
request to ``{upstream}/chat/completions`` with the caller's own ``Authorization`` header, return
the upstream's answer unchanged (status, body, streamed chunks), then record the user's message
and the reply and learn from what the reply cited. A stream cut short still records the user's
message and the partial reply, marked ``partial``.

The namespace comes from headers (``X-Disclosure-Tenant``, ``X-Disclosure-User``,
``X-Disclosure-Conversation``) or, for the user, the request's ``user`` field; the session from
``X-Disclosure-Session``. When the service has API keys, the proxy takes the service key in
``X-API-Key`` only: the ``Authorization`` header belongs to the upstream and is never checked
against, nor mistaken for, the service's keys.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from disclosure.faces.api.errors import ApiError
from disclosure.faces.api.keys import ApiKeys
from disclosure.faces.api.observability import Observer
from disclosure.faces.middleware.chat import CallOptions, DisclosureMiddleware, PreparedCall
from disclosure.faces.middleware.messages import reply_text, stream_delta
from disclosure.service.pool import ControllerPool
from tiers.errors import InvalidInputError

log = logging.getLogger(__name__)

HEADER_PREFIX = "x-disclosure-"
_NAMESPACE_ORDER = ("tenant", "user", "conversation")
NAMESPACE_HEADERS = frozenset(_NAMESPACE_ORDER)
_SETTINGS_HEADERS = ("session", "level", "budget")
# what reaches the upstream: its own credentials and content negotiation, nothing of ours
_FORWARDED = (
    "authorization",
    "openai-organization",
    "openai-project",
    "accept",
    "user-agent",
    "api-key",
)
_PASSED_BACK = ("content-type", "openai-processing-ms", "x-request-id", "openai-model")

__all__ = ["HEADER_PREFIX", "proxy_router"]


def proxy_router(
    pool: ControllerPool,
    keys: ApiKeys,
    upstream: str,
    *,
    timeout: float = 600.0,
    observer: Observer | None = None,
) -> APIRouter:
    """The ``/v1/chat/completions`` route forwarding to ``upstream`` (its base URL)."""
    target = upstream.rstrip("/") + "/chat/completions"
    middleware = DisclosureMiddleware(pool)
    router = APIRouter(prefix="/v1", tags=["openai-compatible proxy"])

    @router.post("/chat/completions", response_model=None)
    async def chat_completions(request: Request) -> Response:
        """OpenAI's chat completions with memory injected; the upstream's answer unchanged."""
        grant = keys.grant(request.headers.get("x-api-key")) if keys else None
        if keys and grant is None:
            raise ApiError(401, "unauthorized", "the service key goes in X-API-Key")
        if request.query_params:
            name = next(iter(request.query_params))[:40]
            raise InvalidInputError(
                f"unknown query parameter {name!r}; the proxy takes X-Disclosure-* headers"
            )
        body = await _json_body(request)
        options = _options(request, body, pool)
        namespace = pool.namespace(options.namespace_parts())
        if grant is not None and not grant.allows(namespace.as_dict().get("tenant"), write=True):
            raise ApiError(403, "forbidden", f"this API key may not write to {namespace}")
        call = await asyncio.to_thread(
            middleware.prepare, body["messages"], options, model=body.get("model")
        )
        if observer is not None and call.result is not None:
            observer.disclosed(call.result)
        sent = {**body, "messages": call.messages}
        headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
        client = _client(timeout)
        try:
            upstream_request = client.build_request("POST", target, json=sent, headers=headers)
            answer = await client.send(upstream_request, stream=bool(body.get("stream")))
        except Exception as exc:
            await client.aclose()
            log.warning("upstream %s unreachable: %s", target, exc)
            message = f"the upstream did not answer: {type(exc).__name__}"
            raise ApiError(502, "upstream_unavailable", message) from None
        if body.get("stream") and answer.status_code == 200:
            return StreamingResponse(
                _relay(answer, client, middleware, call),
                status_code=answer.status_code,
                headers=_passed_back(answer.headers, call),
            )
        try:
            content = await answer.aread()
        finally:
            await answer.aclose()
            await client.aclose()
        if answer.status_code == 200:
            await middleware.acomplete(call, reply_text(_parsed(content)))
        return Response(
            content, status_code=answer.status_code, headers=_passed_back(answer.headers, call)
        )

    return router


def _client(timeout: float) -> Any:
    import httpx

    return httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=10.0))


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "bad_request", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise InvalidInputError("the body must be a JSON object (a chat completion request)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInputError("messages must be a non-empty list of {'role', 'content'}")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise InvalidInputError("messages -> each message must be an object with a 'role'")
    if not isinstance(body.get("model"), str):
        raise InvalidInputError("model must be a string naming the upstream's model")
    return body


def _options(request: Request, body: Mapping[str, Any], pool: ControllerPool) -> CallOptions:
    """The namespace and settings from ``X-Disclosure-*`` headers and the ``user`` field."""
    given: dict[str, str] = {}
    for name, value in request.headers.items():
        lowered = name.lower()
        if not lowered.startswith(HEADER_PREFIX):
            continue
        key = lowered[len(HEADER_PREFIX) :]
        if key not in NAMESPACE_HEADERS and key not in _SETTINGS_HEADERS:
            known = ", ".join(f"-{k.title()}" for k in (*_NAMESPACE_ORDER, *_SETTINGS_HEADERS))
            shown = "-".join(word.capitalize() for word in lowered.split("-"))
            raise InvalidInputError(f"unknown header {shown}; the proxy reads X-Disclosure{known}")
        given[key] = value
    user = body.get("user")
    if "user" not in given and isinstance(user, str) and "user" in pool.profile.isolation.scope:
        given["user"] = user
    budget = given.get("budget")
    try:
        return CallOptions(
            tenant=given.get("tenant"),
            user=given.get("user"),
            conversation=given.get("conversation"),
            session_id=given.get("session"),
            level=given.get("level"),
            budget=int(budget) if budget is not None else None,
        )
    except ValueError:
        raise InvalidInputError(f"X-Disclosure-Budget must be a number, not {budget!r}") from None


def _parsed(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _passed_back(headers: Mapping[str, str], call: PreparedCall) -> dict[str, str]:
    kept = {k: v for k, v in headers.items() if k.lower() in _PASSED_BACK}
    result = call.result
    if result is not None:
        kept["x-disclosure-level"] = result.level.value
        kept["x-disclosure-tokens"] = str(result.tokens_used)
    return kept


async def _relay(
    answer: Any, client: Any, middleware: DisclosureMiddleware, call: PreparedCall
) -> AsyncIterator[bytes]:
    """The upstream's stream, byte for byte; the reply's text gathered from its SSE events
    and recorded at the end, or, when the stream is cut short, marked partial."""
    parts: list[str] = []
    pending = b""
    finished = False
    try:
        async for chunk in answer.aiter_raw():
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                _collect(line, parts)
            yield chunk
        _collect(pending, parts)
        finished = True
    finally:
        await answer.aclose()
        await client.aclose()
        reply = "".join(parts) or None
        # the client left or the upstream broke off: keep what was said, marked partial
        await asyncio.shield(middleware.acomplete(call, reply, partial=not finished))


def _collect(line: bytes, parts: list[str]) -> None:
    """Add the text of an SSE ``data:`` line (a chat completion chunk) to ``parts``."""
    text = line.strip()
    if text.startswith(b"data:"):
        event = _parsed(text[5:].strip())
        if isinstance(event, dict):
            parts.append(stream_delta(event))

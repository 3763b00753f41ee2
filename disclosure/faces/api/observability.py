"""What the service tells its operators: Prometheus metrics, request ids in the logs.

:class:`Observer` holds one app's metrics in a registry of its own (two apps in one process
never mix their counts) and serves them at ``GET /metrics`` in Prometheus's text format:

- ``disclosure_requests_total{method, route, status}`` and
  ``disclosure_request_duration_seconds{method, route}`` (the route's template, never the raw
  path, so ids and citations do not become labels);
- ``disclosure_errors_total{code}``: error answers by their stable code (``not_found``, ...);
- ``disclosure_stage_duration_seconds{stage}``: each disclosure's stages (analyze, each tier's
  search, expand, render, total);
- ``disclosure_tokens_disclosed``, ``disclosure_budget_used_ratio``, ``disclosure_savings_ratio``:
  per disclosure, what it cost, how much of its budget it used, what it saved against the full
  history;
- ``disclosure_pending_embeddings`` and ``disclosure_open_namespaces``, read when scraped.

No label carries a namespace, a query or any memory. Every request gets an id (the caller's
``X-Request-ID`` if it is a short plain token, else a new one), echoed in the response header
and attached to every log record of the request (``request_id``); ``--log-json`` makes each
record one JSON object. OpenTelemetry spans per stage come from
:mod:`disclosure.core.pipeline.trace` when the ``opentelemetry`` extra is installed.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from disclosure.core.result import DisclosureResult
    from disclosure.service.pool import ControllerPool

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = contextvars.ContextVar("disclosure_request_id", default="-")
_GOOD_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_MAX_ERROR_BODY = 4096
_RATIO_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
_TOKEN_BUCKETS = (0, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800)
_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

__all__ = [
    "JsonFormatter",
    "ObservedRequests",
    "Observer",
    "RequestIdFilter",
    "current_request_id",
]


def current_request_id() -> str:
    """The id of the request being served ("-" outside one)."""
    return _REQUEST_ID.get()


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (install it on the handlers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, request id (and the error)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", _REQUEST_ID.get()),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class Observer:
    """One app's metrics, and the ASGI middleware that counts its requests."""

    def __init__(self, pool: ControllerPool) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.pool = pool
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "disclosure_requests", "HTTP requests", ["method", "route", "status"], registry=r
        )
        self.latency = Histogram(
            "disclosure_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            buckets=_SECONDS,
            registry=r,
        )
        self.errors = Counter("disclosure_errors", "error answers by code", ["code"], registry=r)
        self.stages = Histogram(
            "disclosure_stage_duration_seconds",
            "time per disclosure stage",
            ["stage"],
            buckets=_SECONDS,
            registry=r,
        )
        self.tokens = Histogram(
            "disclosure_tokens_disclosed",
            "tokens per disclosure",
            buckets=_TOKEN_BUCKETS,
            registry=r,
        )
        self.budget_used = Histogram(
            "disclosure_budget_used_ratio",
            "share of the budget a disclosure used",
            buckets=_RATIO_BUCKETS,
            registry=r,
        )
        self.savings = Histogram(
            "disclosure_savings_ratio",
            "tokens saved against sending the full history",
            buckets=_RATIO_BUCKETS,
            registry=r,
        )
        r.register(_PoolCollector(pool))

    # -- what the routes report ------------------------------------------------------------

    def disclosed(self, result: DisclosureResult) -> None:
        """Count one disclosure: its stages, tokens, budget use and savings."""
        for stage, ms in result.timings_ms.items():
            self.stages.labels(stage).observe(ms / 1000)
        self.tokens.observe(result.tokens_used)
        if result.budget > 0:
            self.budget_used.observe(min(result.tokens_used / result.budget, 1.0))
        self.savings.observe(max(0.0, min(result.savings, 1.0)))

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus's text format, and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def count(self, scope: dict[str, Any], status: int, body: bytes, seconds: float) -> None:
        """Count one answered request (the middleware calls it)."""
        route = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        method = scope.get("method", "-")
        self.requests.labels(method, template, str(status)).inc()
        self.latency.labels(method, template).observe(seconds)
        if status >= 400:
            self.errors.labels(_error_code(body, status)).inc()
        log.info("%s %s -> %d in %.1f ms", method, template, status, seconds * 1000)


class ObservedRequests:
    """ASGI middleware: a request id per request, timing, counts by route and status, errors
    by code (add it last, so that it sees what the other middleware answer too)."""

    def __init__(self, app: Any, observer: Observer) -> None:
        self.app = app
        self.observer = observer

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        token = _REQUEST_ID.set(request_id)
        started = time.perf_counter()
        seen: dict[str, Any] = {"status": 500, "body": b""}

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            elif (
                message["type"] == "http.response.body"
                and seen["status"] >= 400
                and len(seen["body"]) < _MAX_ERROR_BODY
            ):
                seen["body"] += message.get("body", b"")
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            elapsed = time.perf_counter() - started
            self.observer.count(scope, int(seen["status"]), seen["body"], elapsed)
            _REQUEST_ID.reset(token)


def _request_id(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", ()):
        if name.lower() == REQUEST_ID_HEADER.encode():
            given = bytes(value).decode("latin-1")
            if _GOOD_ID.match(given):
                return given
    return secrets.token_hex(8)


def _error_code(body: bytes, status: int) -> str:
    try:
        code: object = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return f"http_{status}"
    return code if isinstance(code, str) and len(code) <= 64 else f"http_{status}"


class _PoolCollector:
    """Gauges read from the pool when scraped: open namespaces, embeddings waiting."""

    def __init__(self, pool: ControllerPool) -> None:
        self.pool = pool

    def describe(self) -> Iterable[Any]:
        return []

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        pending = 0
        for controller in self.pool.open_controllers():
            try:
                pending += controller.store.pending()
            except Exception:  # a store closing under the scrape counts as nothing
                continue
        yield GaugeMetricFamily(
            "disclosure_pending_embeddings",
            "memories waiting for their vector, over the open namespaces",
            value=pending,
        )
        yield GaugeMetricFamily(
            "disclosure_open_namespaces",
            "namespaces with an open store",
            value=len(self.pool.open_namespaces()),
        )

"""``GET /ready``: whether this process may take traffic (see
:mod:`disclosure.service.readiness`); ``/health`` stays liveness.

200 once the models are loaded and warmed and the backends answer; 503 (same body) before that
and whenever a backend does not answer, with the first check that is not ok. Like ``/health`` it
needs no key (load balancers probe it), and its reasons name checks, never addresses.

The API adds one check of its own, ``routes``: FastAPI (0.165) builds an included router's
routes (their parameters, dependencies and models) when a request first reaches it, which took
~0.4 s of a replica's first answer on a busy 2-core machine. One request for a path no route
serves, through the router alone (no middleware sees it, nothing is counted), builds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from disclosure._version import __version__
from disclosure.faces.api.models import ReadyResponse
from disclosure.service.readiness import Readiness

__all__ = ["add_ready_route"]


def add_ready_route(app: FastAPI, readiness: Readiness) -> None:
    """Serve ``GET /ready`` from ``readiness`` (its loading is started by the app's lifespan),
    and make building the app's routes one of its checks."""
    profile = readiness.pool.profile.name
    readiness.add_step("routes", lambda: asyncio.run(_reach_every_route(app)))

    @app.get(
        "/ready",
        response_model=ReadyResponse,
        tags=["service"],
        responses={503: {"model": ReadyResponse, "description": "not ready: see reason"}},
    )
    def ready() -> JSONResponse:
        """Readiness: 200 when the models are loaded and the backends answer, else 503."""
        state = readiness.state()
        loading = any(v == "loading" or v.startswith("failed") for v in state.checks.values())
        body = ReadyResponse(
            status="ready" if state.ready else ("starting" if loading else "unavailable"),
            reason=state.reason,
            checks=state.checks,
            version=__version__,
            profile=profile,
        )
        return JSONResponse(body.model_dump(mode="json"), status_code=200 if state.ready else 503)


async def _reach_every_route(app: FastAPI) -> None:
    """A request for ``/v1/-ready-`` (no route's path) through ``app.router``: matching it
    builds every route on the way, and it ends in a 404."""
    path = "/v1/-ready-"
    scope: dict[str, Any] = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "root_path": "", "scheme": "http", "query_string": b"", "http_version": "1.1",
        "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0), "app": app,
    }  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        return None

    try:
        await app.router(scope, receive, send)
    except HTTPException as exc:  # the router's 404, as expected
        if exc.status_code != 404:
            raise

"""JSON errors with stable codes: ``{"error": {"code": "not_found", "message": "..."}}``.

The library's error hierarchy (``tiers.errors``) maps to HTTP statuses here, most specific class
first; anything unexpected is a 500 ``internal_error`` whose message reveals nothing (the
traceback goes to the log).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from disclosure.service.error_codes import ERROR_CODES
from tiers.errors import DisclosureError, is_disk_full

log = logging.getLogger(__name__)

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
}


class ApiError(Exception):
    """An error the API raises itself, with its status and stable code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(
    status: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status, headers=dict(headers or {}))


def classify(exc: BaseException) -> tuple[int, str]:
    """The status and code of a library error."""
    for kind, status, code in ERROR_CODES:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into the JSON shape above."""
    app.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    app.add_exception_handler(DisclosureError, _library_error)
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)


async def render_error(request: Request, exc: Exception) -> JSONResponse:
    """The answer the handlers :func:`install` registers give ``exc`` (for routes that reshape
    it, like the mem0 API's)."""
    if isinstance(exc, ApiError):
        return await _api_error(request, exc)
    if isinstance(exc, DisclosureError):
        return await _library_error(request, exc)
    if isinstance(exc, RequestValidationError):
        return await _validation_error(request, exc)
    if isinstance(exc, HTTPException):
        return await _http_error(request, exc)
    return await _unexpected(request, exc)


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return error_response(exc.status, exc.code, exc.message, headers=headers)


async def _library_error(request: Request, exc: Exception) -> JSONResponse:
    status, code = classify(exc)
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        if code == "internal_error":
            return error_response(status, code, "internal error; see the server log")
    return error_response(status, code, str(exc))


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    details = [
        {
            "loc": [str(p) for p in err.get("loc", ())],
            "msg": err.get("msg", ""),
            "type": err.get("type", ""),
        }
        for err in exc.errors()
    ]
    where = "; ".join(f"{' -> '.join(d['loc'])}: {d['msg']}" for d in details[:5])
    return error_response(422, "validation_error", f"invalid request: {where}", details)


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    code = HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    if is_disk_full(exc):  # a side file (cache, usage history) written outside the archive
        log.error("%s %s: disk full: %s", request.method, request.url.path, exc)
        message = "the server's disk is full; nothing was written. Retry once there is space"
        return error_response(507, "disk_full", message)
    if isinstance(exc, RecursionError):
        return error_response(422, "too_deep", "the request nests too deeply to be read")
    log.error("%s %s failed unexpectedly", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "internal error; see the server log")

"""Reading the mem0 API's requests: entity ids, times, filters built from arguments, fields, and
what is refused (400, with the reason mem0's client raises as its ``ValidationError``).
(No ``from __future__ import annotations``: FastAPI reads the refusals' annotations.)
"""

import ast
import inspect
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request

from disclosure.faces.api.mem0_filters import Filter, invalid, unsupported
from disclosure.faces.api.mem0_records import AddBody, ListBody, UpdateBody
from disclosure.faces.api.mem0_schema import Mem0Memory
from disclosure.faces.api.mem0_store import Scope

__all__ = [
    "MAX_QUERY_MAPPING_CHARS",
    "VERBATIM",
    "add_refusals",
    "check_project",
    "dated",
    "entity_ids",
    "only",
    "page_url",
    "query_mapping",
    "reference",
    "refuse",
    "refuse_extraction",
    "refuse_update",
    "run_part",
    "when",
    "with_metadata",
]

VERBATIM = (
    "stored verbatim, one memory per message (this server runs no model to extract facts; "
    "system messages are instructions and are not stored)"
)
MAX_QUERY_MAPPING_CHARS = 8192


def add_refusals(router: APIRouter, scoped: Any) -> None:
    """Every other call of mem0's client: a 400 that says why, never a 404."""
    refused = {
        ("POST", "/v1/feedback/"): "feedback on single memories is not kept: this server "
        "learns from which memories a reply cites (POST /v1/feedback with a disclosure_id)",
        ("POST", "/v1/exports/"): _MODEL_EXPORT,
        ("POST", "/v1/exports/get/"): _MODEL_EXPORT,
        ("POST", "/v1/summary/"): "summaries by mem0's model are not made here; see "
        "GET /v1/summaries for this server's consolidated summaries",
        ("GET", "/v2/entities/{entity_type}/{entity_id}/profile/"): _PROFILES,
        ("POST", "/v2/profiles/jobs/"): _PROFILES,
        ("GET", "/v2/profiles/jobs/{job_id}/"): _PROFILES,
        ("GET", "/v2/profiles/settings/"): _PROFILES,
        ("POST", "/v2/profiles/settings/"): _PROFILES,
    }
    every = ("GET", "POST", "PUT", "PATCH", "DELETE")
    for path, why in (
        ("/api/v1/orgs/{rest:path}", _PROJECTS),
        ("/api/v1/webhooks/{rest:path}", _WEBHOOKS),
    ):
        refused.update({(method, path): why for method in every})
    for (method, path), why in refused.items():
        slug = "_".join(p for p in path.replace(":path", "").strip("/{}").split("/") if p)
        router.add_api_route(
            path,
            _refusal(why, scoped, path),
            methods=[method],
            response_model=None,
            operation_id=f"mem0_refused_{method.lower()}_{slug.replace('{', '').replace('}', '')}",
        )


_MODEL_EXPORT = (
    "exports shaped by a schema are made by mem0's model, which this server does not run"
)
_PROFILES = "user profiles are written by mem0's model, which this server does not run"
_PROJECTS = (
    "organisations and projects are not managed by this server: the API key names the tenant "
    "(a key file entry 'KEY tenant=NAME')"
)
_WEBHOOKS = "webhooks are not offered by this server"


def _refusal(why: str, scoped: Any, path: str) -> Callable[..., Any]:
    """An endpoint refusing with ``why``, taking the path's parameters (for the schema)."""

    def refuse(scope: scoped, **_: str) -> None:
        raise unsupported(why)

    names = [part.strip("{}").split(":")[0] for part in path.split("/") if part.startswith("{")]
    parameters = [
        inspect.Parameter("scope", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=scoped),
        *(inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=str) for n in names),
    ]
    refuse.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    refuse.__doc__ = f"Refused (400): {why}."
    return refuse


def entity_ids(body: AddBody) -> dict[str, str | None]:
    """The entity ids of an add, from the top level and ``filters`` (which must agree)."""
    ids: dict[str, str | None] = {
        "user_id": body.user_id,
        "agent_id": body.agent_id,
        "app_id": body.app_id,
        "run_id": body.run_id,
    }
    for key, value in (body.filters or {}).items():
        if key not in ids:
            raise invalid(
                "add's filters name entities only (user_id, agent_id, app_id, run_id), not "
                f"{str(key)[:40]!r}"
            )
        if not isinstance(value, str) or not 1 <= len(value) <= 128:
            raise invalid(f"filters: {key} is a string of 1-128 characters")
        if ids[key] not in (None, value):
            raise invalid(f"{key} is given twice, with different values")
        ids[key] = value
    if not any(ids.values()):
        raise invalid("add needs at least one of user_id, agent_id, app_id or run_id")
    return ids


def refuse_extraction(body: AddBody) -> None:
    if body.infer:
        raise unsupported(
            "infer=True asks mem0's model to extract facts, which this server does not run: "
            f"messages are {VERBATIM}. Omit infer, or pass infer=False"
        )
    for name in (
        "custom_instructions",
        "agent_custom_instructions",
        "custom_categories",
        "includes",
        "excludes",
        "structured_data_schema",
        "prompt_profile_id",
    ):
        if getattr(body, name) is not None:
            raise unsupported(f"{name} guides mem0's fact extraction; here messages are {VERBATIM}")
    refuse(enable_graph=body.enable_graph, temporal_reasoning=body.temporal_reasoning)
    _refuse_lifetime(body.expiration_date, body.immutable)
    if body.timezone is not None or body.observation_date is not None:
        raise unsupported(
            "give the time as timestamp (Unix seconds) or observation_datetime (ISO, with offset)"
        )


def refuse(
    *,
    categories: list[str] | None = None,
    enable_graph: bool | None = None,
    temporal_reasoning: bool | None = None,
) -> None:
    if categories:
        raise unsupported("categories are assigned by mem0's model, and this server assigns none")
    if enable_graph:
        raise unsupported("graph memory (entities and relations by mem0's model) is not kept here")
    if temporal_reasoning:
        raise unsupported("temporal reasoning by mem0's model is not run here")


def _refuse_lifetime(expiration_date: str | None, immutable: bool | None = None) -> None:
    if expiration_date is not None:
        raise unsupported("memories do not expire here: delete them when they are not wanted")
    if immutable:
        raise unsupported("memories cannot be made immutable here")


def refuse_update(body: UpdateBody) -> None:
    _refuse_lifetime(body.expiration_date)
    if body.timestamp is not None:
        raise unsupported("a memory keeps the time it was said; it is not changed by update")
    if body.text is None and body.metadata is None:
        raise invalid("update needs text and/or metadata")


def check_project(scope: Scope, org_id: str | None, project_id: str | None) -> None:
    for name, value in (("org_id", org_id), ("project_id", project_id)):
        if value is not None and value != scope.tenant_name:
            raise unsupported(f"{name} {value[:40]!r}: {_PROJECTS}")


def when(body: AddBody) -> datetime | None:
    if body.timestamp is not None and body.observation_datetime is not None:
        raise invalid("give timestamp or observation_datetime, not both")
    if body.timestamp is not None:
        return datetime.fromtimestamp(body.timestamp, UTC)
    moment = body.observation_datetime
    return None if moment is None else moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def reference(value: int | float | str | None) -> datetime | None:
    """``reference_date``: the moment a search is made as of (Unix seconds or ISO)."""
    if value is None:
        return None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC)
        moment = datetime.fromisoformat(str(value))
    except (ValueError, OverflowError, OSError):
        raise invalid(
            f"reference_date {str(value)[:40]!r} is not a date, a time or Unix seconds"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def with_metadata(filters: Any, metadata: Mapping[str, Any] | None) -> Any:
    if not metadata:
        return filters
    if not isinstance(filters, Mapping) or not filters:
        return filters  # parse_filters says what is missing
    return {"AND": [filters, {"metadata": dict(metadata)}]}


def dated(body: ListBody) -> Any:
    bounds = {k: v for k, v in (("gte", body.start_date), ("lte", body.end_date)) if v}
    if not bounds or not isinstance(body.filters, Mapping) or not body.filters:
        return body.filters
    return {"AND": [body.filters, {"created_at": bounds}]}


def run_part(scope: Scope, flt: Filter) -> str | None:
    return flt.run_id if scope.run_is_namespace else None


def only(found: list[dict[str, Any]], fields: list[str] | None) -> list[dict[str, Any]]:
    """Each record cut to ``fields`` (mem0's ``fields``), when given."""
    if not fields:
        return found
    known = set(Mem0Memory.model_fields)
    unknown = sorted(set(fields) - known)
    if unknown:
        raise invalid(f"fields: unknown {unknown[0][:40]!r}; known: {', '.join(sorted(known))}")
    return [{k: v for k, v in r.items() if k in fields} for r in found]


def page_url(request: Request, number: int, size: int) -> str:
    return str(request.url.include_query_params(page=number, page_size=size))


def query_mapping(name: str, raw: str) -> dict[str, Any]:
    """A dict sent in the query string: JSON, or the Python form mem0's client sends
    (``str()`` of a dict), read as a literal (never run)."""
    try:
        value = json.loads(raw)
    except ValueError:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise invalid(f"{name} is not an object (JSON)") from None
    if not isinstance(value, dict):
        raise invalid(f"{name} is not an object (JSON)")
    return value

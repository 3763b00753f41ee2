"""mem0's platform API, for the released clients of ``mem0ai`` (``MemoryClient`` and
``AsyncMemoryClient``): point ``host=`` at ``disclosure serve`` and keep the code.

Served: ``GET /v1/ping/``; add (``POST /v3/memories/add/``, messages stored verbatim, one memory
per message, answered at once in mem0's synchronous ``infer=False`` shape); search
(``POST /v3/memories/search/``) and list (``POST /v3/memories/``, pages) with mem0's filters;
get, update (``PUT``), delete and history of ``/v1/memories/{id}/``; ``DELETE /v1/memories/``;
batch update and delete (``/v1/batch/``); the entities (``GET /v1/entities/``,
``DELETE /v2/entities/{type}/{name}/``). The key goes in ``Authorization: Token KEY`` (or
``Bearer``, or ``X-API-Key``), with this server's scoped keys.

Refused with 400 and a message saying why (mem0's client raises its ``ValidationError`` with
it): extraction by a model (``infer=True``, custom instructions and categories, includes and
excludes, structured schemas), graph memory, expiry and immutability, feedback on single
memories, exports, summaries, profiles, webhooks, organisations and projects. How entities map
onto namespaces and how ids are made: :mod:`disclosure.api.mem0_records`. Errors carry mem0's
``detail`` beside this API's ``error``. (No ``from __future__ import annotations``: FastAPI
reads the routes' annotations.)
"""

import ast
import inspect
import json
import logging
from collections.abc import Callable, Coroutine, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.convertors import Convertor, register_url_convertor

from disclosure.api.errors import ApiError, render_error
from disclosure.api.keys import ApiKeys, Grant
from disclosure.api.mem0_filters import Filter, invalid, parse_filters, unsupported
from disclosure.api.mem0_records import (
    MAX_MEM0_ID_CHARS,
    RESERVED_METADATA,
    AddBody,
    BatchBody,
    BatchItem,
    ListBody,
    SearchBody,
    UpdateBody,
    check_metadata,
    encode_id,
    record,
)
from disclosure.api.mem0_schema import (
    Mem0AddResponse,
    Mem0Entities,
    Mem0Error,
    Mem0HistoryEntry,
    Mem0Memory,
    Mem0Message,
    Mem0Page,
    Mem0Ping,
    Mem0SearchResponse,
)
from disclosure.api.mem0_store import (
    EntityTally,
    Scope,
    forget_matching,
    history,
    listing,
    search,
    updated,
)
from disclosure.memories import MemoryBook
from disclosure.namespaces import DEFAULT_PART
from disclosure.pool import ControllerPool
from tiers.errors import MemoryNotFoundError

__all__ = ["Mem0Route", "mem0_router"]

log = logging.getLogger(__name__)

VERBATIM = (
    "stored verbatim, one memory per message (this server runs no model to extract facts; "
    "system messages are instructions and are not stored)"
)
MAX_QUERY_MAPPING_CHARS = 8192
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Mem0Error, "description": text}
    for status, text in (
        (400, "malformed, or something this server does not do (the message says what)"),
        (401, "missing or wrong API key"),
        (403, "a key without access, or a Host or Origin this server does not serve"),
        (404, "no such memory or entity"),
        (413, "request too large"),
        (422, "invalid request"),
        (503, "storage unavailable"),
        (507, "the server's disk is full"),
    )
}


class _Mem0Id(Convertor[str]):
    """One path segment without a line break: Starlette's ``path`` convertor stops at line
    breaks, so a segment with one reaches no route here either (not through the trailing-slash
    redirect, which would hand another route's request to this one)."""

    regex = "[^/\n]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("mem0id", _Mem0Id())
Mem0Id = Annotated[
    str,
    Path(max_length=MAX_MEM0_ID_CHARS, description="a memory's id, as this API's answers give it"),
]


class Mem0Route(APIRoute):
    """A route whose errors also carry ``detail``, the text mem0's client raises."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                plain = await render_error(request, exc)
                body = json.loads(bytes(plain.body))
                body["detail"] = body["error"]["message"]
                kept = {
                    k: v
                    for k, v in plain.headers.items()
                    if k.lower() not in ("content-length", "content-type")
                }
                return JSONResponse(body, status_code=plain.status_code, headers=kept)

        return answer


def mem0_router(pool: ControllerPool, keys: ApiKeys) -> APIRouter:
    """The mem0 routes over ``pool``, behind ``keys`` (none: open, like the rest)."""
    router = APIRouter(route_class=Mem0Route, tags=["mem0"], responses=_ERRORS)
    scope_of = _scope(pool, keys)
    scoped = Annotated[Scope, Depends(scope_of)]

    @router.get("/v1/ping/", response_model=None, responses={200: {"model": Mem0Ping}})
    def ping(scope: scoped) -> dict[str, Any]:
        """The key is valid; its tenant is mem0's org and project."""
        return {
            "status": "ok",
            "org_id": scope.tenant_name,
            "project_id": scope.tenant_name,
            "user_email": None,
        }

    _memory_routes(router, pool, scoped)
    _entity_routes(router, pool, scoped)
    _refusals(router, scoped)
    return router


def _memory_routes(router: APIRouter, pool: ControllerPool, scoped: Any) -> None:
    limits = pool.profile.service

    @router.post(
        "/v3/memories/add/", response_model=None, responses={200: {"model": Mem0AddResponse}}
    )
    def add(body: AddBody, scope: scoped) -> dict[str, Any]:
        """Store each message verbatim (one memory each), for the user, agent, app and run
        given at the top or in ``filters``."""
        _refuse_extraction(body)
        _check_project(scope, body.org_id, body.project_id)
        if len(body.messages) > limits.max_memories:
            raise ApiError(
                413,
                "too_many_memories",
                f"{len(body.messages)} messages; the limit is {limits.max_memories}",
            )
        ids = _entities(body)
        namespace = scope.namespace(ids["user_id"], ids["run_id"], write=True)
        metadata = check_metadata(body.metadata)
        metadata.update({k: ids[k] for k in ("agent_id", "app_id") if ids[k] is not None})
        messages = [m.model_dump(exclude_none=True) for m in body.messages]
        with pool.writing(namespace) as controller:
            added = MemoryBook(controller).add(
                messages,
                session_id=ids["run_id"] or "default",
                metadata=metadata,
                timestamp=_when(body),
            )
        results = [
            {
                "id": encode_id(namespace, r.id),
                "memory": r.content,
                "data": {"memory": r.content},
                "event": r.event,
            }
            for r in added.results
        ]
        return {"results": results, "status": "SUCCEEDED", "message": VERBATIM}

    @router.post(
        "/v3/memories/search/", response_model=None, responses={200: {"model": Mem0SearchResponse}}
    )
    def search_memories(body: SearchBody, scope: scoped) -> dict[str, Any]:
        """The best matches for ``query`` among the memories ``filters`` selects."""
        _check_project(scope, body.org_id, body.project_id)
        _refuse(categories=body.categories, enable_graph=body.enable_graph)
        raw = _with_metadata(body.filters, body.metadata)
        flt = parse_filters(raw, run_is_namespace=scope.run_is_namespace)
        namespace = scope.namespace(flt.user_id, _run_part(scope, flt), write=False)
        if not pool.exists(namespace):
            return {"results": []}
        with pool.lease(namespace) as controller:
            found = search(
                controller,
                namespace,
                flt,
                body.query.strip(),
                top_k=body.top_k or body.limit or 10,
                threshold=body.threshold,
                now=_reference(body.reference_date),
                run_is_namespace=scope.run_is_namespace,
            )
        return {"results": _only(found, body.fields)}

    @router.post("/v3/memories/", response_model=None, responses={200: {"model": Mem0Page}})
    def list_memories(
        body: ListBody,
        request: Request,
        scope: scoped,
        page: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
        page_size: Annotated[int | None, Query(ge=1, le=1000)] = None,
    ) -> dict[str, Any]:
        """The memories ``filters`` selects, in time order, ``page_size`` a page."""
        _check_project(scope, body.org_id, body.project_id)
        _refuse(categories=body.categories, enable_graph=body.enable_graph)
        number, size = page or body.page or 1, page_size or body.page_size or 100
        flt = parse_filters(_dated(body), run_is_namespace=scope.run_is_namespace)
        namespace = scope.namespace(flt.user_id, _run_part(scope, flt), write=False)
        if not pool.exists(namespace):
            return {"count": 0, "next": None, "previous": None, "results": []}
        words = body.keywords.casefold() if body.keywords else None
        with pool.lease(namespace) as controller:
            count, found = listing(
                controller,
                namespace,
                flt,
                keep=(lambda m: words in m.content.casefold()) if words else None,
                offset=(number - 1) * size,
                size=size,
                session=None if scope.run_is_namespace else flt.run_id,
                run_is_namespace=scope.run_is_namespace,
            )
        return {
            "count": count,
            "next": _page_url(request, number + 1, size) if number * size < count else None,
            "previous": _page_url(request, number - 1, size) if number > 1 else None,
            "results": _only(found, body.fields),
        }

    _one_memory_routes(router, pool, scoped)
    _delete_routes(router, pool, scoped)


def _one_memory_routes(router: APIRouter, pool: ControllerPool, scoped: Any) -> None:
    @router.get(
        "/v1/memories/{memory_id:mem0id}/",
        response_model=None,
        responses={200: {"model": Mem0Memory}},
    )
    def get_memory(memory_id: Mem0Id, scope: scoped) -> dict[str, Any]:
        """One memory by its mem0 id."""
        namespace, ours = scope.of_id(memory_id, write=False)
        with pool.lease(namespace) as controller:
            memory = _existing(controller, ours, memory_id)
            return record(
                memory,
                namespace,
                updated_at=updated(controller, memory),
                run_is_namespace=scope.run_is_namespace,
            )

    @router.put(
        "/v1/memories/{memory_id:mem0id}/",
        response_model=None,
        responses={200: {"model": Mem0Memory}},
    )
    def update_memory(memory_id: Mem0Id, body: UpdateBody, scope: scoped) -> dict[str, Any]:
        """New text and/or metadata; the replaced version stays in the history."""
        _refuse_update(body)
        namespace, ours = scope.of_id(memory_id, write=True)
        with pool.lease(namespace) as controller:
            return _update(controller, namespace, ours, body, scope=scope, token=memory_id)

    @router.delete(
        "/v1/memories/{memory_id:mem0id}/",
        response_model=None,
        responses={200: {"model": Mem0Message}},
    )
    def delete_memory(
        memory_id: Mem0Id,
        scope: scoped,
        delete_linked: Annotated[bool, Query(description="accepted; versions go anyway")] = False,
    ) -> dict[str, Any]:
        """Forget one memory everywhere, with its earlier versions."""
        namespace, ours = scope.of_id(memory_id, write=True)
        with pool.lease(namespace) as controller:
            _existing(controller, ours, memory_id)
            controller.forget(ids=[ours])
        return {"message": "Memory deleted successfully!"}

    @router.get(
        "/v1/memories/{memory_id:mem0id}/history/",
        response_model=None,
        responses={200: {"model": list[Mem0HistoryEntry]}},
    )
    def memory_history(memory_id: Mem0Id, scope: scoped) -> list[dict[str, Any]]:
        """Every version kept of one memory, oldest first."""
        namespace, ours = scope.of_id(memory_id, write=False)
        with pool.lease(namespace) as controller:
            return history(controller, namespace, ours, memory_id, run=scope.run_is_namespace)


def _delete_routes(router: APIRouter, pool: ControllerPool, scoped: Any) -> None:
    @router.delete("/v1/memories/", response_model=None, responses={200: {"model": Mem0Message}})
    def delete_all(
        *,
        scope: scoped,
        user_id: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
        agent_id: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
        app_id: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
        run_id: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
        metadata: Annotated[str | None, Query(max_length=MAX_QUERY_MAPPING_CHARS)] = None,
        filters: Annotated[str | None, Query(max_length=MAX_QUERY_MAPPING_CHARS)] = None,
        org_id: Annotated[str | None, Query(max_length=300)] = None,
        project_id: Annotated[str | None, Query(max_length=300)] = None,
    ) -> dict[str, Any]:
        """Forget the memories the entity ids (``*``: any) and filters select."""
        _check_project(scope, org_id, project_id)
        given = {"user_id": user_id, "agent_id": agent_id, "app_id": app_id, "run_id": run_id}
        raw: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if metadata is not None:
            raw["metadata"] = _query_mapping("metadata", metadata)
        if filters is not None:
            raw = (
                {"AND": [raw, _query_mapping("filters", filters)]}
                if raw
                else (_query_mapping("filters", filters))
            )
        if not raw:
            raise invalid("delete_all needs at least one filter (user_id='*' for every user)")
        count = _delete_where(pool, scope, raw)
        return {"message": "Memories deleted successfully!", "count": count}

    @router.put("/v1/batch/", response_model=None, responses={200: {"model": Mem0Message}})
    def batch_update(body: BatchBody, scope: scoped) -> dict[str, Any]:
        """Update up to 1000 memories; every id is checked before any is changed."""
        targets = [(scope.of_id(m.memory_id, write=True), m) for m in body.memories]
        for (namespace, ours), item in targets:
            if item.text is None and item.metadata is None:
                raise invalid(f"batch item {item.memory_id[:40]!r}: give text and/or metadata")
            with pool.lease(namespace) as controller:
                _existing(controller, ours, item.memory_id)
        for (namespace, ours), item in targets:
            with pool.lease(namespace) as controller:
                _update(controller, namespace, ours, item, scope=scope, token=item.memory_id)
        return {"message": f"Successfully updated {len(targets)} memories"}

    @router.delete("/v1/batch/", response_model=None, responses={200: {"model": Mem0Message}})
    def batch_delete(body: BatchBody, scope: scoped) -> dict[str, Any]:
        """Forget up to 1000 memories; every id is checked before any is forgotten."""
        targets = [scope.of_id(m.memory_id, write=True) for m in body.memories]
        for (namespace, ours), item in zip(targets, body.memories, strict=True):
            with pool.lease(namespace) as controller:
                _existing(controller, ours, item.memory_id)
        count = 0
        for namespace, ours in targets:
            with pool.lease(namespace) as controller:
                count += controller.forget(ids=[ours]).count
        return {"message": f"Successfully deleted {count} memories", "count": count}


def _entity_routes(router: APIRouter, pool: ControllerPool, scoped: Any) -> None:
    @router.get("/v1/entities/", response_model=None, responses={200: {"model": Mem0Entities}})
    def entities(
        scope: scoped,
        org_id: Annotated[str | None, Query(max_length=300)] = None,
        project_id: Annotated[str | None, Query(max_length=300)] = None,
    ) -> dict[str, Any]:
        """The users, agents, apps and runs memories are kept for in the key's tenant (reads
        every stored namespace of the tenant)."""
        _check_project(scope, org_id, project_id)
        tally = EntityTally()
        for namespace in scope.stored():
            scope.authorise(namespace, write=False)
            with pool.lease(namespace) as controller:
                tally.count(controller, namespace)
        results = tally.results(scope.tenant_name)
        totals = {f"total_{k}s": sum(1 for r in results if r["type"] == k) for k in _KINDS}
        return {"count": len(results), "next": None, "previous": None, "results": results, **totals}

    @router.delete(
        "/v2/entities/{entity_type}/{entity_id}/",
        response_model=None,
        responses={200: {"model": Mem0Message}},
    )
    def delete_entity(entity_type: str, entity_id: str, scope: scoped) -> dict[str, Any]:
        """Forget every memory of one user, agent, app or run of the key's tenant."""
        if entity_type not in _KINDS:
            raise invalid(f"entity type {entity_type[:20]!r}: use user, agent, app or run")
        wanted = {f"{entity_type}_id": entity_id}
        if entity_type != "user":  # mem0's agents, apps and runs span the project's users
            wanted["user_id"] = "*"
        count = _delete_where(pool, scope, wanted)  # none left is no error: reset goes on
        return {"message": "Entity deleted successfully.", "count": count}


_KINDS = ("user", "agent", "app", "run")


def _refusals(router: APIRouter, scoped: Any) -> None:
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


# -- helpers ------------------------------------------------------------------------------------


def _scope(pool: ControllerPool, keys: ApiKeys) -> Callable[..., Scope]:
    """A dependency: the request's key (``Authorization: Token KEY``, ``Bearer KEY`` or
    ``X-API-Key``) as the namespaces it reaches; 401 when keys are on and it is not one."""

    def scope(request: Request) -> Scope:
        if not keys:
            return Scope(pool, None)
        given = request.headers.get("x-api-key")
        scheme, _, credential = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() in ("token", "bearer") and credential.strip():
            given = credential.strip()
        grant: Grant | None = keys.grant(given)
        if grant is None:
            raise ApiError(
                401,
                "unauthorized",
                "a valid API key is required (Authorization: Token KEY, as mem0's client sends)",
            )
        log.info("%s %s by %s", request.method, request.url.path, grant.label)
        return Scope(pool, grant)

    return scope


def _entities(body: AddBody) -> dict[str, str | None]:
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


def _refuse_extraction(body: AddBody) -> None:
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
    _refuse(enable_graph=body.enable_graph, temporal_reasoning=body.temporal_reasoning)
    _refuse_lifetime(body.expiration_date, body.immutable)
    if body.timezone is not None or body.observation_date is not None:
        raise unsupported(
            "give the time as timestamp (Unix seconds) or observation_datetime (ISO, with offset)"
        )


def _refuse(
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


def _refuse_update(body: UpdateBody) -> None:
    _refuse_lifetime(body.expiration_date)
    if body.timestamp is not None:
        raise unsupported("a memory keeps the time it was said; it is not changed by update")
    if body.text is None and body.metadata is None:
        raise invalid("update needs text and/or metadata")


def _check_project(scope: Scope, org_id: str | None, project_id: str | None) -> None:
    for name, value in (("org_id", org_id), ("project_id", project_id)):
        if value is not None and value != scope.tenant_name:
            raise unsupported(f"{name} {value[:40]!r}: {_PROJECTS}")


def _when(body: AddBody) -> datetime | None:
    if body.timestamp is not None and body.observation_datetime is not None:
        raise invalid("give timestamp or observation_datetime, not both")
    if body.timestamp is not None:
        return datetime.fromtimestamp(body.timestamp, UTC)
    moment = body.observation_datetime
    return None if moment is None else moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _reference(value: int | float | str | None) -> datetime | None:
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


def _with_metadata(filters: Any, metadata: Mapping[str, Any] | None) -> Any:
    if not metadata:
        return filters
    if not isinstance(filters, Mapping) or not filters:
        return filters  # parse_filters says what is missing
    return {"AND": [filters, {"metadata": dict(metadata)}]}


def _dated(body: ListBody) -> Any:
    bounds = {k: v for k, v in (("gte", body.start_date), ("lte", body.end_date)) if v}
    if not bounds or not isinstance(body.filters, Mapping) or not body.filters:
        return body.filters
    return {"AND": [body.filters, {"created_at": bounds}]}


def _run_part(scope: Scope, flt: Filter) -> str | None:
    return flt.run_id if scope.run_is_namespace else None


def _only(found: list[dict[str, Any]], fields: list[str] | None) -> list[dict[str, Any]]:
    """Each record cut to ``fields`` (mem0's ``fields``), when given."""
    if not fields:
        return found
    known = set(Mem0Memory.model_fields)
    unknown = sorted(set(fields) - known)
    if unknown:
        raise invalid(f"fields: unknown {unknown[0][:40]!r}; known: {', '.join(sorted(known))}")
    return [{k: v for k, v in r.items() if k in fields} for r in found]


def _page_url(request: Request, number: int, size: int) -> str:
    return str(request.url.include_query_params(page=number, page_size=size))


def _query_mapping(name: str, raw: str) -> dict[str, Any]:
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


def _existing(controller: Any, memory_id: str, token: str) -> Any:
    found = controller.store.get([memory_id])
    if not found:
        raise MemoryNotFoundError(f"no memory has the id {token[:60]!r}")
    return found[0]


def _update(
    controller: Any,
    namespace: Any,
    memory_id: str,
    change: UpdateBody | BatchItem,
    *,
    scope: Scope,
    token: str,
) -> dict[str, Any]:
    """Apply ``change`` (text and/or metadata; this server's own keys are kept)."""
    memory = _existing(controller, memory_id, token)
    merged = None
    if change.metadata is not None:
        kept = {k: v for k, v in memory.metadata.items() if k in RESERVED_METADATA}
        merged = {**check_metadata(change.metadata), **kept}
    MemoryBook(controller).update(memory_id, change.text, metadata=merged)
    fresh = _existing(controller, memory_id, token)
    return record(
        fresh,
        namespace,
        updated_at=updated(controller, fresh),
        run_is_namespace=scope.run_is_namespace,
    )


def _delete_where(pool: ControllerPool, scope: Scope, raw: dict[str, Any]) -> int:
    """Forget what ``raw`` selects. No user_id is the user ``default``; ``"*"`` walks every
    stored user of the tenant; where runs are namespaces, every run of the user unless one is
    named."""
    every_user = raw.get("user_id") == "*"
    every_run = scope.run_is_namespace and raw.get("run_id") == "*"
    rest = {
        k: v
        for k, v in raw.items()
        if not ((k == "user_id" and every_user) or (k == "run_id" and every_run))
    }
    flt = parse_filters(rest, run_is_namespace=scope.run_is_namespace) if rest else None
    user = None if every_user else (flt.user_id if flt and flt.user_id else DEFAULT_PART)
    run = flt.run_id if flt and scope.run_is_namespace else None
    if every_user or (scope.run_is_namespace and run is None):
        targets = scope.stored(user=user, run=run)
    else:
        targets = [scope.namespace(user, run, write=True)]
    count = 0
    for namespace in targets:
        scope.authorise(namespace, write=True)
        if not pool.exists(namespace):
            continue
        with pool.lease(namespace) as controller:
            count += forget_matching(
                controller, namespace, flt, run_is_namespace=scope.run_is_namespace
            )
    return count

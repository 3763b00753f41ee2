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
onto namespaces and how ids are made: :mod:`disclosure.faces.api.mem0_records`. Errors carry mem0's
``detail`` beside this API's ``error``. (No ``from __future__ import annotations``: FastAPI
reads the routes' annotations.)
"""

import json
import logging
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.convertors import Convertor, register_url_convertor

from disclosure.faces.api.errors import ApiError, render_error
from disclosure.faces.api.keys import ApiKeys, Grant
from disclosure.faces.api.mem0_filters import invalid, parse_filters
from disclosure.faces.api.mem0_records import (
    MAX_MEM0_ID_CHARS,
    AddBody,
    BatchBody,
    ListBody,
    SearchBody,
    UpdateBody,
    check_metadata,
    encode_id,
    record,
)
from disclosure.faces.api.mem0_requests import (
    MAX_QUERY_MAPPING_CHARS,
    VERBATIM,
    add_refusals,
    check_project,
    dated,
    entity_ids,
    only,
    page_url,
    query_mapping,
    reference,
    refuse,
    refuse_extraction,
    refuse_update,
    run_part,
    when,
    with_metadata,
)
from disclosure.faces.api.mem0_schema import (
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
from disclosure.faces.api.mem0_store import (
    EntityTally,
    Scope,
    apply_update,
    delete_where,
    existing,
    history,
    listing,
    search,
    updated,
)
from disclosure.faces.memories import MemoryBook
from disclosure.service.pool import ControllerPool

__all__ = ["Mem0Route", "mem0_router"]

log = logging.getLogger(__name__)

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
    add_refusals(router, scoped)
    return router


def _memory_routes(router: APIRouter, pool: ControllerPool, scoped: Any) -> None:
    limits = pool.profile.service

    @router.post(
        "/v3/memories/add/", response_model=None, responses={200: {"model": Mem0AddResponse}}
    )
    def add(body: AddBody, scope: scoped) -> dict[str, Any]:
        """Store each message verbatim (one memory each), for the user, agent, app and run
        given at the top or in ``filters``."""
        refuse_extraction(body)
        check_project(scope, body.org_id, body.project_id)
        if len(body.messages) > limits.max_memories:
            raise ApiError(
                413,
                "too_many_memories",
                f"{len(body.messages)} messages; the limit is {limits.max_memories}",
            )
        ids = entity_ids(body)
        namespace = scope.namespace(ids["user_id"], ids["run_id"], write=True)
        metadata = check_metadata(body.metadata)
        metadata.update({k: ids[k] for k in ("agent_id", "app_id") if ids[k] is not None})
        messages = [m.model_dump(exclude_none=True) for m in body.messages]
        with pool.writing(namespace) as controller:
            added = MemoryBook(controller).add(
                messages,
                session_id=ids["run_id"] or "default",
                metadata=metadata,
                timestamp=when(body),
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
        check_project(scope, body.org_id, body.project_id)
        refuse(categories=body.categories, enable_graph=body.enable_graph)
        raw = with_metadata(body.filters, body.metadata)
        flt = parse_filters(raw, run_is_namespace=scope.run_is_namespace)
        namespace = scope.namespace(flt.user_id, run_part(scope, flt), write=False)
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
                now=reference(body.reference_date),
                run_is_namespace=scope.run_is_namespace,
            )
        return {"results": only(found, body.fields)}

    @router.post("/v3/memories/", response_model=None, responses={200: {"model": Mem0Page}})
    def list_memories(
        body: ListBody,
        request: Request,
        scope: scoped,
        page: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
        page_size: Annotated[int | None, Query(ge=1, le=1000)] = None,
    ) -> dict[str, Any]:
        """The memories ``filters`` selects, in time order, ``page_size`` a page."""
        check_project(scope, body.org_id, body.project_id)
        refuse(categories=body.categories, enable_graph=body.enable_graph)
        number, size = page or body.page or 1, page_size or body.page_size or 100
        flt = parse_filters(dated(body), run_is_namespace=scope.run_is_namespace)
        namespace = scope.namespace(flt.user_id, run_part(scope, flt), write=False)
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
            "next": page_url(request, number + 1, size) if number * size < count else None,
            "previous": page_url(request, number - 1, size) if number > 1 else None,
            "results": only(found, body.fields),
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
            memory = existing(controller, ours, memory_id)
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
        refuse_update(body)
        namespace, ours = scope.of_id(memory_id, write=True)
        with pool.lease(namespace) as controller:
            return apply_update(controller, namespace, ours, body, scope=scope, token=memory_id)

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
            existing(controller, ours, memory_id)
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
        check_project(scope, org_id, project_id)
        given = {"user_id": user_id, "agent_id": agent_id, "app_id": app_id, "run_id": run_id}
        raw: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        if metadata is not None:
            raw["metadata"] = query_mapping("metadata", metadata)
        if filters is not None:
            raw = (
                {"AND": [raw, query_mapping("filters", filters)]}
                if raw
                else (query_mapping("filters", filters))
            )
        if not raw:
            raise invalid("delete_all needs at least one filter (user_id='*' for every user)")
        count = delete_where(pool, scope, raw)
        return {"message": "Memories deleted successfully!", "count": count}

    @router.put("/v1/batch/", response_model=None, responses={200: {"model": Mem0Message}})
    def batch_update(body: BatchBody, scope: scoped) -> dict[str, Any]:
        """Update up to 1000 memories; every id is checked before any is changed."""
        targets = [(scope.of_id(m.memory_id, write=True), m) for m in body.memories]
        for (namespace, ours), item in targets:
            if item.text is None and item.metadata is None:
                raise invalid(f"batch item {item.memory_id[:40]!r}: give text and/or metadata")
            with pool.lease(namespace) as controller:
                existing(controller, ours, item.memory_id)
        for (namespace, ours), item in targets:
            with pool.lease(namespace) as controller:
                apply_update(controller, namespace, ours, item, scope=scope, token=item.memory_id)
        return {"message": f"Successfully updated {len(targets)} memories"}

    @router.delete("/v1/batch/", response_model=None, responses={200: {"model": Mem0Message}})
    def batch_delete(body: BatchBody, scope: scoped) -> dict[str, Any]:
        """Forget up to 1000 memories; every id is checked before any is forgotten."""
        targets = [scope.of_id(m.memory_id, write=True) for m in body.memories]
        for (namespace, ours), item in zip(targets, body.memories, strict=True):
            with pool.lease(namespace) as controller:
                existing(controller, ours, item.memory_id)
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
        check_project(scope, org_id, project_id)
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
        count = delete_where(pool, scope, wanted)  # none left is no error: reset goes on
        return {"message": "Entity deleted successfully.", "count": count}


_KINDS = ("user", "agent", "app", "run")


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

"""The FastAPI application: one route per controller operation, namespaced by query parameters.

Every ``/v1`` route takes the profile's namespace parts (``?tenant=...&user=...``) as query
parameters and works in that namespace's store only; a disclosure id, a citation or an id from
one namespace means nothing in another. Routes are sync functions: FastAPI runs them in its
thread pool, and the controllers are thread-safe.
"""

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from disclosure._version import __version__
from disclosure.core.empty import nothing_stored
from disclosure.core.profiles import Profile
from disclosure.core.result import DisclosureResult
from disclosure.core.workflow import search_index, timeline
from disclosure.faces.api import memory_routes
from disclosure.faces.api.errors import ApiError, install
from disclosure.faces.api.guards import BodyLimit, RecentResults
from disclosure.faces.api.hosts import HostGuard
from disclosure.faces.api.keys import ApiKeys, Grant
from disclosure.faces.api.mem0_routes import mem0_router
from disclosure.faces.api.models import (
    MAX_REF_CHARS,
    DiscloseRequest,
    DiscloseResponse,
    ErrorResponse,
    FeedbackRequest,
    FeedbackResponse,
    ForgetRequest,
    ForgetResponse,
    HealthResponse,
    IngestRequest,
    IngestResponse,
    MemoryIn,
    SearchRequest,
    SearchResponse,
    ShowResponse,
    StatsResponse,
    TextResponse,
    TimelineRequest,
)
from disclosure.faces.api.observability import ObservedRequests, Observer
from disclosure.faces.api.queries import check_query_encoding, refuse_unknown_parameters
from disclosure.faces.api.summaries import BackgroundConsolidation, add_routes
from disclosure.faces.memories import MemoryBook
from disclosure.faces.viewer import install_viewer
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import MAX_PART_CHARS, NAMESPACE_PARTS, Namespace, default_home
from tiers.base import Embedder
from tiers.errors import (
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    NamespaceError,
)
from tiers.memory import Memory

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": text}
    for status, text in (
        (400, "unreadable body"),
        (403, "refused: a Host or Origin this server does not serve, or a key without access"),
        (404, "not found"),
        (413, "request too large"),
        (422, "invalid request"),
        (503, "storage or tier unavailable"),
        (507, "the server's disk is full"),
    )
}
_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "missing or wrong API key"},
}
log = logging.getLogger(__name__)
_Auth = Callable[..., Grant | None]
_ANONYMOUS = Grant("anonymous")


def create_app(
    profile: str | Path | Profile = "default",
    *,
    root: Path | str | None = None,
    pool: ControllerPool | None = None,
    api_keys: ApiKeys | Sequence[str] = (),
    embedder: Embedder | str | None = None,
    results_dir: Path | None = None,
    allowed_hosts: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    upstream: str | None = None,
) -> FastAPI:
    """The HTTP API over a pool of namespaced controllers (made from ``profile`` and ``root``
    unless ``pool`` is given; a pool made here is closed when the app shuts down).

    ``allowed_hosts``: Host names served besides the loopback ones (``*``: any);
    ``cors_origins``: browser origins allowed to call it (see :mod:`disclosure.faces.api.hosts`);
    ``upstream``: an OpenAI-compatible base URL; ``POST /v1/chat/completions`` then forwards
    to it with memory (:mod:`disclosure.faces.api.proxy`)."""
    owned = pool is None
    controllers = pool or ControllerPool(profile, root=root or default_home(), embedder=embedder)
    keys = api_keys if isinstance(api_keys, ApiKeys) else ApiKeys(api_keys)

    background = BackgroundConsolidation(controllers)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        background.start()
        yield
        background.stop()
        if owned:
            controllers.close()

    app = FastAPI(
        title="tiered-disclosure",
        version=__version__,
        description="How much past memory an LLM sees for each query, in the cheapest form.",
        lifespan=lifespan,
        docs_url=None,  # the viewer serves an offline /docs (Swagger UI would load from a CDN)
        redoc_url=None,
    )
    install(app)
    app.add_middleware(BodyLimit, max_bytes=controllers.profile.service.max_body_bytes)
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key"],
        )
    app.add_middleware(HostGuard, allowed_hosts=allowed_hosts, cors_origins=cors_origins)
    observer = Observer(controllers)
    app.add_middleware(ObservedRequests, observer=observer)  # outermost: sees every answer
    app.state.pool = controllers
    app.state.observer = observer
    app.state.consolidation = background

    @app.get("/health", response_model=HealthResponse, tags=["service"])
    def health() -> HealthResponse:
        """Liveness: always answers, never needs a key."""
        return HealthResponse(
            status="ok",
            version=__version__,
            profile=controllers.profile.name,
            open_namespaces=len(controllers.open_namespaces()),
        )

    # before the /v1 routes: mem0's paths end in a slash, which /v1/memories/{ref} would take
    app.include_router(mem0_router(controllers, keys))
    app.include_router(_routes(controllers, keys, observer))
    if upstream:
        from disclosure.faces.api.proxy import proxy_router

        app.include_router(proxy_router(controllers, keys, upstream, observer=observer))

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(_auth(keys))])
    def metrics() -> Response:
        """Prometheus metrics (:mod:`disclosure.faces.api.observability`); behind the API keys."""
        body, content_type = observer.exposition()
        return Response(body, media_type=content_type)

    install_viewer(app, controllers, keys, results_dir=results_dir)
    return app


def _routes(pool: ControllerPool, keys: ApiKeys, observer: Observer) -> APIRouter:
    responses = {**_ERRORS, **(_AUTH_ERRORS if keys else {})}
    auth = _auth(keys)
    router = APIRouter(prefix="/v1", responses=responses, tags=["memory"])
    limits = pool.profile.service
    results = RecentResults(limits.results_kept, limits.results_ttl_seconds)
    memory_routes.register(
        router,
        pool,
        reading=Annotated[Namespace, Depends(_namespace_dependency(pool, auth, write=False))],
        writing=Annotated[Namespace, Depends(_namespace_dependency(pool, auth, write=True))],
    )
    _write_routes(router, pool, results, auth)
    _read_routes(router, pool, results, auth, observer)
    add_routes(
        router,
        pool,
        read=_namespace_dependency(pool, auth, write=False),
        write=_namespace_dependency(pool, auth, write=True),
    )
    return router


def _write_routes(
    router: APIRouter, pool: ControllerPool, results: RecentResults, auth: _Auth
) -> None:
    ns_type = Annotated[Namespace, Depends(_namespace_dependency(pool, auth, write=True))]
    limits = pool.profile.service

    @router.post("/ingest", response_model=IngestResponse)
    def ingest(body: IngestRequest, ns: ns_type) -> IngestResponse:
        """Store memories (a memory with a known id replaces it)."""
        if len(body.memories) > limits.max_memories:
            raise ApiError(
                413,
                "too_many_memories",
                f"{len(body.memories)} memories in one request; the limit is {limits.max_memories}",
            )
        memories = [_memory(i, m) for i, m in enumerate(body.memories)]
        with pool.writing(ns) as controller:
            report = controller.ingest(memories)
        return IngestResponse(**asdict(report))

    @router.post("/feedback", response_model=FeedbackResponse)
    def feedback(body: FeedbackRequest, ns: ns_type) -> FeedbackResponse:
        """What the model's reply used of a disclosure (once per disclosure)."""
        _check_text(body.reply)
        result = results.take(ns.key, body.disclosure_id)
        if result is None:
            raise ApiError(
                404,
                "unknown_disclosure",
                "no recent disclosure has this id in this namespace (each takes feedback once, "
                f"within {limits.results_ttl_seconds:g} s)",
            )
        if not pool.exists(ns):  # an empty disclosure of a namespace that does not exist
            return FeedbackResponse(
                used=[], cited=[], overlap={}, depth=0, tokens_used=0, budget=result.budget
            )
        with pool.lease(ns) as controller:
            report = controller.feedback(result, body.reply, session_id=body.session_id)
        return FeedbackResponse(
            used=list(report.used),
            cited=list(report.cited),
            overlap=dict(report.overlap),
            depth=report.depth,
            tokens_used=report.tokens_used,
            budget=report.budget,
        )

    @router.post("/forget", response_model=ForgetResponse)
    def forget(body: ForgetRequest, ns: ns_type) -> ForgetResponse:
        """Remove memories by id and/or a whole session, everywhere (their text is erased
        from the namespace's files)."""
        if body.ids is None and body.session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        if not pool.exists(ns):  # nothing stored: nothing to forget, and nothing to create
            return ForgetResponse(count=0, ids=[], citations=[], sessions=[])
        with pool.lease(ns) as controller:
            report = controller.forget(ids=body.ids, session_id=body.session_id)
        return ForgetResponse(
            count=report.count,
            ids=list(report.ids),
            citations=list(report.citations),
            sessions=list(report.sessions),
        )


def _read_routes(
    router: APIRouter,
    pool: ControllerPool,
    results: RecentResults,
    auth: _Auth,
    observer: Observer,
) -> None:
    ns_type = Annotated[Namespace, Depends(_namespace_dependency(pool, auth, write=False))]
    limits = pool.profile.service

    @router.post("/disclose", response_model=DiscloseResponse)
    def disclose(body: DiscloseRequest, ns: ns_type) -> DiscloseResponse:
        """The context for a query, within its budget; keep ``disclosure_id`` for feedback."""
        _check_query(body.query, limits.max_query_chars)
        if len(body.history) > limits.max_history:
            raise ApiError(
                422,
                "history_too_long",
                f"{len(body.history)} history turns; the limit is {limits.max_history}",
            )
        history = [h if isinstance(h, str) else h.model_dump() for h in body.history]
        _check_text(body.query, *(h if isinstance(h, str) else h["content"] for h in history))
        options: dict[str, Any] = {
            "history": history,
            "now": body.now,
            "level": body.level,
            "budget": body.budget,
            "context_window": body.context_window,
            "prompt_tokens": body.prompt_tokens,
        }
        if not pool.exists(ns):  # nothing to disclose, and nothing to create
            result = pool.empty.disclose(body.query, warning=nothing_stored(ns), **options)
        else:
            with pool.lease(ns) as controller:
                result = controller.disclose(body.query, **options)
        observer.disclosed(result)
        return _disclosed(results.put(ns.key, result), result)

    @router.get("/memories/{ref:path}", response_model=ShowResponse)
    def show(ref: str, ns: ns_type) -> ShowResponse:
        """One memory in full detail, by id or citation (``mem:a7Bc3x``)."""
        _check_ref(ref)
        if not pool.exists(ns):  # the memory is not there: nothing was ever stored
            raise MemoryNotFoundError(
                f"no memory has the id or citation {ref!r}: {nothing_stored(ns)}"
            )
        with pool.lease(ns) as controller:
            text = controller.show(ref)
            return ShowResponse(ref=ref, text=text, memory=MemoryBook(controller).get(ref))

    @router.get("/stats", response_model=StatsResponse)
    def stats(ns: ns_type) -> StatsResponse:
        """Counts per tier, pending embeddings, disk, caches, learned budgets."""
        if not pool.exists(ns):
            warning = nothing_stored(ns)
            numbers = pool.empty.stats(warning)
            numbers.pop("warnings")
            warnings = [warning]
        else:
            with pool.lease(ns) as controller:
                numbers = controller.stats()
            warnings = []
        numbers.pop("data_dir", None)  # the server's paths are not the client's business
        return StatsResponse(namespace=ns.as_dict(), stats=numbers, warnings=warnings)

    @router.post("/search", response_model=SearchResponse)
    def search(body: SearchRequest, ns: ns_type) -> SearchResponse:
        """Layer 1: an index of the best matches (citation, summary, score)."""
        _check_query(body.query, limits.max_query_chars)
        _check_text(body.query)
        if not pool.exists(ns):
            return SearchResponse(results=[], warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            found = search_index(controller, body.query, limit=body.limit)
        return SearchResponse(results=found)

    @router.post("/timeline", response_model=TextResponse)
    def timeline_route(body: TimelineRequest, ns: ns_type) -> TextResponse:
        """Layer 2: what was said around the given memories, in their sessions."""
        for ref in body.refs:
            _check_ref(ref)
        if not pool.exists(ns):
            return TextResponse(text="", warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            return TextResponse(text=timeline(controller, body.refs, window=body.window))


def _auth(keys: ApiKeys) -> _Auth:
    """A dependency: the grant of the request's key (None when authentication is off)."""
    header = APIKeyHeader(name="X-API-Key", auto_error=False)
    bearer = HTTPBearer(auto_error=False)

    def check(
        api_key: Annotated[str | None, Security(header)],
        credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    ) -> Grant | None:
        given = api_key or (credentials.credentials if credentials else None)
        grant = keys.grant(given)
        if grant is None:
            raise ApiError(
                401,
                "unauthorized",
                "a valid API key is required (X-API-Key: KEY, or Authorization: Bearer KEY)",
            )
        return grant

    def open_access() -> Grant | None:
        return None

    return check if keys else open_access


def _namespace_dependency(
    pool: ControllerPool, auth: _Auth, *, write: bool
) -> Callable[..., Namespace]:
    """A dependency taking the profile's namespace parts as query parameters.

    A part outside the profile's scope, a part given twice or any other query parameter is
    refused (422), never ignored: a client must not believe it is isolated by a part that does
    not isolate it. The key's grant must cover the namespace's tenant (and writes, for a
    write route), else 403.
    """
    isolation = pool.profile.isolation

    def namespace(request: Request, grant: Grant | None, **declared: str | None) -> Namespace:
        check_query_encoding(request)
        query = request.query_params
        refuse_unknown_parameters(request, isolation.scope)
        repeated = [part for part in NAMESPACE_PARTS if len(query.getlist(part)) > 1]
        if repeated:
            raise NamespaceError(f"namespace {repeated[0]} is given more than once")
        ns = pool.namespace({part: query.get(part) for part in NAMESPACE_PARTS})
        _authorise(request, grant, ns, write=write)
        return ns

    required = isolation.required
    parameters = [
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
        inspect.Parameter(
            "grant",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[Grant | None, Depends(auth)],
        ),
        *(
            inspect.Parameter(
                part,
                inspect.Parameter.KEYWORD_ONLY,
                default=Query(
                    ... if required else None,
                    min_length=1,
                    max_length=MAX_PART_CHARS,
                    description=f"the {part} whose memories these are"
                    + ("" if required else " (default: 'default')"),
                ),
                annotation=str if required else str | None,
            )
            for part in isolation.scope
        ),
    ]
    namespace.__signature__ = inspect.Signature(parameters, return_annotation=Namespace)  # type: ignore[attr-defined]
    return namespace


def _authorise(request: Request, grant: Grant | None, ns: Namespace, *, write: bool) -> None:
    """403 unless ``grant`` covers ``ns``; log which key acted (its label, never the key)."""
    acting = grant or _ANONYMOUS
    log.info("%s %s by %s in %s", request.method, request.url.path, acting.label, ns)
    if grant is None or grant.allows(ns.as_dict().get("tenant"), write=write):
        return
    what = "write to" if write and grant.read_only else "act on"
    raise ApiError(403, "forbidden", f"this API key may not {what} {ns}")


def _memory(index: int, given: MemoryIn) -> Memory:
    fields = given.fields()
    _check_text(*_strings(fields))
    try:
        return Memory(**fields)
    except MemoryValidationError as exc:
        raise MemoryValidationError(f"memories -> {index}: {exc}", exc.errors) from None


def _strings(value: Any) -> list[str]:
    """Every string in a JSON-like value (keys too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _check_query(query: str, limit: int) -> None:
    if len(query) > limit:
        raise ApiError(
            422, "query_too_long", f"the query has {len(query)} characters; the limit is {limit}"
        )


def _check_ref(ref: str) -> None:
    if len(ref) > MAX_REF_CHARS:
        raise InvalidInputError(f"an id or citation has at most {MAX_REF_CHARS} characters")
    _check_text(ref)


def _check_text(*texts: str) -> None:
    """Lone surrogates (valid JSON escapes, invalid Unicode) cannot be stored or tokenised."""
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError("text must be valid Unicode (no lone surrogates)") from None


def _disclosed(token: str, result: DisclosureResult) -> DiscloseResponse:
    return DiscloseResponse(
        disclosure_id=token,
        text=result.text,
        items=list(result.items),
        level=result.level,
        budget=result.budget,
        tokens_used=result.tokens_used,
        full_history_tokens=result.full_history_tokens,
        savings=round(result.savings, 3),
        savings_line=result.savings_line,
        expansion_reason=result.expansion_reason,
        budget_reason=result.budget_reason,
        profile=result.profile,
        omitted=list(result.omitted),
        timings_ms=result.timings_ms,
        analysis=result.analysis.model_dump(mode="json"),
        warnings=list(result.warnings),
    )

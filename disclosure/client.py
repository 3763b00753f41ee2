"""Python clients for the HTTP API: :class:`MemoryClient` (sync) and :class:`AsyncMemoryClient`.

They have the controller's method names and result types (``ingest`` -> IngestReport,
``disclose`` -> DisclosureResult, ``show`` -> str, ``feedback`` -> FeedbackReport, ``forget`` ->
ForgetReport, ``stats`` -> dict), so code written against a :class:`DisclosureController` runs
against a service too::

    with MemoryClient.for_root(namespace={"user": "dana"}) as memory:  # the local service
        memory.ingest([{"id": "m1", "content": "We moved billing to Postgres."}])
        print(memory.disclose("Where does billing live?").text)

Connection errors are retried (a request that never reached the server is safe to send again);
the API's error codes come back as the library's exceptions (``not_found`` ->
MemoryNotFoundError, ``invalid_input`` -> InvalidInputError, ...; an unreachable service or a
refused key -> ServiceError). Importing this module loads neither spaCy, onnxruntime, torch nor
Chroma, so a command served by a running service starts quickly.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx

from tiers.errors import (
    CorruptDataError,
    DisclosureError,
    DiskFullError,
    IncompatibleDataError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryValidationError,
    MissingDependencyError,
    NamespaceError,
    ProfileError,
    RegistryError,
    ServiceError,
    StorageError,
    TierClosedError,
    TierUnavailableError,
    TokenizerError,
)
from tiers.reports import ForgetReport, IngestReport

if TYPE_CHECKING:
    from analyzers import DisclosureLevel
    from disclosure.mcp.workflow import IndexEntry
    from disclosure.pipeline.feedback import FeedbackReport
    from disclosure.result import DisclosureResult
    from tiers.memory import Memory

__all__ = ["AsyncMemoryClient", "MemoryClient"]

MAX_BATCH = 500  # memories per request (the API takes up to service.max_memories, 1000)
MAX_BATCH_BYTES = 512 * 1024  # and stays under its body limit (1 MiB by default)
MAX_REFS = 100  # ids or citations per details call, as the MCP workflow takes them
_MEMORY_FIELDS = (
    "id", "content", "timestamp", "session_id", "kind", "speaker", "summary", "entities",
    "importance", "metadata",
)  # fmt: skip
# The API's stable error codes, back to the library's exceptions.
_ERRORS: dict[str, type[DisclosureError]] = {
    "invalid_namespace": NamespaceError,
    "invalid_memory": MemoryValidationError,
    "invalid_input": InvalidInputError,
    "validation_error": InvalidInputError,
    "query_too_long": InvalidInputError,
    "history_too_long": InvalidInputError,
    "too_many_memories": InvalidInputError,
    "payload_too_large": InvalidInputError,
    "bad_request": InvalidInputError,
    "not_found": MemoryNotFoundError,
    "unknown_disclosure": MemoryNotFoundError,
    "unknown_name": RegistryError,
    "profile_error": ProfileError,
    "tokenizer_error": TokenizerError,
    "incompatible_data": IncompatibleDataError,
    "corrupt_data": CorruptDataError,
    "unknown_namespace": InvalidInputError,
    "disk_full": DiskFullError,
    "storage_unavailable": StorageError,
    "unavailable": TierClosedError,
    "tier_unavailable": TierUnavailableError,
    "missing_dependency": MissingDependencyError,
}
_RETRIED = (httpx.ConnectError, httpx.ConnectTimeout)


class _Api:
    """What both clients share: the requests' shapes and the answers' decoding."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        namespace: Mapping[str, str | None] | None,
        timeout: float,
        retries: int,
        backoff: float,
    ) -> None:
        if retries < 0 or timeout <= 0:
            raise InvalidInputError("retries must be >= 0 and timeout > 0")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.namespace = {k: v for k, v in (namespace or {}).items() if v is not None}
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.disclosure_ids: dict[int, str] = {}

    def verify(self) -> bool:
        """Whether TLS certificates are checked: always over https; plain http (the local
        service on loopback) skips loading the certificate store, a fifth of a start-up."""
        return not self.base_url.startswith("http://")

    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key} if self.api_key else {}

    def delay(self, attempt: int) -> float:
        return float(self.backoff * 2**attempt)

    def unreachable(self, exc: Exception) -> ServiceError:
        return ServiceError(f"the memory service at {self.base_url} is unreachable: {exc}")

    def ingest_bodies(self, memories: Iterable[Memory | Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Request bodies of at most MAX_BATCH memories and about MAX_BATCH_BYTES each."""
        from pydantic_core import to_json, to_jsonable_python

        bodies: list[dict[str, Any]] = []
        batch: list[Any] = []
        size = 0
        for memory in memories:
            item = _memory_json(memory, to_jsonable_python)
            item_size = len(to_json(item))
            if batch and (len(batch) >= MAX_BATCH or size + item_size > MAX_BATCH_BYTES):
                bodies.append({"memories": batch})
                batch, size = [], 0
            batch.append(item)
            size += item_size
        if batch:
            bodies.append({"memories": batch})
        return bodies

    def disclose_body(  # noqa: PLR0917 - the controller's disclose, in order
        self,
        query: str,
        history: Sequence[str | Mapping[str, Any]],
        now: datetime | None,
        level: DisclosureLevel | str | None,
        budget: int | None,
        context_window: int | None,
        prompt_tokens: int,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "query": query,
            "history": [h if isinstance(h, str) else dict(h) for h in history],
            "prompt_tokens": prompt_tokens,
        }
        for key, value in (
            ("now", now.isoformat() if now is not None else None),
            ("level", getattr(level, "value", level)),
            ("budget", budget),
            ("context_window", context_window),
        ):
            if value is not None:
                body[key] = value
        return body

    def result(self, data: dict[str, Any]) -> DisclosureResult:
        from analyzers import QueryAnalysis
        from disclosure.result import DisclosedItem, DisclosureResult

        result = DisclosureResult(
            text=data["text"],
            items=tuple(DisclosedItem.model_validate(i) for i in data["items"]),
            level=data["level"],
            analysis=QueryAnalysis.model_validate(data["analysis"]),
            budget=data["budget"],
            tokens_used=data["tokens_used"],
            full_history_tokens=data["full_history_tokens"],
            expansion_reason=data.get("expansion_reason"),
            timings_ms=data.get("timings_ms", {}),
            budget_reason=data.get("budget_reason", ""),
            profile=data.get("profile", ""),
            omitted=tuple(data.get("omitted", ())),
        )
        if len(self.disclosure_ids) > 1024:  # feedback comes soon after or not at all
            self.disclosure_ids.pop(next(iter(self.disclosure_ids)))
        self.disclosure_ids[id(result)] = data["disclosure_id"]
        return result

    def feedback_body(self, result: DisclosureResult, reply: str) -> dict[str, Any]:
        token = self.disclosure_ids.pop(id(result), None)
        if token is None:
            raise InvalidInputError("feedback takes a result this client's disclose returned")
        return {"disclosure_id": token, "reply": reply}


def _memory_json(memory: Memory | Mapping[str, Any], jsonable: Any) -> dict[str, Any]:
    if isinstance(memory, Mapping):
        return dict(jsonable(dict(memory)))
    data = memory.model_dump(mode="json", include=set(_MEMORY_FIELDS))
    return {k: v for k, v in data.items() if v is not None}


def _ingest_report(parts: Sequence[dict[str, Any]]) -> IngestReport:
    return IngestReport(
        added=sum(p["added"] for p in parts),
        replaced=sum(p["replaced"] for p in parts),
        unchanged=sum(p["unchanged"] for p in parts),
        rejected=sum(p["rejected"] for p in parts),
        ids=tuple(i for p in parts for i in p["ids"]),
        errors=tuple(e for p in parts for e in p["errors"]),
    )


def _forget_report(data: dict[str, Any]) -> ForgetReport:
    return ForgetReport(
        ids=tuple(data["ids"]), citations=tuple(data["citations"]), sessions=tuple(data["sessions"])
    )


def _feedback_report(data: dict[str, Any]) -> FeedbackReport:
    from disclosure.pipeline.feedback import FeedbackReport

    return FeedbackReport(
        used=tuple(data["used"]),
        cited=tuple(data["cited"]),
        overlap=dict(data["overlap"]),
        depth=data["depth"],
        tokens_used=data["tokens_used"],
        budget=data["budget"],
    )


def _stats(data: dict[str, Any]) -> dict[str, Any]:
    return {**data["stats"], "namespace": data["namespace"]}


def _index(data: dict[str, Any]) -> list[IndexEntry]:
    from disclosure.mcp.workflow import IndexEntry

    return [IndexEntry.model_validate(r) for r in data["results"]]


def _refs(refs: Sequence[str]) -> list[str]:
    listed = [refs] if isinstance(refs, str) else list(refs)
    if not 1 <= len(listed) <= MAX_REFS:
        raise InvalidInputError(f"give 1 to {MAX_REFS} ids or citations, not {len(listed)}")
    return list(dict.fromkeys(listed))


def _check(response: httpx.Response) -> Any:
    """The JSON body of a successful answer, or the library's exception for the error."""
    if response.is_success:
        return response.json()
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code = f"http_{response.status_code}"
        message = response.text[:200] or response.reason_phrase
    if response.status_code in (401, 403):
        raise ServiceError(
            f"the memory service refused the request: {message}",
            code=code,
            status=response.status_code,
        )
    kind = _ERRORS.get(code)
    if kind is None:
        raise ServiceError(
            f"the memory service failed ({response.status_code} {code}): {message}",
            code=code,
            status=response.status_code,
        )
    raise kind(message)


def _service_url(root: Path | str | None, start: bool, profile: str) -> tuple[str, str]:
    from disclosure.namespaces import default_home
    from disclosure.service import find_service, start_service

    home = Path(root).expanduser() if root is not None else default_home()
    info = find_service(home)
    if info is None and start:
        info, _ = start_service(home, profile=profile)
    if info is None:
        raise ServiceError(f"no service runs for {home}; start one with `disclosure service start`")
    return info.url, info.token


class MemoryClient:
    """The HTTP API with the controller's surface, for one namespace. Thread-safe."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        namespace: Mapping[str, str | None] | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.1,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._api = _Api(
            base_url,
            api_key=api_key,
            namespace=namespace,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
        )
        self._http = httpx.Client(
            base_url=self._api.base_url,
            headers=self._api.headers(),
            timeout=timeout,
            transport=transport,
            verify=self._api.verify(),
        )

    @classmethod
    def for_root(
        cls,
        root: Path | str | None = None,
        *,
        namespace: Mapping[str, str | None] | None = None,
        start: bool = False,
        profile: str = "default",
        timeout: float = 30.0,
    ) -> MemoryClient:
        """A client of the service that owns ``root`` (default: ``$TIERED_DISCLOSURE_HOME``),
        started first if ``start``; else :class:`ServiceError` when none runs."""
        url, token = _service_url(root, start, profile)
        return cls(url, api_key=token, namespace=namespace, timeout=timeout)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    @property
    def namespace(self) -> dict[str, str]:
        return dict(self._api.namespace)

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        for attempt in range(self._api.retries + 1):
            try:
                response = self._http.request(method, path, params=self._api.namespace, json=body)
            except _RETRIED as exc:
                if attempt == self._api.retries:
                    raise self._api.unreachable(exc) from None
                time.sleep(self._api.delay(attempt))
            except httpx.HTTPError as exc:
                raise self._api.unreachable(exc) from None
            else:
                return _check(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def health(self) -> dict[str, Any]:
        """The service's liveness answer (status, version, profile, open namespaces)."""
        data: dict[str, Any] = self._request("GET", "/health")
        return data

    def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        """Store memories; sent in batches under the API's limits, one report for all."""
        parts = [self._request("POST", "/v1/ingest", b) for b in self._api.ingest_bodies(memories)]
        return _ingest_report(parts)

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        """The context for ``query``, as the controller's ``disclose`` gives it."""
        return self._api.result(
            self.disclose_response(
                query,
                history=history,
                now=now,
                level=level,
                budget=budget,
                context_window=context_window,
                prompt_tokens=prompt_tokens,
            )
        )

    def disclose_response(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> dict[str, Any]:
        """:meth:`disclose`'s answer as the API sends it (``text``, ``level``, ``budget``,
        ``tokens_used``, ``savings_line``, ``disclosure_id``, ...), without building the result
        types: for a caller that only prints it, and should not load their modules."""
        body = self._api.disclose_body(
            query, history, now, level, budget, context_window, prompt_tokens
        )
        data: dict[str, Any] = self._request("POST", "/v1/disclose", body)
        return data

    async def adisclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        """:meth:`disclose` in a worker thread, for async callers."""
        return await asyncio.to_thread(
            self.disclose,
            query,
            history=history,
            now=now,
            level=level,
            budget=budget,
            context_window=context_window,
            prompt_tokens=prompt_tokens,
        )

    def show(self, id_or_citation: str) -> str:
        """One memory in full detail, by id or citation."""
        from urllib.parse import quote

        return str(self._request("GET", f"/v1/memories/{quote(id_or_citation, safe='')}")["text"])

    def feedback(self, result: DisclosureResult, reply: str) -> FeedbackReport:
        """What ``reply`` used of ``result`` (a result this client's ``disclose`` returned)."""
        body = self._api.feedback_body(result, reply)
        return _feedback_report(self._request("POST", "/v1/feedback", body))

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        """Remove memories by id and/or a whole session, everywhere."""
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        body = {"ids": list(ids) if ids is not None else None, "session_id": session_id}
        return _forget_report(self._request("POST", "/v1/forget", body))

    def stats(self) -> dict[str, Any]:
        """Counts per tier, pending embeddings, caches, budgets; and the namespace."""
        return _stats(self._request("GET", "/v1/stats"))

    def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        """Layer 1 of the MCP workflow: an index of the best matches."""
        return _index(self._request("POST", "/v1/search", {"query": query, "limit": limit}))

    def timeline(self, refs: Sequence[str], *, window: int | None = None) -> str:
        """Layer 2: what was said around the given memories."""
        body = {"refs": [refs] if isinstance(refs, str) else list(refs), "window": window}
        return str(self._request("POST", "/v1/timeline", body)["text"])

    def details(self, refs: Sequence[str]) -> list[tuple[str, str]]:
        """Layer 3: each memory in full, ``(ref, text)`` pairs in the order asked."""
        return [(ref, self.show(ref)) for ref in _refs(refs)]

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncMemoryClient:
    """:class:`MemoryClient` for asyncio: the same methods, awaited."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        namespace: Mapping[str, str | None] | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.1,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api = _Api(
            base_url,
            api_key=api_key,
            namespace=namespace,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
        )
        self._http = httpx.AsyncClient(
            base_url=self._api.base_url,
            headers=self._api.headers(),
            timeout=timeout,
            transport=transport,
            verify=self._api.verify(),
        )

    @classmethod
    def for_root(
        cls,
        root: Path | str | None = None,
        *,
        namespace: Mapping[str, str | None] | None = None,
        start: bool = False,
        profile: str = "default",
        timeout: float = 30.0,
    ) -> AsyncMemoryClient:
        """Like :meth:`MemoryClient.for_root` (finding or starting the service blocks)."""
        url, token = _service_url(root, start, profile)
        return cls(url, api_key=token, namespace=namespace, timeout=timeout)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        for attempt in range(self._api.retries + 1):
            try:
                response = await self._http.request(
                    method, path, params=self._api.namespace, json=body
                )
            except _RETRIED as exc:
                if attempt == self._api.retries:
                    raise self._api.unreachable(exc) from None
                await asyncio.sleep(self._api.delay(attempt))
            except httpx.HTTPError as exc:
                raise self._api.unreachable(exc) from None
            else:
                return _check(response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def health(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._request("GET", "/health")
        return data

    async def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        parts = [
            await self._request("POST", "/v1/ingest", b) for b in self._api.ingest_bodies(memories)
        ]
        return _ingest_report(parts)

    async def disclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: datetime | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult:
        body = self._api.disclose_body(
            query, history, now, level, budget, context_window, prompt_tokens
        )
        return self._api.result(await self._request("POST", "/v1/disclose", body))

    adisclose = disclose

    async def show(self, id_or_citation: str) -> str:
        from urllib.parse import quote

        data = await self._request("GET", f"/v1/memories/{quote(id_or_citation, safe='')}")
        return str(data["text"])

    async def feedback(self, result: DisclosureResult, reply: str) -> FeedbackReport:
        body = self._api.feedback_body(result, reply)
        return _feedback_report(await self._request("POST", "/v1/feedback", body))

    async def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        body = {"ids": list(ids) if ids is not None else None, "session_id": session_id}
        return _forget_report(await self._request("POST", "/v1/forget", body))

    async def stats(self) -> dict[str, Any]:
        return _stats(await self._request("GET", "/v1/stats"))

    async def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        return _index(await self._request("POST", "/v1/search", {"query": query, "limit": limit}))

    async def timeline(self, refs: Sequence[str], *, window: int | None = None) -> str:
        body = {"refs": [refs] if isinstance(refs, str) else list(refs), "window": window}
        return str((await self._request("POST", "/v1/timeline", body))["text"])

    async def details(self, refs: Sequence[str]) -> list[tuple[str, str]]:
        return [(ref, await self.show(ref)) for ref in _refs(refs)]

    async def aclose(self) -> None:
        await self._http.aclose()

    close = aclose

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

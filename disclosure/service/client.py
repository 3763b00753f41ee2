"""Python clients for the HTTP API: :class:`MemoryClient` (sync) and :class:`AsyncMemoryClient`.

They have the controller's method names and result types (``ingest`` -> IngestReport,
``disclose`` -> DisclosureResult, ``show`` -> str, ``feedback`` -> FeedbackReport, ``forget`` ->
ForgetReport, ``stats`` -> dict), so code written against a :class:`DisclosureController` runs
against a service too; and the mem0-style ``add`` and ``get`` of ``/v1/memories``
(:mod:`disclosure.core.records`)::

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

from disclosure.service.wire import (
    RETRIED,
    WireApi,
    add_body,
    add_result,
    checked,
    feedback_report,
    forget_report,
    index_of,
    ingest_report,
    memory_path,
    memory_record,
    refs_of,
    service_address,
    stats_of,
)
from tiers.errors import InvalidInputError
from tiers.reports import ForgetReport, IngestReport

if TYPE_CHECKING:
    from analyzers import DisclosureLevel
    from disclosure.core.pipeline.feedback import FeedbackReport
    from disclosure.core.records import AddResult, MemoryRecord
    from disclosure.core.result import DisclosureResult
    from disclosure.core.workflow import IndexEntry
    from tiers.memory import Memory


__all__ = ["AsyncMemoryClient", "MemoryClient"]


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
        self._api = WireApi(
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
        url, token = service_address(root, start, profile)
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
            except RETRIED as exc:
                if attempt == self._api.retries:
                    raise self._api.unreachable(exc) from None
                time.sleep(self._api.delay(attempt))
            except httpx.HTTPError as exc:
                raise self._api.unreachable(exc) from None
            else:
                return checked(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def health(self) -> dict[str, Any]:
        """The service's liveness answer (status, version, profile, open namespaces)."""
        data: dict[str, Any] = self._request("GET", "/health")
        return data

    def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        """Store memories; sent in batches under the API's limits, one report for all."""
        parts = [self._request("POST", "/v1/ingest", b) for b in self._api.ingest_bodies(memories)]
        return ingest_report(parts)

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
        return feedback_report(self._request("POST", "/v1/feedback", body))

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        """Remove memories by id and/or a whole session, everywhere."""
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        body = {"ids": list(ids) if ids is not None else None, "session_id": session_id}
        return forget_report(self._request("POST", "/v1/forget", body))

    def stats(self) -> dict[str, Any]:
        """Counts per tier, pending embeddings, caches, budgets; and the namespace."""
        return stats_of(self._request("GET", "/v1/stats"))

    def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        """Layer 1 of the MCP workflow: an index of the best matches."""
        return index_of(self._request("POST", "/v1/search", {"query": query, "limit": limit}))

    def timeline(self, refs: Sequence[str], *, window: int | None = None) -> str:
        """Layer 2: what was said around the given memories."""
        body = {"refs": [refs] if isinstance(refs, str) else list(refs), "window": window}
        return str(self._request("POST", "/v1/timeline", body)["text"])

    def details(self, refs: Sequence[str]) -> list[tuple[str, str]]:
        """Layer 3: each memory in full, ``(ref, text)`` pairs in the order asked."""
        return [(ref, self.show(ref)) for ref in refs_of(refs)]

    def add(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
    ) -> AddResult:
        """The mem0-style add (``POST /v1/memories``): a note, or chat messages (one memory per
        user, assistant or tool message); ids come from content and time."""
        body = add_body(messages, session_id, metadata, timestamp)
        return add_result(self._request("POST", "/v1/memories", body))

    def get(self, id_or_citation: str) -> MemoryRecord:
        """One memory's fields, by id or citation (MemoryNotFoundError when none has it)."""
        return memory_record(self._request("GET", memory_path(id_or_citation)))

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
        self._api = WireApi(
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
        url, token = service_address(root, start, profile)
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
            except RETRIED as exc:
                if attempt == self._api.retries:
                    raise self._api.unreachable(exc) from None
                await asyncio.sleep(self._api.delay(attempt))
            except httpx.HTTPError as exc:
                raise self._api.unreachable(exc) from None
            else:
                return checked(response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def health(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._request("GET", "/health")
        return data

    async def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        parts = [
            await self._request("POST", "/v1/ingest", b) for b in self._api.ingest_bodies(memories)
        ]
        return ingest_report(parts)

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
        return feedback_report(await self._request("POST", "/v1/feedback", body))

    async def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        if ids is None and session_id is None:
            raise InvalidInputError("forget needs ids=[...] or session_id=...")
        body = {"ids": list(ids) if ids is not None else None, "session_id": session_id}
        return forget_report(await self._request("POST", "/v1/forget", body))

    async def stats(self) -> dict[str, Any]:
        return stats_of(await self._request("GET", "/v1/stats"))

    async def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        return index_of(await self._request("POST", "/v1/search", {"query": query, "limit": limit}))

    async def timeline(self, refs: Sequence[str], *, window: int | None = None) -> str:
        body = {"refs": [refs] if isinstance(refs, str) else list(refs), "window": window}
        return str((await self._request("POST", "/v1/timeline", body))["text"])

    async def details(self, refs: Sequence[str]) -> list[tuple[str, str]]:
        return [(ref, await self.show(ref)) for ref in refs_of(refs)]

    async def add(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
    ) -> AddResult:
        body = add_body(messages, session_id, metadata, timestamp)
        return add_result(await self._request("POST", "/v1/memories", body))

    async def get(self, id_or_citation: str) -> MemoryRecord:
        return memory_record(await self._request("GET", memory_path(id_or_citation)))

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

"""What both memory clients share: the requests' shapes, the answers' decoding, and the API's
error codes mapped back to the library's exceptions (see :mod:`disclosure.service.client`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from disclosure.service.error_codes import exception_for
from tiers.errors import (
    InvalidInputError,
    ServiceError,
)
from tiers.reports import ForgetReport, IngestReport

if TYPE_CHECKING:
    from analyzers import DisclosureLevel
    from disclosure.core.pipeline.feedback import FeedbackReport
    from disclosure.core.records import AddResult, MemoryRecord
    from disclosure.core.result import DisclosureResult
    from disclosure.core.workflow import IndexEntry
    from tiers.memory import Memory


__all__ = [
    "MAX_BATCH",
    "MAX_BATCH_BYTES",
    "MAX_REFS",
    "RETRIED",
    "WireApi",
    "add_body",
    "add_result",
    "checked",
    "feedback_report",
    "forget_report",
    "index_of",
    "ingest_report",
    "memory_path",
    "memory_record",
    "refs_of",
    "service_address",
    "stats_of",
]

MAX_BATCH = 500  # memories per request (the API takes up to service.max_memories, 1000)
MAX_BATCH_BYTES = 512 * 1024  # and stays under its body limit (1 MiB by default)
MAX_REFS = 100  # ids or citations per details call, as the MCP workflow takes them
_MEMORY_FIELDS = (
    "id", "content", "timestamp", "session_id", "kind", "speaker", "summary", "entities",
    "importance", "metadata",
)  # fmt: skip
RETRIED = (httpx.ConnectError, httpx.ConnectTimeout)


class WireApi:
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
        from disclosure.core.result import DisclosedItem, DisclosureResult

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
            warnings=tuple(data.get("warnings", ())),
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


def ingest_report(parts: Sequence[dict[str, Any]]) -> IngestReport:
    return IngestReport(
        added=sum(p["added"] for p in parts),
        replaced=sum(p["replaced"] for p in parts),
        unchanged=sum(p["unchanged"] for p in parts),
        rejected=sum(p["rejected"] for p in parts),
        ids=tuple(i for p in parts for i in p["ids"]),
        errors=tuple(e for p in parts for e in p["errors"]),
        private=sum(p.get("private", 0) for p in parts),
        secrets=sum(p.get("secrets", 0) for p in parts),  # a service older than the field: 0
    )


def forget_report(data: dict[str, Any]) -> ForgetReport:
    return ForgetReport(
        ids=tuple(data["ids"]), citations=tuple(data["citations"]), sessions=tuple(data["sessions"])
    )


def feedback_report(data: dict[str, Any]) -> FeedbackReport:
    from disclosure.core.pipeline.feedback import FeedbackReport

    return FeedbackReport(
        used=tuple(data["used"]),
        cited=tuple(data["cited"]),
        overlap=dict(data["overlap"]),
        depth=data["depth"],
        tokens_used=data["tokens_used"],
        budget=data["budget"],
    )


def stats_of(data: dict[str, Any]) -> dict[str, Any]:
    """The stats as the controller gives them, with the namespace; and ``warnings`` when
    the namespace has nothing stored (the service answers empty, and creates nothing)."""
    warnings = data.get("warnings") or []
    return {**data["stats"], "namespace": data["namespace"]} | (
        {"warnings": list(warnings)} if warnings else {}
    )


def index_of(data: dict[str, Any]) -> list[IndexEntry]:
    from disclosure.core.workflow import IndexEntry

    return [IndexEntry.model_validate(r) for r in data["results"]]


def refs_of(refs: Sequence[str]) -> list[str]:
    listed = [refs] if isinstance(refs, str) else list(refs)
    if not 1 <= len(listed) <= MAX_REFS:
        raise InvalidInputError(f"give 1 to {MAX_REFS} ids or citations, not {len(listed)}")
    return list(dict.fromkeys(listed))


def checked(response: httpx.Response) -> Any:
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
    kind = exception_for(code)
    if kind is None:
        raise ServiceError(
            f"the memory service failed ({response.status_code} {code}): {message}",
            code=code,
            status=response.status_code,
        )
    raise kind(message)


def service_address(root: Path | str | None, start: bool, profile: str) -> tuple[str, str]:
    from disclosure.service import find_service, start_service
    from disclosure.storage.namespaces import default_home

    home = Path(root).expanduser() if root is not None else default_home()
    info = find_service(home)
    if info is None and start:
        info, _ = start_service(home, profile=profile)
    if info is None:
        raise ServiceError(f"no service runs for {home}; start one with `disclosure service start`")
    return info.url, info.token


def add_body(
    messages: str | Sequence[Mapping[str, Any]],
    session_id: str | None,
    metadata: Mapping[str, Any] | None,
    timestamp: datetime | None,
) -> dict[str, Any]:
    """The body of ``POST /v1/memories``: a note (``text``) or chat messages."""
    given: dict[str, Any] = (
        {"text": messages}
        if isinstance(messages, str)
        else {"messages": [dict(m) for m in messages]}
    )
    return given | {
        "session_id": session_id,
        "metadata": dict(metadata or {}),
        "timestamp": None if timestamp is None else timestamp.isoformat(),
    }


def add_result(data: dict[str, Any]) -> AddResult:
    from disclosure.core.records import AddResult

    return AddResult.model_validate(data)


def memory_path(id_or_citation: str) -> str:
    return f"/v1/memories/{quote(id_or_citation, safe='')}"


def memory_record(data: dict[str, Any]) -> MemoryRecord:
    from disclosure.core.records import MemoryRecord

    return MemoryRecord.model_validate(data["memory"])

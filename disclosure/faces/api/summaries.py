"""HTTP routes for consolidation and citation usage, and the background consolidation of the
namespaces a running service has open."""

import logging
import threading
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ConfigDict, Field

from disclosure.consolidation.store import Summary
from disclosure.core.empty import nothing_stored
from disclosure.faces.api.errors import ApiError
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import Namespace, iter_namespaces
from tiers.errors import DisclosureError

log = logging.getLogger(__name__)

MAX_TOP = 1000


class ConsolidateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    all: bool = Field(default=False, description="the working set's memories too")


class ConsolidateResponse(BaseModel):
    sessions: list[str]
    written: int
    unchanged: int
    removed: int
    memories: int
    trigger: str
    warnings: list[str]


class SummaryOut(BaseModel):
    id: str
    kind: str
    session_id: str
    position: int
    topic: str
    start: datetime
    end: datetime
    index_line: str
    paragraph: str
    full_text: str
    sources: list[str]
    summarizer: str
    score: float | None = None


class SummariesResponse(BaseModel):
    summaries: list[SummaryOut]
    warnings: list[str] = Field(default=[], description="a namespace nothing is stored in")


class CitationCountOut(BaseModel):
    memory_id: str
    citation: str
    cited: int
    echoed: int
    total: int
    last: datetime


class CitationUseOut(BaseModel):
    memory_id: str
    citation: str
    how: str
    at: datetime
    session_id: str | None
    query: str
    level: str


class CitationsResponse(BaseModel):
    citations: list[CitationCountOut]
    warnings: list[str] = Field(default=[], description="a namespace nothing is stored in")


class CitationUsesResponse(BaseModel):
    uses: list[CitationUseOut]
    warnings: list[str] = Field(default=[], description="a namespace nothing is stored in")


def summary_out(summary: Summary, score: float | None = None) -> SummaryOut:
    return SummaryOut(**{**asdict(summary), "sources": list(summary.sources)}, score=score)


class SummarySearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=MAX_TOP)


class CitationsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    top: int = Field(default=10, ge=1, le=MAX_TOP)


def add_routes(
    router: APIRouter,
    pool: ControllerPool,
    *,
    read: Callable[..., Namespace],
    write: Callable[..., Namespace],
) -> None:
    """Consolidation and citation routes on ``router``; ``read`` and ``write`` are the API's
    namespace dependencies (they check the key's grant)."""
    ns_type = Annotated[Namespace, Depends(read)]
    write_ns = Annotated[Namespace, Depends(write)]

    @router.post("/consolidate", response_model=ConsolidateResponse)
    def consolidate(body: ConsolidateRequest, ns: write_ns) -> ConsolidateResponse:
        """Consolidate what left the working set into summaries (idempotent)."""
        if not pool.exists(ns):  # nothing to consolidate: no namespace is made for it
            counts = dict.fromkeys(("written", "unchanged", "removed", "memories"), 0)
            warnings = [nothing_stored(ns)]
            return ConsolidateResponse(
                sessions=[], trigger="on demand", warnings=warnings, **counts
            )
        with pool.lease(ns) as controller:
            report = controller.consolidate(include_working_set=body.all)
        return ConsolidateResponse(**{**asdict(report), "sessions": list(report.sessions),
                                      "warnings": list(report.warnings)})  # fmt: skip

    @router.get("/summaries", response_model=SummariesResponse)
    def summaries(ns: ns_type) -> SummariesResponse:
        """Every summary, by session (the session's own first, then its topics)."""
        if not pool.exists(ns):
            return SummariesResponse(summaries=[], warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            found = [summary_out(s) for s in controller.consolidation.summaries.all()]
        return SummariesResponse(summaries=found)

    @router.post("/summaries/search", response_model=SummariesResponse)
    def search_summaries(body: SummarySearchRequest, ns: ns_type) -> SummariesResponse:
        """The topic summaries that best match ``query``, best first, each with its sources."""
        if not pool.exists(ns):
            return SummariesResponse(summaries=[], warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            hits = controller.search_summaries(body.query, k=body.limit)
        return SummariesResponse(summaries=[summary_out(h.summary, h.score) for h in hits])

    @router.get("/summaries/{summary_id}", response_model=SummaryOut)
    def summary(summary_id: Annotated[str, Path(max_length=64)], ns: ns_type) -> SummaryOut:
        """One summary at its three detail levels, with its sources' ids."""
        found = None
        if pool.exists(ns):
            with pool.lease(ns) as controller:
                found = controller.consolidation.get(summary_id)
        if found is None:
            raise ApiError(404, "not_found", f"no summary has the id {summary_id!r}")
        return summary_out(found)

    @router.post("/citations", response_model=CitationsResponse)
    def citations(body: CitationsRequest, ns: ns_type) -> CitationsResponse:
        """The ``top`` memories replies used most (cited first, then echoed)."""
        if not pool.exists(ns):
            return CitationsResponse(citations=[], warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            counts = controller.citations(top=body.top)
        return CitationsResponse(
            citations=[CitationCountOut(**asdict(c), total=c.total) for c in counts]
        )

    @router.get("/citations/{ref:path}", response_model=CitationUsesResponse)
    def where_cited(ref: str, ns: ns_type) -> CitationUsesResponse:
        """Where one memory (id or citation) was used: when, session, query."""
        if len(ref) > 300:
            raise ApiError(422, "invalid_input", "an id or citation has at most 300 characters")
        if not pool.exists(ns):
            return CitationUsesResponse(uses=[], warnings=[nothing_stored(ns)])
        with pool.lease(ns) as controller:
            uses = controller.where_cited(ref)
        return CitationUsesResponse(uses=[CitationUseOut(**asdict(u)) for u in uses])


class BackgroundConsolidation:
    """Runs each open namespace's consolidation when its profile's triggers fire."""

    def __init__(self, pool: ControllerPool) -> None:
        self.pool = pool
        self.interval = pool.profile.consolidation.triggers.check_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs: list[dict[str, Any]] = []

    def start(self) -> None:
        if not self.pool.profile.consolidation.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._loop, name="disclosure-consolidation", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def check(self) -> int:
        """One pass over the open namespaces; returns how many consolidated."""
        opened = set(self.pool.open_namespaces())
        done = 0
        for parts, _ in iter_namespaces(self.pool.root):
            if self._stop.is_set():
                break
            try:
                namespace = self.pool.namespace(parts)
                if namespace.key not in opened:
                    continue
                with self.pool.lease(namespace) as controller:
                    report = controller.consolidation.run_if_due()
            except DisclosureError as exc:  # a closed or broken store: the next pass retries
                log.warning("background consolidation of %s failed: %s", parts, exc)
                continue
            if report is not None:
                done += 1
                self.runs.append({"namespace": parts, "trigger": report.trigger})
                log.info("consolidated %s (%s): %d summaries written",
                         parts, report.trigger, report.written)  # fmt: skip
        return done

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

"""The controller's consolidation and citation-usage methods (a base class, so the controller
module stays about disclosing)."""

from __future__ import annotations

from datetime import datetime

from disclosure.consolidation.consolidator import ConsolidationReport
from disclosure.consolidation.search import SummaryHit
from disclosure.consolidation.service import Consolidation
from disclosure.storage.citation_usage import CitationCount, CitationLog, CitationUse
from tiers.errors import InvalidInputError, MemoryNotFoundError
from tiers.memory import Memory

MAX_QUERY_CHARS = 20_000


class LongTermMemory:
    """Summaries of what left the working set, and which citations replies used."""

    consolidation: Consolidation
    citation_log: CitationLog

    def _check_open(self) -> None:
        raise NotImplementedError

    def _resolve(self, reference: str) -> Memory | None:
        raise NotImplementedError

    def consolidate(
        self, *, include_working_set: bool = False, now: datetime | None = None
    ) -> ConsolidationReport:
        """Consolidate the memories that left the working set (``include_working_set``: all)
        into summaries by session and topic. Idempotent."""
        self._check_open()
        return self.consolidation.run(include_working_set=include_working_set, now=now)

    def search_summaries(self, query: str, *, k: int = 10) -> list[SummaryHit]:
        """The consolidated topic summaries that best match ``query``; each lists its sources."""
        self._check_open()
        return self.consolidation.search(_checked(query), k)

    def citations(self, *, top: int = 10) -> list[CitationCount]:
        """The memories replies used most (``feedback`` records them)."""
        self._check_open()
        return self.citation_log.top(top)

    def where_cited(self, id_or_citation: str, *, limit: int = 100) -> list[CitationUse]:
        """Where a memory was used by replies: when, in which session, for which query."""
        self._check_open()
        memory = self._resolve(id_or_citation)
        if memory is None:
            raise MemoryNotFoundError(f"no memory has the id or citation {id_or_citation!r}")
        return self.citation_log.where(memory.id, limit)


def _checked(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}"
        )
    return query

"""The consolidated summaries in an export: one ``summaries`` record per session.

Each holds the session's summaries (every field a reader sees, times as ISO 8601) and
``covered``: which version (content hash) of which memory they were built from, so the
consolidator of the store they are imported into knows they are current. Written through the
summary store's own ``replace_session``; on a merge, a session that already has summaries keeps
its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from disclosure.consolidation.store import Summary
from tiers.errors import InvalidInputError

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

_TEXT = ("id", "kind", "session_id", "topic", "index_line", "paragraph", "full_text", "summarizer")

__all__ = ["SessionSummaries", "export_summaries", "import_summaries", "parse_summaries"]


@dataclass(frozen=True)
class SessionSummaries:
    session_id: str
    summaries: tuple[Summary, ...]
    covered: tuple[tuple[str, str], ...]


def export_summaries(controller: DisclosureController) -> list[dict[str, Any]]:
    """One record per session with summaries, in session order."""
    store = controller.consolidation.summaries
    by_session: dict[str, list[Summary]] = defaultdict(list)
    for summary in store.all():
        by_session[summary.session_id].append(summary)
    covered: dict[str, list[list[str]]] = defaultdict(list)
    for memory_id, (session, sha) in sorted(store.consolidated().items()):
        covered[session].append([memory_id, sha])
    return [
        {
            "session_id": session,
            "summaries": [_record(s) for s in summaries],
            "covered": covered.get(session, []),
        }
        for session, summaries in sorted(by_session.items())
    ]


def _record(summary: Summary) -> dict[str, Any]:
    return {
        **{name: getattr(summary, name) for name in _TEXT},
        "position": summary.position,
        "start": summary.start.isoformat(),
        "end": summary.end.isoformat(),
        "sources": list(summary.sources),
    }


def parse_summaries(record: Mapping[str, Any], where: str) -> SessionSummaries:
    """A ``summaries`` record, checked; InvalidInputError naming ``where`` otherwise."""
    session, items, covered = (
        record.get("session_id"),
        record.get("summaries"),
        record.get("covered"),
    )
    if not isinstance(session, str) or not isinstance(items, list) or not isinstance(covered, list):
        raise InvalidInputError(f"{where}: summaries need session_id, summaries and covered")
    if not all(
        isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in covered
    ):
        raise InvalidInputError(f"{where}: summaries.covered holds [memory id, hash] pairs")
    return SessionSummaries(
        session,
        tuple(_summary(item, session, where) for item in items),
        tuple((c[0], c[1]) for c in covered),
    )


def _summary(item: Any, session: str, where: str) -> Summary:
    try:
        if not all(isinstance(item[name], str) for name in _TEXT):
            raise TypeError("a text field is not a string")
        if item["kind"] not in ("topic", "session") or item["session_id"] != session:
            raise ValueError(f"kind {item['kind']!r} or session {item['session_id']!r}")
        sources = item["sources"]
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise TypeError("sources must be a list of memory ids")
        if not isinstance(item["position"], int) or isinstance(item["position"], bool):
            raise TypeError("position must be an integer")
        return Summary(
            **{name: item[name] for name in _TEXT},
            position=item["position"],
            start=datetime.fromisoformat(item["start"]),
            end=datetime.fromisoformat(item["end"]),
            sources=tuple(sources),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{where}: a summary is invalid ({exc})") from None


def import_summaries(
    controller: DisclosureController, sessions: list[SessionSummaries], *, merge: bool
) -> int:
    """Store the sessions' summaries; how many summaries were written."""
    store = controller.consolidation.summaries
    written = 0
    for item in sessions:
        if merge and store.of_session(item.session_id):
            continue  # this store's own summaries of the session stay
        store.replace_session(item.session_id, item.summaries, item.covered, now=datetime.now(UTC))
        written += len(item.summaries)
    return written

"""Moving a namespace between stores: export to JSON Lines, import from them, losing nothing.

An export is one JSON object a line, each with a ``type``:

- ``header`` (first): ``format`` (``tiered-disclosure-export``), ``version``, the source
  ``namespace`` parts and ``profile``;
- ``memory``, one per memory in time order: its ``id``, ``citation`` code and every
  ``versions`` the archive keeps, oldest first and the current one last, each the full
  :class:`~tiers.memory.Memory` record and when it was ``replaced_at`` (null for the current);
- ``participants``: the speaker names the query matcher knows;
- ``citation_use`` / ``citation_reply``: the citation log (which replies used which memories);
- ``budget_reply``: the adaptive budget's usage history with each reply's candidate signals,
  when the namespace keeps its own (``budget.learning.path`` unset);
- ``summaries``, one per session consolidated: its summaries and the memory versions they cover
  (:mod:`disclosure.core.transfer_summaries`);
- ``end`` (last): the counts of each. A file without it is truncated and is refused.

Forgotten memories are gone from the archive, so they are never exported; neither are their
citation-log entries (forget removes them). Vectors, caches and the hot set are not exported:
the target store derives them from the memories.

Import reads and checks the whole file before it writes anything: a line that is not JSON, of an
unknown type, with a field missing or invalid, or a missing ``end`` is an
:class:`~tiers.errors.InvalidInputError` naming the line, and nothing is imported. It writes
through the store's public interface (``ingest`` with ``refresh``, a version at a time), so it
works on every archive backend. Into a namespace that already holds memories it refuses unless
``merge``: then a memory whose id is stored with the same current record is skipped, one whose
stored record differs is a conflict (left as it is, and reported), and the others are added; the
logs' rows already present are skipped, so importing a file twice adds nothing. As on ingest,
``<private>`` spans (which an export never holds, but an edited file might) are not stored, and
with the profile's ``tiers.ingest.redact_secrets`` secrets in the memories, the logged queries
and the summaries are replaced by markers (an export of another store, or one made before
redaction was on, may hold some).

Round trip: export, import into an empty namespace, export again gives the same lines except
``replaced_at`` of earlier versions, which is the time of the import (the store records when a
version was replaced; it cannot be told another time).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from disclosure.core.pipeline.ingest import for_storage, redacted_text
from disclosure.core.transfer_summaries import (
    SessionSummaries,
    export_summaries,
    import_summaries,
    parse_summaries,
)
from tiers.errors import InvalidInputError, MemoryValidationError
from tiers.memory import Memory

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

FORMAT = "tiered-disclosure-export"
VERSION = 1
BATCH = 500
_PAGE = 500
_LOG_TYPES = ("citation_use", "citation_reply", "budget_reply")

__all__ = [
    "FORMAT",
    "VERSION",
    "Export",
    "ExportReport",
    "ImportReport",
    "export_namespace",
    "import_namespace",
    "read_export",
]


@dataclass
class ExportReport:
    """What an export wrote (the ``end`` line's counts)."""

    memories: int = 0
    versions: int = 0
    participants: int = 0
    citation_use: int = 0
    citation_reply: int = 0
    budget_reply: int = 0
    summaries: int = 0

    def counts(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class MemoryEntry:
    """One exported memory: its versions (oldest first, current last) and citation code."""

    id: str
    citation: str
    versions: list[Memory]


@dataclass
class Export:
    """A checked export file, ready to import."""

    namespace: dict[str, str]
    profile: str
    memories: list[MemoryEntry] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    logs: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {kind: [] for kind in _LOG_TYPES}
    )
    summaries: list[SessionSummaries] = field(default_factory=list)


@dataclass
class ImportReport:
    """What an import did. ``conflicts``: ids stored with another record, left as they were;
    ``skipped``: ids stored with the same record; ``recoded``: ids whose citation code differs
    from the exported one (a collision with a memory already there)."""

    memories: int = 0
    versions: int = 0
    skipped: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    recoded: list[str] = field(default_factory=list)
    participants: int = 0
    logs: dict[str, int] = field(default_factory=dict)
    private: int = 0  # versions dropped: entirely inside <private> spans
    summaries: int = 0
    secrets: int = 0  # secrets in the memories replaced by a [redacted:<kind>] marker


# -- export --------------------------------------------------------------------------------------


def export_namespace(
    controller: DisclosureController, out: TextIO, *, namespace: Mapping[str, str]
) -> ExportReport:
    """Write ``controller``'s namespace to ``out`` as export lines; what was written."""
    report = ExportReport()
    store = controller.store
    _line(out, {"type": "header", "format": FORMAT, "version": VERSION,
                "namespace": dict(namespace), "profile": controller.profile.name})  # fmt: skip
    for memories in _pages(controller):
        codes = store.citation_of([m.id for m in memories])
        for memory in memories:
            versions = [_version(v.memory, v.replaced_at) for v in store.versions(memory.id)]
            citation = codes.get(memory.id, "")
            _line(out, {"type": "memory", "id": memory.id, "citation": citation,
                        "versions": versions})  # fmt: skip
            report.memories += 1
            report.versions += len(versions)
    names = list(controller.participants)
    _line(out, {"type": "participants", "names": names})
    report.participants = len(names)
    for session in export_summaries(controller):
        _line(out, {"type": "summaries", **session})
        report.summaries += len(session["summaries"])
    uses, replies = controller.citation_log.export_rows()
    budget = controller.budget.export_replies() if _own_budget(controller) else []
    logs = {"citation_use": uses, "citation_reply": replies, "budget_reply": budget}
    for kind, rows in logs.items():
        for row in rows:
            _line(out, {"type": kind, **row})
        setattr(report, kind, len(rows))
    _line(out, {"type": "end", "counts": report.counts()})
    return report


def _pages(controller: DisclosureController) -> Iterator[tuple[Memory, ...]]:
    cursor: str | None = None
    while True:
        page = controller.store.page(cursor=cursor, limit=_PAGE)
        if page.memories:
            yield page.memories
        if page.cursor is None:
            return
        cursor = page.cursor


def _version(memory: Memory, replaced_at: datetime | None) -> dict[str, Any]:
    return {
        "replaced_at": None if replaced_at is None else replaced_at.isoformat(),
        "memory": json.loads(memory.to_json()),
    }


def _line(out: TextIO, record: Mapping[str, Any]) -> None:
    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def _own_budget(controller: DisclosureController) -> bool:
    """Whether the usage history is the namespace's own (not a file shared with others)."""
    return controller.profile.budget.learning.path is None


# -- reading ---------------------------------------------------------------------------------------


def read_export(lines: Iterable[str], *, source: str = "the export") -> Export:
    """Parse and check every line; the first problem raises InvalidInputError with its line."""
    export: Export | None = None
    seen: set[str] = set()
    number = 0
    ended: dict[str, Any] | None = None
    for number, text in enumerate(lines, start=1):
        where = f"{source}, line {number}"
        if ended is not None:
            if text.strip():
                raise InvalidInputError(f"{where}: text after the end record")
            continue
        record = _record(text, where)
        kind = record.get("type")
        if export is None:
            export = _header(record, where)
        elif kind == "memory":
            entry = _memory(record, where)
            if entry.id in seen:
                raise InvalidInputError(f"{where}: memory {entry.id!r} appears twice")
            seen.add(entry.id)
            export.memories.append(entry)
        elif kind == "participants":
            names = record.get("names")
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InvalidInputError(f"{where}: participants.names must be a list of strings")
            export.participants += names
        elif kind == "summaries":
            export.summaries.append(parse_summaries(record, where))
        elif kind in _LOG_TYPES:
            export.logs[str(kind)].append(_log_row(str(kind), record, where))
        elif kind == "end":
            ended = record
            _check_counts(export, record, where)
        else:
            raise InvalidInputError(f"{where}: unknown record type {kind!r}")
    if export is None:
        raise InvalidInputError(f"{source} is empty: not an export of {FORMAT}")
    if ended is None:
        raise InvalidInputError(
            f"{source} ends at line {number} without its end record: the file is truncated "
            "(export it again); nothing was imported"
        )
    return export


def _record(text: str, where: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"{where}: not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise InvalidInputError(f"{where}: a record must be a JSON object")
    return record


def _header(record: Mapping[str, Any], where: str) -> Export:
    if record.get("type") != "header" or record.get("format") != FORMAT:
        raise InvalidInputError(f"{where}: not an export of {FORMAT} (no header record)")
    if record.get("version") != VERSION:
        raise InvalidInputError(
            f"{where}: export version {record.get('version')!r}; this version reads {VERSION}"
        )
    parts, profile = record.get("namespace"), record.get("profile")
    if not isinstance(parts, dict) or not all(isinstance(v, str) for v in parts.values()):
        raise InvalidInputError(f"{where}: header.namespace must map parts to names")
    return Export(namespace=dict(parts), profile=str(profile))


def _memory(record: Mapping[str, Any], where: str) -> MemoryEntry:
    versions = record.get("versions")
    memory_id, citation = record.get("id"), record.get("citation")
    if not isinstance(memory_id, str) or not isinstance(citation, str):
        raise InvalidInputError(f"{where}: a memory record needs a string id and citation")
    if not isinstance(versions, list) or not versions:
        raise InvalidInputError(f"{where}: memory {memory_id!r} has no versions")
    parsed: list[Memory] = []
    for position, version in enumerate(versions):
        body = version.get("memory") if isinstance(version, dict) else None
        if not isinstance(body, dict):
            raise InvalidInputError(f"{where}: version {position + 1} has no memory object")
        try:
            memory = Memory(**body)
        except MemoryValidationError as exc:
            raise InvalidInputError(f"{where}: version {position + 1}: {exc}") from None
        if memory.id != memory_id:
            raise InvalidInputError(f"{where}: version {position + 1} has id {memory.id!r}")
        parsed.append(memory)
    if versions[-1].get("replaced_at") is not None:
        raise InvalidInputError(f"{where}: the last version of {memory_id!r} must be current")
    return MemoryEntry(memory_id, citation, parsed)


_LOG_FIELDS = {
    "citation_use": ("memory_id", "citation", "how", "at_us", "session_id", "query", "level"),
    "citation_reply": ("at_us", "level", "budget", "tokens_used", "full_history_tokens", "used"),
    "budget_reply": ("profile", "level", "at", "budget", "tokens_used", "depth", "used",
                     "disclosed", "cut", "signals"),
}  # fmt: skip


def _log_row(kind: str, record: Mapping[str, Any], where: str) -> dict[str, Any]:
    fields = _LOG_FIELDS[kind]
    missing = [f for f in fields if f not in record]
    extra = sorted(set(record) - set(fields) - {"type"})
    if missing or extra:
        problem = f"missing {missing[0]!r}" if missing else f"unknown field {extra[0]!r}"
        raise InvalidInputError(f"{where}: {kind} record {problem}")
    for name in fields:
        if not _valid_field(name, record[name]):
            raise InvalidInputError(f"{where}: {kind}.{name} has an invalid value")
    return {name: record[name] for name in fields}


def _valid_field(name: str, value: Any) -> bool:
    if name == "signals":  # one list of 8 numbers per candidate
        return isinstance(value, list) and all(
            isinstance(s, list) and len(s) == 8 and all(_scalar(x) for x in s) for s in value
        )
    if value is None:
        return name == "session_id"
    return _scalar(value)


def _scalar(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _check_counts(export: Export, record: Mapping[str, Any], where: str) -> None:
    counts = record.get("counts")
    if not isinstance(counts, dict):
        raise InvalidInputError(f"{where}: the end record has no counts")
    found = {
        "memories": len(export.memories),
        "versions": sum(len(m.versions) for m in export.memories),
        "participants": len(export.participants),
        **{kind: len(rows) for kind, rows in export.logs.items()},
        "summaries": sum(len(s.summaries) for s in export.summaries),
    }
    for name, value in found.items():
        if counts.get(name) != value:
            raise InvalidInputError(
                f"{where}: the end record counts {counts.get(name)!r} {name}, the file holds "
                f"{value}: lines are missing or were added; nothing was imported"
            )


# -- import ----------------------------------------------------------------------------------------


def import_namespace(
    controller: DisclosureController, export: Export, *, merge: bool = False
) -> ImportReport:
    """Write ``export`` into ``controller``'s namespace (see the module's docstring)."""
    store = controller.store
    present = store.count()
    if present and not merge:
        raise InvalidInputError(
            f"the namespace already holds {present} memories; import into an empty namespace, "
            "or pass merge (--merge) to add the new ones (identical ids are skipped, differing "
            "ones reported and left as they are); nothing was imported"
        )
    report = ImportReport()
    limit = controller.profile.tiers.ingest.max_content_chars
    too_long = [m.id for e in export.memories for m in e.versions if len(m.content) > limit]
    if too_long:
        raise InvalidInputError(
            f"memory {too_long[0]!r} is longer than this profile's "
            f"tiers.ingest.max_content_chars ({limit:,}); nothing was imported"
        )
    redact = controller.profile.tiers.ingest.redact_secrets
    entries = _new_entries(controller, _public(export.memories, report, redact=redact), report)
    _write_versions(controller, entries, report)
    codes = store.citation_of([e.id for e in entries])
    report.recoded = [e.id for e in entries if e.citation and codes.get(e.id) != e.citation]
    before = set(controller.participants)
    controller.participants.add(export.participants)
    report.participants = len(set(controller.participants) - before)
    uses, replies = controller.citation_log.import_rows(
        [{**row, "query": redacted_text(str(row["query"]), redact_secrets=redact)}
         for row in export.logs["citation_use"]],
        export.logs["citation_reply"],
    )  # fmt: skip
    report.logs = {"citation_use": uses, "citation_reply": replies, "budget_reply": 0}
    if _own_budget(controller):
        report.logs["budget_reply"] = controller.budget.import_replies(export.logs["budget_reply"])
    report.summaries = import_summaries(controller, export.summaries, merge=merge)
    return report


def _public(entries: list[MemoryEntry], report: ImportReport, *, redact: bool) -> list[MemoryEntry]:
    """The entries as ingest would store them: without ``<private>`` spans (an export holds
    none; an edited file might), a version left empty dropped, then a memory left empty; with
    ``redact``, their secrets replaced."""
    kept: list[MemoryEntry] = []
    for entry in entries:
        cleaned = [for_storage(v, redact_secrets=redact) for v in entry.versions]
        versions = [v for v, _ in cleaned if v is not None]
        report.secrets += sum(found for _, found in cleaned)
        report.private += len(entry.versions) - len(versions)
        if versions:
            kept.append(MemoryEntry(entry.id, entry.citation, versions))
    return kept


def _new_entries(
    controller: DisclosureController, entries: list[MemoryEntry], report: ImportReport
) -> list[MemoryEntry]:
    """The entries to write; stored ids are skipped (same record) or conflicts (another)."""
    fresh: list[MemoryEntry] = []
    for start in range(0, len(entries), BATCH):
        chunk = entries[start : start + BATCH]
        stored = {m.id: m for m in controller.store.get([e.id for e in chunk])}
        for entry in chunk:
            if entry.id not in stored:
                fresh.append(entry)
            elif stored[entry.id] == entry.versions[-1]:
                report.skipped.append(entry.id)
            else:
                report.conflicts.append(entry.id)
    return fresh


def _write_versions(
    controller: DisclosureController, entries: list[MemoryEntry], report: ImportReport
) -> None:
    """Every memory's versions in order: the first versions of all, then the seconds, ...
    (so the memories keep their order in the archive, and each replacement keeps a version)."""
    depth = max((len(e.versions) for e in entries), default=0)
    for layer in range(depth):
        batch = [e.versions[layer] for e in entries if len(e.versions) > layer]
        for start in range(0, len(batch), BATCH):
            chunk = batch[start : start + BATCH]
            result = controller.store.ingest(chunk, refresh=True)
            report.versions += result.added + result.replaced
            if layer == 0:
                report.memories += result.added
            changed = {m.id: m for m in chunk}
            controller.caches.invalidate(
                ids=result.ids, sessions={changed[i].session_id for i in result.ids}
            )
    if entries:
        controller.consolidation.consolidator.wrote()

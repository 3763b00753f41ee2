"""A mem0-style face beside the controller: add, search, get, get_all, update, delete, history.

For people used to ``mem0.Memory``::

    from disclosure.faces.memories import Memories

    with Memories.from_profile("default", root="~/memory") as m:
        m.add([{"role": "user", "content": "I moved to Busan."}], user_id="alice")
        m.search("where does alice live", user_id="alice", limit=3)
        m.get_all(user_id="alice")  # paged: pass .next_cursor back as cursor=

Differences worth knowing: memories are stored verbatim, turn by turn (no model extracts
"facts"; only secrets are replaced by ``[redacted:<kind>]`` markers, see :mod:`safeguards.secrets`);
ids are per namespace, so every call names the user (``user_id``, the namespace part
``user``; other parts such as the tenant are fixed when the facade is made); an id or a citation
(``mem:a7Bc3x``) names a memory; ``history`` lists the versions the archive keeps
(``tiers.cold.versions_kept``). :class:`MemoryBook` holds the operations on one namespace's
controller; the HTTP API's ``/v1/memories`` routes use it too.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from disclosure.core.profiles import Profile
from disclosure.core.records import (
    AddedMemory,
    AddResult,
    DeleteResult,
    MemoryHit,
    MemoryPage,
    MemoryRecord,
    MemoryVersionRecord,
)
from disclosure.core.workflow import search_index
from disclosure.faces.middleware.messages import default_session_id, message_text
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import Namespace, default_home
from formatters.citations import format_citation
from tiers.base import Embedder
from tiers.errors import InvalidInputError, MemoryNotFoundError, MemoryValidationError
from tiers.memory import MAX_ID_LENGTH, Memory, MemoryKind

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

log = logging.getLogger(__name__)

__all__ = ["MAX_PAGE", "NO_NAMESPACE", "Memories", "MemoryBook", "memory_id"]

#: The most memories one page of ``get_all`` returns (its ``limit``).
MAX_PAGE = 1000
#: The warning an empty answer carries when nothing was ever added for the user.
NO_NAMESPACE = "no memories were ever added for this namespace; nothing was created"
NOT_MEMORIES = frozenset({"system", "developer"})  # instructions to a model, not memories
_KINDS = {"user": MemoryKind.PROMPT, "assistant": MemoryKind.RESPONSE, "tool": MemoryKind.TOOL}
_TICK = timedelta(milliseconds=1)  # messages of one add keep their order in time
Messages = str | Sequence[Mapping[str, Any]]


def memory_id(session_id: str, timestamp: datetime, position: int, role: str, text: str) -> str:
    """An id from what a memory says and when: the same message added at the same moment gets
    the same id (a retried call changes nothing), any other a new one."""
    seed = "\x1f".join((session_id, timestamp.isoformat(), str(position), role, text))
    return "m-" + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:24]


class MemoryBook:
    """The facade's operations on one namespace's controller."""

    def __init__(self, controller: DisclosureController) -> None:
        self.controller = controller

    def add(
        self,
        messages: Messages,
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
    ) -> AddResult:
        """Store a text (a note) or chat messages (one memory per user, assistant or tool
        message); ``metadata`` goes on every memory."""
        memories, skipped = _memories(messages, session_id, dict(metadata or {}), timestamp)
        known = {m.id for m in self.controller.store.get([m.id for m in memories])}
        report = self.controller.ingest(memories)
        written = set(report.ids)
        stored = self.controller.store.get([m.id for m in memories])
        cites = self.citations([m.id for m in stored])
        results = [
            AddedMemory(
                **MemoryRecord.of(m, cites[m.id]).model_dump(),
                event="NONE" if m.id not in written else "UPDATE" if m.id in known else "ADD",
            )
            for m in stored
        ]
        return AddResult(
            results=results, skipped=skipped, private=report.private, secrets=report.secrets
        )

    def search(self, query: str, *, limit: int = 10) -> list[MemoryHit]:
        """The best matches for ``query`` across every tier, best first, in full."""
        entries = search_index(self.controller, query, limit=limit)
        found = {m.id: m for m in self.controller.store.get([e.id for e in entries])}
        return [
            MemoryHit(
                **MemoryRecord.of(found[e.id], e.citation).model_dump(), score=e.score, tier=e.tier
            )
            for e in entries
            if e.id in found
        ]

    def get(self, ref: str) -> MemoryRecord | None:
        """The memory an id or citation names, or None."""
        memory = self.controller.resolve(ref)
        return None if memory is None else self._record(memory)

    def get_all(
        self, *, session_id: str | None = None, limit: int = 100, cursor: str | None = None
    ) -> MemoryPage:
        """Memories in time order (of one session, or all), ``limit`` at a time."""
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInputError(f"limit must lie between 1 and {MAX_PAGE}, not {limit}")
        page = self.controller.store.page(session_id=session_id, cursor=cursor, limit=limit)
        cites = self.citations([m.id for m in page.memories])
        items = [MemoryRecord.of(m, cites[m.id]) for m in page.memories]
        return MemoryPage(items=items, next_cursor=page.cursor, total=page.total)

    def update(
        self, ref: str, text: str | None = None, *, metadata: Mapping[str, Any] | None = None
    ) -> MemoryRecord:
        """New content and/or new metadata (replacing the old) for a memory; the version it
        replaces stays in its history."""
        if text is None and metadata is None:
            raise InvalidInputError("update needs text=... and/or metadata={...}")
        memory = self._existing(ref)
        changes: dict[str, Any] = {}
        if text is not None and text != memory.content:
            changes.update(content=text, summary=None, entities=())  # derived again
        if metadata is not None:
            changes["metadata"] = dict(metadata)
        if not changes:
            return self._record(memory)
        report = self.controller.ingest([memory.replace(**changes)], refresh=True)
        if report.private:
            raise InvalidInputError(
                "the new text is entirely private, so nothing was changed; delete the memory "
                "to remove it"
            )
        return self._record(self._existing(memory.id))

    def delete(self, ref: str) -> DeleteResult:
        """Forget one memory (by id or citation) everywhere, with its earlier versions."""
        memory = self._existing(ref)
        return DeleteResult.of(self.controller.forget(ids=[memory.id]))

    def delete_all(self, *, session_id: str | None = None) -> DeleteResult:
        """Forget a session, or (no session) every memory of the namespace."""
        if session_id is not None:
            return DeleteResult.of(self.controller.forget(session_id=session_id))
        ids = [m.id for m in self.controller.store.iter_memories()]
        return DeleteResult.of(self.controller.forget(ids=ids))

    def history(self, ref: str) -> list[MemoryVersionRecord]:
        """Every version the archive keeps of a memory, oldest first, the current one last."""
        memory = self._existing(ref)
        cite = self.citations([memory.id])[memory.id]
        return [
            MemoryVersionRecord(
                version=v.version,
                current=v.current,
                replaced_at=v.replaced_at,
                memory=MemoryRecord.of(v.memory, cite),
            )
            for v in self.controller.store.versions(memory.id)
        ]

    # -- internals ------------------------------------------------------------------------------

    def _existing(self, ref: str) -> Memory:
        memory = self.controller.resolve(ref)
        if memory is None:
            raise MemoryNotFoundError(f"no memory has the id or citation {ref!r}")
        return memory

    def _record(self, memory: Memory) -> MemoryRecord:
        return MemoryRecord.of(memory, self.citations([memory.id])[memory.id])

    def citations(self, ids: Sequence[str]) -> dict[str, str]:
        """The citation of each id (the id itself if it has none)."""
        prefix = self.controller.profile.citations.prefix
        codes = self.controller.store.citation_of(list(ids))
        return {i: format_citation(codes[i], prefix) if i in codes else i for i in ids}


class Memories:
    """mem0's ``Memory`` API over a :class:`ControllerPool` (a namespace per ``user_id``) or
    one controller (one namespace: give no ``user_id``). Thread-safe; a context manager.

    ``namespace`` fixes the other namespace parts (``{"tenant": "acme"}``).
    """

    def __init__(
        self,
        memory: ControllerPool | DisclosureController,
        *,
        namespace: Mapping[str, str] | None = None,
    ) -> None:
        self.memory = memory
        self.namespace_parts = dict(namespace or {})
        self._owned = False
        if not isinstance(memory, ControllerPool) and self.namespace_parts:
            raise InvalidInputError("one controller is one namespace; give a ControllerPool")

    @classmethod
    def from_profile(
        cls,
        profile: str | Path | Profile = "default",
        *,
        root: Path | str | None = None,
        namespace: Mapping[str, str] | None = None,
        embedder: Embedder | str | None = None,
    ) -> Memories:
        """A facade over a pool of its own under ``root`` (default: the data home)."""
        pool = ControllerPool(profile, root=root or default_home(), embedder=embedder)
        facade = cls(pool, namespace=namespace)
        facade._owned = True
        return facade

    def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
    ) -> AddResult:
        """Store a text or chat messages for ``user_id``; ids come from content and time."""
        with self._book(user_id) as book:
            return book.add(messages, session_id=session_id, metadata=metadata, timestamp=timestamp)

    def search(self, query: str, *, user_id: str | None = None, limit: int = 10) -> list[MemoryHit]:
        """``user_id``'s memories that best match ``query``, best first."""
        with self._reader(user_id) as book:
            return [] if book is None else book.search(query, limit=limit)

    def get(self, ref: str, *, user_id: str | None = None) -> MemoryRecord | None:
        """One memory by id or citation, or None."""
        with self._reader(user_id) as book:
            return None if book is None else book.get(ref)

    def get_all(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> MemoryPage:
        """``user_id``'s memories in time order, a page at a time."""
        with self._reader(user_id) as book:
            if book is None:
                return MemoryPage(items=[], next_cursor=None, total=0, warning=NO_NAMESPACE)
            return book.get_all(session_id=session_id, limit=limit, cursor=cursor)

    def update(
        self,
        ref: str,
        text: str | None = None,
        *,
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryRecord:
        """New content and/or metadata for one memory (the old version stays in its history)."""
        with self._reader(user_id) as book:
            return (
                self._missing(user_id, ref)
                if book is None
                else book.update(ref, text, metadata=metadata)
            )

    def delete(self, ref: str, *, user_id: str | None = None) -> DeleteResult:
        """Forget one memory everywhere."""
        with self._reader(user_id) as book:
            return self._missing(user_id, ref) if book is None else book.delete(ref)

    def delete_all(
        self, *, user_id: str | None = None, session_id: str | None = None
    ) -> DeleteResult:
        """Forget one session of ``user_id``'s, or all of ``user_id``'s memories."""
        with self._reader(user_id) as book:
            if book is None:
                return DeleteResult(count=0, ids=[], citations=[], sessions=[])
            return book.delete_all(session_id=session_id)

    def history(self, ref: str, *, user_id: str | None = None) -> list[MemoryVersionRecord]:
        """The versions of one memory, oldest first."""
        with self._reader(user_id) as book:
            return self._missing(user_id, ref) if book is None else book.history(ref)

    def close(self) -> None:
        """Close the pool if this facade made it (``from_profile``)."""
        if self._owned and isinstance(self.memory, ControllerPool):
            self.memory.close()

    def __enter__(self) -> Memories:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _reader(self, user_id: str | None) -> Iterator[MemoryBook | None]:
        """The book of a namespace that exists, else None: reading never creates one."""
        if isinstance(self.memory, ControllerPool):
            namespace = self._namespace(self.memory, user_id)
            if not self.memory.exists(namespace):
                log.warning("namespace %s has no memories (nothing was written to it)", namespace)
                yield None
                return
        with self._book(user_id) as book:
            yield book

    def _missing(self, user_id: str | None, ref: str) -> NoReturn:
        raise MemoryNotFoundError(
            f"no memory has the id or citation {ref!r}: user_id {user_id!r} has no memories"
        )

    @contextmanager
    def _book(self, user_id: str | None) -> Iterator[MemoryBook]:
        if not isinstance(self.memory, ControllerPool):
            if user_id is not None:
                raise InvalidInputError(
                    "this facade serves one controller (one namespace); give no user_id, or "
                    "make it over a ControllerPool"
                )
            with nullcontext(self.memory) as controller:
                yield MemoryBook(controller)
            return
        with self.memory.lease(self._namespace(self.memory, user_id)) as controller:
            yield MemoryBook(controller)

    def _namespace(self, pool: ControllerPool, user_id: str | None) -> Namespace:
        if user_id is None and "user" in pool.profile.isolation.scope:
            raise InvalidInputError(
                "user_id is required: memories are kept per user (user_id='alice')"
            )
        return pool.namespace({**self.namespace_parts, "user": user_id})


def _memories(
    messages: Messages,
    session_id: str | None,
    metadata: dict[str, Any],
    timestamp: datetime | None,
) -> tuple[list[Memory], int]:
    """Memories for ``add``, and how many messages were skipped (no text, or instructions)."""
    given: object = messages  # callers without type checking pass anything
    if isinstance(given, str):
        listed: list[Mapping[str, Any]] = [{"role": "note", "content": given}]
        session = session_id or "default"
    elif isinstance(given, Sequence) and not isinstance(given, bytes | bytearray):
        listed = [_mapping(position, m) for position, m in enumerate(given)]
        session = session_id or default_session_id(listed)
    else:
        raise InvalidInputError(
            "add takes a text or a list of messages ({'role': 'user', 'content': '...'}), not "
            f"{type(messages).__name__}"
        )
    if not listed:
        raise InvalidInputError("add needs a text or at least one message")
    if len(session) > MAX_ID_LENGTH:
        raise InvalidInputError(f"session_id has more than {MAX_ID_LENGTH} characters")
    start = timestamp or datetime.now(UTC)
    memories, skipped = [], 0
    for position, message in enumerate(listed):
        memory = _memory(message, position, session, metadata, start + position * _TICK)
        if memory is None:
            skipped += 1
        else:
            memories.append(memory)
    return memories, skipped


def _mapping(position: int, message: object) -> Mapping[str, Any]:
    if not isinstance(message, Mapping):
        raise InvalidInputError(
            f"messages -> {position}: a message is a mapping with 'role' and 'content', "
            f"not {type(message).__name__}"
        )
    return message


def _memory(
    message: Mapping[str, Any],
    position: int,
    session: str,
    metadata: dict[str, Any],
    when: datetime,
) -> Memory | None:
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise InvalidInputError(f"messages -> {position}: 'role' must be a non-empty string")
    text = message_text(message)
    if role in NOT_MEMORIES or not text.strip():
        return None
    name = message.get("name")
    speaker = name if isinstance(name, str) and name else None
    given = message.get("id")
    try:
        return Memory(
            id=given if isinstance(given, str) else memory_id(session, when, position, role, text),
            content=text,
            timestamp=when,
            session_id=session,
            kind=_KINDS.get(role, MemoryKind.INSIGHT),
            speaker=speaker or (role if role in _KINDS else None),
            metadata={**metadata, "role": role, "source": "memories.add"},
        )
    except MemoryValidationError as exc:
        raise MemoryValidationError(f"messages -> {position}: {exc}", exc.errors) from None

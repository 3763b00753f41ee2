"""``/v1/memories``: the mem0-style facade over HTTP (add, list, get, update, delete, history).

The routes work in the namespace the query parameters name, like every ``/v1`` route. Reads of
a namespace nothing was ever written to answer empty (a list says so in ``warning``) or 404,
and never create it; only ``POST /v1/memories`` does. (No ``from __future__ import
annotations`` here: FastAPI reads the routes' annotations, which name local types.)
"""

from datetime import datetime
from typing import Annotated, Any, Self

from fastapi import APIRouter, Query
from pydantic import Field, field_validator, model_validator

from disclosure.core.records import (
    AddResult,
    DeleteResult,
    MemoryPage,
    MemoryRecord,
    MemoryVersionRecord,
)
from disclosure.faces.api.errors import ApiError
from disclosure.faces.api.models import (
    MAX_CONTENT_CHARS,
    MAX_REF_CHARS,
    Id,
    _Body,
    _in_range,
    _Request,
)
from disclosure.faces.memories import MAX_PAGE, NO_NAMESPACE, MemoryBook
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import Namespace
from tiers.errors import InvalidInputError, MemoryNotFoundError

__all__ = ["AddRequest", "HistoryResponse", "MessageIn", "UpdateRequest", "register"]


def _unicode(value: Any) -> Any:
    """Lone surrogates (valid JSON escapes, invalid Unicode) cannot be stored or tokenised."""
    for text in _strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


class MessageIn(_Request):
    """A chat message: one memory per user, assistant or tool message (system ones are
    instructions, not memories, and are skipped)."""

    role: str = Field(min_length=1, max_length=32)
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    name: str | None = Field(default=None, min_length=1, max_length=200)

    _text = field_validator("content", "name")(_unicode)


class AddRequest(_Request):
    """Either ``messages`` (a conversation) or ``text`` (a note); ids come from content and
    time."""

    messages: list[MessageIn] | None = Field(default=None, min_length=1)
    text: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    session_id: Id | None = None
    metadata: dict[str, Any] = Field(default={}, description="kept on every memory added")
    timestamp: datetime | None = Field(
        default=None, strict=False, description="when it was said (default: now)"
    )

    _checked = field_validator("text", "session_id", "metadata")(_unicode)
    _timestamp = field_validator("timestamp")(_in_range)

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (self.messages is None) == (self.text is None):
            raise ValueError("give either messages=[...] or text='...', not both or neither")
        return self


class UpdateRequest(_Request):
    """New content and/or new metadata (replacing the old) for one memory."""

    text: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    metadata: dict[str, Any] | None = None

    _checked = field_validator("text", "metadata")(_unicode)

    @model_validator(mode="after")
    def _something(self) -> Self:
        if self.text is None and self.metadata is None:
            raise ValueError("give text='...' and/or metadata={...}")
        return self


class HistoryResponse(_Body):
    ref: str
    versions: list[MemoryVersionRecord] = Field(description="oldest first, the current one last")


Ref = Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]


def register(router: APIRouter, pool: ControllerPool, *, reading: Any, writing: Any) -> None:
    """Add the ``/memories`` routes to ``router`` (``reading``/``writing``: the namespace
    dependencies of read and write routes, which check the key's grant)."""
    limits = pool.profile.service

    def book_of(ns: Namespace, ref: str | None = None) -> Any:
        _check_ref(ref)
        if not pool.exists(ns):
            raise MemoryNotFoundError(
                f"no memory has the id or citation {ref!r}: namespace {ns} has no memories"
            )
        return pool.lease(ns)

    @router.post("/memories", response_model=AddResult, tags=["memories"])
    def add_memories(body: AddRequest, ns: writing) -> AddResult:
        """Store a conversation (one memory per turn) or a note; an identical call (same
        content and timestamp) changes nothing."""
        given = body.messages or []
        if len(given) > limits.max_memories:
            raise ApiError(
                413,
                "too_many_memories",
                f"{len(given)} messages in one request; the limit is {limits.max_memories}",
            )
        messages: Any = body.text if body.text is not None else [m.model_dump() for m in given]
        with pool.writing(ns) as controller:
            return MemoryBook(controller).add(
                messages,
                session_id=body.session_id,
                metadata=body.metadata,
                timestamp=body.timestamp,
            )

    @router.get("/memories", response_model=MemoryPage, tags=["memories"])
    def list_memories(
        ns: reading,
        session_id: Annotated[str | None, Query(min_length=1, max_length=300)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        cursor: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    ) -> MemoryPage:
        """Memories in time order, ``limit`` at a time; pass ``next_cursor`` back as ``cursor``."""
        if not pool.exists(ns):
            return MemoryPage(items=[], next_cursor=None, total=0, warning=NO_NAMESPACE)
        with pool.lease(ns) as controller:
            return MemoryBook(controller).get_all(session_id=session_id, limit=limit, cursor=cursor)

    @router.delete("/memories", response_model=DeleteResult, tags=["memories"])
    def delete_memories(
        ns: writing,
        session_id: Annotated[str | None, Query(min_length=1, max_length=300)] = None,
        everything: Annotated[
            bool, Query(alias="all", description="every memory of the namespace")
        ] = False,
    ) -> DeleteResult:
        """Forget a session (``?session_id=``) or every memory (``?all=true``), everywhere."""
        if (session_id is None) == (not everything):
            raise InvalidInputError("give either session_id=... or all=true")
        if not pool.exists(ns):
            return DeleteResult(count=0, ids=[], citations=[], sessions=[])
        with pool.lease(ns) as controller:
            return MemoryBook(controller).delete_all(session_id=session_id)

    @router.get("/memories/{ref:path}/history", response_model=HistoryResponse, tags=["memories"])
    def memory_history(ref: str, ns: reading) -> HistoryResponse:
        """Every version the archive keeps of one memory, oldest first."""
        with book_of(ns, ref) as controller:
            return HistoryResponse(ref=ref, versions=MemoryBook(controller).history(ref))

    @router.patch("/memories/{ref:path}", response_model=MemoryRecord, tags=["memories"])
    def update_memory(ref: str, body: UpdateRequest, ns: writing) -> MemoryRecord:
        """New content and/or metadata; the replaced version stays in the memory's history."""
        with book_of(ns, ref) as controller:
            return MemoryBook(controller).update(ref, body.text, metadata=body.metadata)

    @router.delete("/memories/{ref:path}", response_model=DeleteResult, tags=["memories"])
    def delete_memory(ref: str, ns: writing) -> DeleteResult:
        """Forget one memory (id or citation) everywhere, with its earlier versions."""
        with book_of(ns, ref) as controller:
            return MemoryBook(controller).delete(ref)


def _check_ref(ref: str | None) -> None:
    if ref is None:
        return
    if len(ref) > MAX_REF_CHARS:
        raise InvalidInputError(f"an id or citation has at most {MAX_REF_CHARS} characters")
    try:
        _unicode(ref)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None

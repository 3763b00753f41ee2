"""The MCP server (the ``[mcp]`` extra): claude-mem's three-step workflow as tools.

``search`` (layer 1: an index of citations, one-line summaries and scores) -> ``timeline``
(layer 2: what was said around chosen hits) -> ``get_details`` (layer 3: chosen memories in
full), plus ``disclose`` (the controller's own choice of level and budget in one call), all
marked read-only; and two writes: ``remember`` (save a memory) and ``forget`` (destructive:
it previews what it would erase until called with ``confirm=true``). Every argument has its
bounds or choices in the schema, unknown arguments are refused, and a bad one is answered
with a tool error that names it. The
server serves one namespace, fixed when it starts: no tool takes a namespace, so no tool call
can reach another namespace's memories. ``disclosure serve --mcp`` runs it on stdio, over the
local service of its data root (a :class:`~disclosure.service.client.MemoryClient`) when one runs,
so that several MCP servers, the command line and scripts share one memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeVar, Union

from pydantic import BaseModel, Field

from disclosure.core import workflow
from disclosure.core.empty import nothing_stored
from disclosure.core.records import AddedMemory, AddResult, MemoryRecord
from disclosure.core.workflow import IndexEntry
from disclosure.faces.extras import require
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import Namespace
from tiers.errors import DisclosureError, InvalidInputError, MemoryNotFoundError
from tiers.memory import MAX_ID_LENGTH

MAX_QUERY_CHARS = 4000
MAX_REF_CHARS = 300
MAX_CONTENT_CHARS = 100_000
MAX_BUDGET = 1_000_000

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.core.result import DisclosureResult
    from disclosure.service.client import MemoryClient
    from tiers.reports import ForgetReport

T = TypeVar("T")

__all__ = [
    "DiscloseOutput",
    "ForgetOutput",
    "RememberOutput",
    "SearchOutput",
    "create_mcp_server",
]

INSTRUCTIONS = """\
Long-term memory of earlier conversations, disclosed progressively to save tokens.
Work in three steps: 1. search(query) returns an index (citation, one-line summary, score);
2. timeline(refs) shows what was said around the hits that look relevant; 3. get_details(refs)
returns chosen memories in full. Fetch details only for what you need. disclose(query) does all
three at once within a token budget. Cite memories as [mem:xxxxxx].
remember(content) saves something worth keeping; forget(refs) erases memories, but only when
called with confirm=true after the user agreed to what it listed."""


class Caller(Protocol):
    """Runs a step on the namespace's memory (the workflow's steps over a controller, or a
    service client); library errors become tool errors."""

    def __call__(self, step: Callable[[_Memory], T]) -> T: ...


Query = Annotated[
    str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to look for")
]
Limit = Annotated[int, Field(ge=1, le=workflow.MAX_RESULTS, description="how many results")]
Refs = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]],
    Field(
        min_length=1,
        max_length=workflow.MAX_RESULTS,
        description="ids or citations such as mem:a7Bc3x",
    ),
]
Window = Annotated[
    int | None,
    Field(ge=0, le=workflow.MAX_WINDOW, description="memories shown on each side"),
]
Level = Annotated[
    Literal["minimal", "standard", "detailed", "comprehensive"] | None,
    Field(description="how much to disclose; default: chosen for the query"),
]
Budget = Annotated[int | None, Field(ge=1, le=MAX_BUDGET, description="the most tokens to spend")]
Content = Annotated[
    str, Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="what to remember")
]
SessionId = Annotated[
    str | None,
    Field(min_length=1, max_length=MAX_ID_LENGTH, description="groups memories (default: notes)"),
]


class RememberOutput(BaseModel):
    citation: str
    id: str
    stored: bool  # False: the same memory was already there


class ForgetOutput(BaseModel):
    forgotten: bool  # False: only a preview; call again with confirm=true
    count: int
    citations: list[str]
    text: str


class SearchOutput(BaseModel):
    """What the ``search`` tool returns: the index entries and the same as text."""

    results: list[IndexEntry]
    text: str
    warnings: list[str] = []  # e.g. nothing is stored in this namespace yet


class DiscloseOutput(BaseModel):
    """What the ``disclose`` tool returns: the context, its level, budget and citations."""

    text: str
    savings_line: str
    level: str
    budget: int
    tokens_used: int
    citations: list[str]
    warnings: list[str] = []  # e.g. nothing is stored in this namespace yet


def create_mcp_server(
    memory: DisclosureController | ControllerPool | MemoryClient,
    *,
    namespace: Mapping[str, str] | None = None,
    name: str = "tiered-disclosure",
) -> Any:
    """An MCP server (``mcp.server.mcpserver.MCPServer``) over one namespace's memories: a
    controller, a pool's namespace, or a service client (whose namespace is its own)."""
    (mcpserver,) = require("mcp", "the MCP server")
    from mcp.types import ToolAnnotations

    server = mcpserver.MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")
    call = _caller(_leaser(memory, namespace), mcpserver)
    reading = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    for tool in _read_tools(call):
        server.add_tool(tool, annotations=reading)
    remember, forget = _write_tools(call)
    server.add_tool(
        remember,
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False),
    )
    server.add_tool(
        forget,
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
        ),
    )
    _forbid_unknown_arguments(server)
    return server


def _read_tools(call: Caller) -> list[Callable[..., Any]]:
    def search(query: Query, limit: Limit = 10) -> SearchOutput:
        """Step 1: an index of the memories that best match the query (citation, one-line
        summary, score), best first. Cheap: scan it, then pick what to expand."""
        found, warning = call(lambda c: (c.search(query, limit=limit), _warning_of(c)))
        return SearchOutput(
            results=found,
            text="\n".join(e.line() for e in found) or f"(no memories match{_also(warning)})",
            warnings=[warning] if warning else [],
        )

    def timeline(refs: Refs, window: Window = None) -> str:
        """Step 2: what was said around the given memories (ids or citations like
        mem:a7Bc3x) in their sessions, the memory itself marked with an arrow."""
        return call(lambda c: c.timeline(refs, window=window))

    def get_details(refs: Refs) -> str:
        """Step 3: the given memories (ids or citations) in full, with their metadata."""
        shown = call(lambda c: c.details(refs))
        return "\n\n".join(text for _, text in shown)

    def disclose(query: Query, level: Level = None, budget: Budget = None) -> DiscloseOutput:
        """All three steps at once: the context worth knowing for the query, within a token
        budget. level: how much to disclose (default: chosen for the query); budget: the most
        tokens to spend (default: adaptive)."""
        result = call(lambda c: c.disclose(query, level=level, budget=budget))
        return DiscloseOutput(
            text=result.text,
            savings_line=result.savings_line,
            level=result.level.value,
            budget=result.budget,
            tokens_used=result.tokens_used,
            citations=[i.citation for i in result.items],
            warnings=list(result.warnings),
        )

    return [search, timeline, get_details, disclose]


def _write_tools(call: Caller) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def remember(content: Content, session_id: SessionId = None) -> RememberOutput:
        """Save something worth remembering (a fact, a decision, a preference) as a memory of
        this namespace; it can be searched and disclosed at once. Returns its citation."""

        def run(memory: _Memory) -> AddedMemory:
            added = memory.add(content, session_id=session_id)
            if not added.results:
                raise InvalidInputError(
                    "content: nothing to remember (it is blank or entirely <private>)"
                )
            return added.results[0]

        record: AddedMemory = call(run)
        return RememberOutput(citation=record.citation, id=record.id, stored=record.event != "NONE")

    def forget(refs: Refs, confirm: bool = False) -> ForgetOutput:
        """Erase memories (ids or citations) for good, from every tier. Without confirm=true
        nothing is erased: the answer lists what would be, so the user can agree first; call
        again with confirm=true to erase them."""

        def run(memory: _Memory) -> ForgetOutput:
            found = list({r.id: r for r in (memory.get(ref) for ref in refs)}.values())
            if not confirm:
                lines = [f"[{r.citation}] {r.content[:120]}" for r in found]
                return ForgetOutput(
                    forgotten=False,
                    count=len(found),
                    citations=[r.citation for r in found],
                    text="Not erased yet. Would forget:\n"
                    + "\n".join(lines)
                    + "\nCall forget again with confirm=true to erase them permanently.",
                )
            report = memory.forget(ids=[r.id for r in found])
            return ForgetOutput(
                forgotten=True,
                count=report.count,
                citations=[r.citation for r in found],
                text=f"Forgot {report.count} memories for good.",
            )

        return call(run)

    return remember, forget


class _Steps:
    """The workflow's steps over one controller, under the names a service client has."""

    def __init__(self, controller: DisclosureController) -> None:
        self.controller = controller

    def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        return workflow.search_index(self.controller, query, limit=limit)

    def timeline(self, refs: list[str], *, window: int | None = None) -> str:
        return workflow.timeline(self.controller, refs, window=window)

    def details(self, refs: list[str]) -> list[tuple[str, str]]:
        return workflow.details(self.controller, refs)

    def disclose(
        self, query: str, *, level: str | None = None, budget: int | None = None
    ) -> DisclosureResult:
        return self.controller.disclose(query, level=level, budget=budget)

    def add(self, content: str, *, session_id: str | None = None) -> AddResult:
        from disclosure.faces.memories import MemoryBook  # it imports this package's workflow

        return MemoryBook(self.controller).add(content, session_id=session_id)

    def get(self, ref: str) -> MemoryRecord:
        """The memory ``ref`` names (an unknown one is an error, as over a client)."""
        from disclosure.faces.memories import MemoryBook

        record = MemoryBook(self.controller).get(ref)
        if record is None:
            raise MemoryNotFoundError(f"no memory has the id or citation {ref!r}")
        return record

    def forget(self, *, ids: list[str]) -> ForgetReport:
        return self.controller.forget(ids=ids)


class _Nothing:
    """The steps over a namespace nothing is stored in: empty answers that say so, no memory
    to get; only ``add`` (``remember``) creates the namespace."""

    def __init__(self, pool: ControllerPool, namespace: Namespace) -> None:
        self.pool = pool
        self.namespace = namespace
        self.warning = nothing_stored(namespace, first="write (remember)")

    def search(self, query: str, *, limit: int = 10) -> list[IndexEntry]:
        return []

    def timeline(self, refs: list[str], *, window: int | None = None) -> str:
        return f"({self.warning})"

    def details(self, refs: list[str]) -> list[tuple[str, str]]:
        raise MemoryNotFoundError(f"no memory has the id or citation {refs[0]!r}: {self.warning}")

    def disclose(
        self, query: str, *, level: str | None = None, budget: int | None = None
    ) -> DisclosureResult:
        return self.pool.empty.disclose(query, warning=self.warning, level=level, budget=budget)

    def add(self, content: str, *, session_id: str | None = None) -> AddResult:
        from disclosure.faces.memories import MemoryBook

        with self.pool.writing(self.namespace) as controller:
            return MemoryBook(controller).add(content, session_id=session_id)

    def get(self, ref: str) -> MemoryRecord:
        raise MemoryNotFoundError(f"no memory has the id or citation {ref!r}: {self.warning}")

    def forget(self, *, ids: list[str]) -> ForgetReport:
        from tiers.reports import ForgetReport

        return ForgetReport()


_Memory = Union["_Steps", "_Nothing", "MemoryClient"]


def _warning_of(memory: _Memory) -> str | None:
    return memory.warning if isinstance(memory, _Nothing) else None


def _also(warning: str | None) -> str:
    return f"; {warning}" if warning else ""


def _leaser(
    memory: DisclosureController | ControllerPool | MemoryClient,
    namespace: Mapping[str, str] | None,
) -> Callable[[], AbstractContextManager[_Memory]]:
    from disclosure.service.client import MemoryClient

    if isinstance(memory, MemoryClient):
        if namespace:
            raise InvalidInputError("a client serves its own namespace; give it there")
        return lambda: nullcontext(memory)
    if isinstance(memory, ControllerPool):
        fixed = memory.namespace(dict(namespace or {}))
        return lambda: _leased(memory, fixed)
    if namespace:
        raise InvalidInputError("one controller is one namespace; give a ControllerPool to name it")
    steps = _Steps(memory)
    return lambda: nullcontext(steps)


@contextmanager
def _leased(pool: ControllerPool, namespace: Namespace) -> Iterator[_Steps | _Nothing]:
    """The namespace's steps; a namespace nothing is stored in is not created by a read."""
    if not pool.exists(namespace):
        yield _Nothing(pool, namespace)
        return
    with pool.lease(namespace) as controller:
        yield _Steps(controller)


def _caller(lease: Callable[[], AbstractContextManager[_Memory]], mcpserver: Any) -> Caller:
    """Runs a step on the memory; the library's errors become the tool's error message."""
    tool_error = mcpserver.exceptions.ToolError

    def call(step: Callable[[_Memory], T]) -> T:
        with _as_tool_error(tool_error), lease() as memory:
            return step(memory)

    return call


@contextmanager
def _as_tool_error(tool_error: type[Exception]) -> Iterator[None]:
    try:
        yield
    except DisclosureError as exc:
        raise tool_error(str(exc)) from None


def _forbid_unknown_arguments(server: Any) -> None:
    """A misspelt argument is an error naming it, not silently dropped: each tool's argument
    model forbids extras, and its schema says so (additionalProperties: false)."""
    manager = getattr(server, "_tool_manager", None)
    for tool in manager.list_tools() if manager is not None else ():
        model = getattr(getattr(tool, "fn_metadata", None), "arg_model", None)
        if model is None:
            continue
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tool.parameters["additionalProperties"] = False

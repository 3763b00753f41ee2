"""The MCP server (the ``[mcp]`` extra): claude-mem's three-step workflow as tools.

``search`` (layer 1: an index of citations, one-line summaries and scores) -> ``timeline``
(layer 2: what was said around chosen hits) -> ``get_details`` (layer 3: chosen memories in
full), plus ``disclose`` (the controller's own choice of level and budget in one call). The
server serves one namespace, fixed when it starts: no tool takes a namespace, so no tool call
can reach another namespace's memories. ``disclosure serve --mcp`` runs it on stdio, over the
local service of its data root (a :class:`~disclosure.client.MemoryClient`) when one runs, so
that several MCP servers, the command line and scripts share one memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel

from disclosure.extras import require
from disclosure.mcp import workflow
from disclosure.mcp.workflow import IndexEntry
from disclosure.namespaces import Namespace
from disclosure.pool import ControllerPool
from tiers.errors import DisclosureError, InvalidInputError

if TYPE_CHECKING:
    from disclosure.client import MemoryClient
    from disclosure.controller import DisclosureController
    from disclosure.result import DisclosureResult

T = TypeVar("T")

__all__ = ["DiscloseOutput", "SearchOutput", "create_mcp_server"]

INSTRUCTIONS = """\
Long-term memory of earlier conversations, disclosed progressively to save tokens.
Work in three steps: 1. search(query) returns an index (citation, one-line summary, score);
2. timeline(refs) shows what was said around the hits that look relevant; 3. get_details(refs)
returns chosen memories in full. Fetch details only for what you need. disclose(query) does all
three at once within a token budget. Cite memories as [mem:xxxxxx]."""


class SearchOutput(BaseModel):
    results: list[IndexEntry]
    text: str


class DiscloseOutput(BaseModel):
    text: str
    savings_line: str
    level: str
    budget: int
    tokens_used: int
    citations: list[str]


def create_mcp_server(
    memory: DisclosureController | ControllerPool | MemoryClient,
    *,
    namespace: Mapping[str, str] | None = None,
    name: str = "tiered-disclosure",
) -> Any:
    """An MCP server (``mcp.server.mcpserver.MCPServer``) over one namespace's memories: a
    controller, a pool's namespace, or a service client (whose namespace is its own)."""
    (mcpserver,) = require("mcp", "the MCP server")
    server = mcpserver.MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")
    lease = _leaser(memory, namespace)
    call = _caller(lease, mcpserver)

    def search(query: str, limit: int = 10) -> SearchOutput:
        """Step 1: an index of the memories that best match the query (citation, one-line
        summary, score), best first. Cheap: scan it, then pick what to expand."""
        found = call(lambda c: c.search(query, limit=limit))
        return SearchOutput(
            results=found,
            text="\n".join(e.line() for e in found) or "(no memories match)",
        )

    def timeline(refs: list[str], window: int | None = None) -> str:
        """Step 2: what was said around the given memories (ids or citations like
        mem:a7Bc3x) in their sessions, the memory itself marked with an arrow."""
        return call(lambda c: c.timeline(refs, window=window))

    def get_details(refs: list[str]) -> str:
        """Step 3: the given memories (ids or citations) in full, with their metadata."""
        shown = call(lambda c: c.details(refs))
        return "\n\n".join(text for _, text in shown)

    def disclose(query: str, level: str | None = None, budget: int | None = None) -> DiscloseOutput:
        """All three steps at once: the context worth knowing for the query, within a token
        budget. level: minimal, standard, detailed or comprehensive (default: chosen for the
        query); budget: the most tokens to spend (default: adaptive)."""
        result = call(lambda c: c.disclose(query, level=level, budget=budget))
        return DiscloseOutput(
            text=result.text,
            savings_line=result.savings_line,
            level=result.level.value,
            budget=result.budget,
            tokens_used=result.tokens_used,
            citations=[i.citation for i in result.items],
        )

    for tool in (search, timeline, get_details, disclose):
        server.add_tool(tool)
    return server


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


_Memory = Union["_Steps", "MemoryClient"]


def _leaser(
    memory: DisclosureController | ControllerPool | MemoryClient,
    namespace: Mapping[str, str] | None,
) -> Callable[[], AbstractContextManager[_Memory]]:
    from disclosure.client import MemoryClient

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
def _leased(pool: ControllerPool, namespace: Namespace) -> Iterator[_Steps]:
    with pool.lease(namespace) as controller:
        yield _Steps(controller)


def _caller(
    lease: Callable[[], AbstractContextManager[_Memory]], mcpserver: Any
) -> Callable[[Callable[[_Memory], T]], T]:
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

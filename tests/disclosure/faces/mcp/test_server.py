"""The MCP server's tools, called in process through the mcp package's own client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")

from mcp import Client

from disclosure import ControllerPool
from disclosure.faces.mcp.server import create_mcp_server
from disclosure.sample import load_sample_conversation


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path_factory.mktemp("mcp-root")) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


def call(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(run())


def text(result: Any) -> str:
    return "\n".join(part.text for part in result.content)


def test_the_tools_are_listed_with_their_workflow(pool: ControllerPool) -> None:
    """search, timeline, get_details and disclose; the instructions explain the three steps."""
    server = create_mcp_server(pool, namespace={"user": "dana"})

    async def listing() -> tuple[list[str], str | None]:
        async with Client(server) as client:
            tools = await client.list_tools()
            return [t.name for t in tools.tools], client.instructions

    names, instructions = asyncio.run(listing())
    assert names == ["search", "timeline", "get_details", "disclose", "remember", "forget"]
    assert instructions is not None and "three steps" in instructions


def test_search_then_timeline_then_details(pool: ControllerPool) -> None:
    """Layer 1 gives citations and summaries; layer 2 the neighbours; layer 3 the full text."""
    server = create_mcp_server(pool, namespace={"user": "dana"})
    (found,) = call(server, [("search", {"query": "billing database postgres", "limit": 4})])
    assert not found.is_error
    results = found.structured_content["results"]
    assert 1 <= len(results) <= 4
    assert all(r["citation"].startswith("mem:") and r["summary"] for r in results)
    top = results[0]["citation"]
    timeline, details = call(
        server, [("timeline", {"refs": [top], "window": 1}), ("get_details", {"refs": [top]})]
    )
    assert f"[{top}]" in text(timeline) and "\u2192" in text(timeline)
    assert f"### [{top}]" in text(details)
    assert len(text(details)) > len(results[0]["summary"])


def test_disclose_returns_the_context_and_the_savings(pool: ControllerPool) -> None:
    """disclose: the controller's own level and budget, with citations and the savings line."""
    server = create_mcp_server(pool, namespace={"user": "dana"})
    (result,) = call(server, [("disclose", {"query": "Why did we move billing off SQLite?"})])
    data = result.structured_content
    assert "Postgres" in data["text"] and data["citations"]
    assert data["tokens_used"] <= data["budget"]
    assert "savings" in data["savings_line"]


def test_the_server_is_bound_to_its_namespace(pool: ControllerPool) -> None:
    """Eve's server finds nothing of Dana's, even by Dana's citations; errors are tool errors."""
    dana = create_mcp_server(pool, namespace={"user": "dana"})
    (found,) = call(dana, [("search", {"query": "postgres", "limit": 1})])
    citation = found.structured_content["results"][0]["citation"]
    eve = create_mcp_server(pool, namespace={"user": "eve"})
    search, details, disclosed = call(
        eve,
        [
            ("search", {"query": "postgres"}),
            ("get_details", {"refs": [citation]}),
            ("disclose", {"query": "postgres", "level": "comprehensive"}),
        ],
    )
    assert search.structured_content["results"] == []
    assert details.is_error and "no memory has the id or citation" in text(details)
    assert "Postgres" not in disclosed.structured_content["text"]
    # eve has nothing stored: empty answers that say so, and no read creates her namespace
    assert "user='eve'" in search.structured_content["warnings"][0]
    assert disclosed.structured_content["tokens_used"] == 0
    assert disclosed.structured_content["level"] == "comprehensive"
    assert "nothing is stored" in disclosed.structured_content["warnings"][0]
    (around,) = call(eve, [("timeline", {"refs": [citation]})])
    assert not around.is_error and "nothing is stored" in text(around)
    assert not pool.exists(pool.namespace(user="eve"))
    (bad,) = call(eve, [("search", {"query": "x", "limit": 1000})])
    assert bad.is_error and "limit" in text(bad) and "less than or equal to 100" in text(bad)


def test_a_bad_namespace_is_refused_when_the_server_is_made(tmp_path: Path) -> None:
    """The namespace is validated before any tool can run."""
    from tiers.errors import NamespaceError

    with ControllerPool("default", root=tmp_path) as pool, pytest.raises(NamespaceError):
        create_mcp_server(pool, namespace={"user": "../dana"})


def test_tool_schemas_carry_choices_bounds_and_hints(pool: ControllerPool) -> None:
    """Enums and bounds in the input schemas; read-only and destructive hints; no extras."""
    server = create_mcp_server(pool, namespace={"user": "dana"})

    async def listing() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = asyncio.run(listing())
    level = tools["disclose"].input_schema["properties"]["level"]["anyOf"][0]
    assert level["enum"] == ["minimal", "standard", "detailed", "comprehensive"]
    limit = tools["search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 100)
    assert tools["timeline"].input_schema["properties"]["refs"]["maxItems"] == 100
    assert all(t.input_schema["additionalProperties"] is False for t in tools.values())
    for name in ("search", "timeline", "get_details", "disclose"):
        assert tools[name].annotations.read_only_hint is True
    assert tools["remember"].annotations.read_only_hint is False
    assert tools["remember"].annotations.destructive_hint is False
    assert tools["forget"].annotations.destructive_hint is True


def test_every_bad_argument_is_named(pool: ControllerPool) -> None:
    """A bad level, budget, misspelt or missing argument: a tool error naming it."""
    server = create_mcp_server(pool, namespace={"user": "dana"})
    cases = [
        ("disclose", {"query": "x", "level": "everything"}, "level"),
        ("disclose", {"query": "x", "budget": 0}, "budget"),
        ("disclose", {"query": "x", "levle": "minimal"}, "levle"),
        ("search", {}, "query"),
        ("timeline", {"refs": ["mem:zzzzzz"], "window": 99}, "window"),
        ("remember", {"content": ""}, "content"),
        ("remember", {"content": "<private>secret</private>"}, "content"),
        ("forget", {"refs": []}, "refs"),
        ("forget", {"refs": ["mem:zzzzzz"]}, "mem:zzzzzz"),
    ]
    results = call(server, [(name, args) for name, args, _ in cases])
    for (name, args, needle), result in zip(cases, results, strict=True):
        assert result.is_error, (name, args)
        assert needle in text(result), (name, args, text(result))


def test_remember_then_forget_after_confirmation(tmp_path: Path) -> None:
    """An agent saves what it learns, finds it, and forgets it only when confirmed."""
    with ControllerPool("default", root=tmp_path) as own:
        server = create_mcp_server(own, namespace={"user": "kim"})
        (nothing,) = call(server, [("forget", {"refs": ["mem:abcdef"], "confirm": True})])
        assert nothing.is_error and "nothing is stored" in text(nothing)
        assert not own.exists(own.namespace(user="kim"))  # only remember creates it
        saved, found = call(
            server,
            [
                ("remember", {"content": "Kim prefers tabs over spaces in Go code."}),
                ("search", {"query": "tabs or spaces", "limit": 3}),
            ],
        )
        assert not saved.is_error and saved.structured_content["stored"] is True
        citation = saved.structured_content["citation"]
        assert found.structured_content["results"][0]["citation"] == citation
        preview, still = call(
            server,
            [("forget", {"refs": [citation]}), ("get_details", {"refs": [citation]})],
        )
        assert preview.structured_content["forgotten"] is False
        assert "confirm=true" in preview.structured_content["text"]
        assert "tabs over spaces" in preview.structured_content["text"]
        assert not still.is_error  # nothing was erased by the preview
        erased, gone = call(
            server,
            [
                ("forget", {"refs": [citation], "confirm": True}),
                ("get_details", {"refs": [citation]}),
            ],
        )
        assert erased.structured_content == {
            "forgotten": True,
            "count": 1,
            "citations": [citation],
            "text": "Forgot 1 memories for good.",
        }
        assert gone.is_error and "no memory has the id or citation" in text(gone)

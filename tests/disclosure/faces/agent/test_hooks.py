"""Every hook event against a real local service: what it stores, what it hands the agent."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from disclosure.faces.agent.project import agent_home, namespace_key, project_namespace
from disclosure.service.client import MemoryClient
from tests.disclosure.faces.agent.hookrun import Served, serve
from tests.disclosure.faces.agent.shapes import Transcript
from tiers.errors import MemoryNotFoundError

pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

CITATION = re.compile(r"\[(mem:[A-Za-z0-9_-]+)\]")
FACT = "The deploy codename is BLUEHERON; it ships on Friday from the eu-west cluster."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("hooks"))


def client(served: Served, user: str) -> MemoryClient:
    return MemoryClient(served.info.url, api_key=served.info.token, namespace={"user": user})


def read_payload(session: str, tool_use_id: str, project: str = "/home/dana/billing") -> dict:
    return {
        "session_id": session,
        "transcript_path": f"/nowhere/{session}.jsonl",
        "cwd": project,
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": f"{project}/notes.txt"},
        "tool_response": {"type": "text", "file": {"filePath": f"{project}/notes.txt",
                                                   "content": FACT + "\n"}},
        "tool_use_id": tool_use_id,
    }  # fmt: skip


def test_a_session_is_observed_stored_recalled_and_consolidated(
    served: Served, tmp_path: Path
) -> None:
    """tool-use stores an observation; prompt discloses it with its citation and the savings
    line; stop stores the turn from the transcript and gives feedback on the cited memory;
    session-end consolidates; the next session starts with what was worked on."""
    ns = "user=flow"
    served.warm("flow")
    ran = served.hook("tool-use", read_payload("s1", "toolu_1"), namespace=ns)
    assert (ran.code, ran.out, ran.err) == (0, "", "")
    with client(served, "flow") as memory:
        stored = memory.get("cc:s1:tool:toolu_1")
    assert stored.kind.value == "observation" and stored.speaker is None  # no participant
    assert stored.content == f"Read notes.txt\n{FACT}\n"
    assert stored.metadata["target"] == "notes.txt" and stored.session_id == "s1"

    prompt = {"session_id": "s1", "prompt": "What is the deploy codename?", "prompt_id": "p1",
              "cwd": "/home/dana/billing", "hook_event_name": "UserPromptSubmit"}  # fmt: skip
    ran = served.hook("prompt", prompt, namespace=ns)
    assert ran.code == 0 and ran.err == ""
    context = ran.context()
    assert json.loads(ran.out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "BLUEHERON" in context and f"[{stored.citation}]" in context
    assert re.search(r"Using \S+ tokens", context), context  # the savings line
    assert context.startswith("<memory-reference>") and context.endswith("</memory-reference>")

    t = Transcript("s1", "/home/dana/billing")
    t.prompt("What is the deploy codename?", prompt_id="p1")
    t.tool("Read", {"file_path": "/home/dana/billing/notes.txt"},
           {"file": {"content": FACT}}, FACT)  # fmt: skip
    t.lines[-2]["message"]["content"][0]["id"] = "toolu_1"
    t.lines[-1]["message"]["content"][0]["tool_use_id"] = "toolu_1"
    reply = f"It is BLUEHERON [{stored.citation}]."
    t.reply(reply, message_id="msg_9")
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text(t.text(), encoding="utf-8")
    stop = {"session_id": "s1", "transcript_path": str(transcript), "prompt_id": "p1",
            "cwd": "/home/dana/billing", "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": reply}  # fmt: skip
    ran = served.hook("stop", stop, namespace=ns)
    assert (ran.code, ran.err) == (0, "")
    with client(served, "flow") as memory:
        assert memory.get("cc:s1:msg_9").content == reply
        assert memory.get(f"cc:s1:{t.lines[0]['uuid']}").kind.value == "prompt"
        versions = memory._request("GET", "/v1/memories/cc:s1:tool:toolu_1/history")["versions"]
        assert len(versions) == 1  # observed at tool use: not stored again at the end of turn
        uses = memory._request("GET", f"/v1/citations/{stored.citation}")["uses"]
    assert [(u["how"], u["session_id"]) for u in uses] == [("cited", "s1")]  # the feedback

    ran = served.hook("session-end", {"session_id": "s1", "reason": "exit"}, namespace=ns)
    assert (ran.code, ran.err) == (0, "")
    assert "POST /v1/consolidate -> 200" in (served.root / "service.log").read_text()

    start = {"session_id": "s2", "source": "startup", "hook_event_name": "SessionStart"}
    ran = served.hook("session-start", start, namespace=ns)
    assert ran.code == 0 and ran.err == ""
    context = ran.context()
    assert "Worked on:\n- What is the deploy codename?" in context
    assert f"Last reply: {reply}" in context and len(context) < 2000
    with client(served, "flow") as memory:
        shown = {
            memory.get(f"cc:s1:{t.lines[0]['uuid']}").citation,
            memory.get("cc:s1:msg_9").citation,
        }
    assert shown <= set(CITATION.findall(context))


def test_the_slash_commands_answer_in_the_context(served: Served) -> None:
    ns = "user=commands"
    served.warm("commands")
    served.hook("tool-use", read_payload("s3", "toolu_3"), namespace=ns)
    with client(served, "commands") as memory:
        citation = memory.get("cc:s3:tool:toolu_3").citation

    def command(text: str) -> str:
        ran = served.hook("prompt", {"session_id": "s3", "prompt": text}, namespace=ns)
        assert ran.code == 0 and ran.err == "", ran
        return ran.context()

    found = command("/mem-search deploy codename")
    assert found.splitlines()[3] == "## /mem-search deploy codename"
    assert f"[{citation}] Read notes.txt" in found
    assert FACT in command(f"/mem-show {citation}")
    stats = command("/mem-stats")
    assert "Namespace: tenant=default, user=commands" in stats and "- cold: 1" in stats
    gone = command(f"/mem-forget {citation} mem:nothere")
    assert f"Forgot 1 memories: {citation}. Nothing matched mem:nothere." in gone
    with client(served, "commands") as memory, pytest.raises(MemoryNotFoundError):
        memory.get("cc:s3:tool:toolu_3")
    assert "Usage: /mem-show" in command("/mem-show")


def test_turns_of_a_slash_command_are_not_stored(served: Served, tmp_path: Path) -> None:
    t = Transcript("s4")
    t.prompt("<command-name>/mem-stats</command-name>\n<command-args></command-args>",
             prompt_id="p4")  # fmt: skip
    t.reply("Namespace: ...", message_id="msg_4")
    path = tmp_path / "s4.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    stop = {"session_id": "s4", "transcript_path": str(path), "prompt_id": "p4",
            "last_assistant_message": "Namespace: ..."}  # fmt: skip
    assert served.hook("stop", stop, namespace="user=quiet").err == ""
    with client(served, "quiet") as memory:
        assert memory.stats().get("warnings")  # nothing was ever stored there


def test_the_namespace_is_the_projects_unless_given(served: Served) -> None:
    """Without --namespace the hook derives it from the project directory (the agent's
    $CLAUDE_PROJECT_DIR, else its cwd), as the installer does."""
    user = project_namespace("/srv/shop")["user"]
    assert user.startswith("shop-")
    served.warm(user)
    ran = served.hook("tool-use", read_payload("s5", "toolu_5", "/srv/shop"), namespace=None)
    assert (ran.code, ran.err) == (0, "")
    with client(served, user) as memory:
        assert memory.get("cc:s5:tool:toolu_5").metadata["cwd"] == "/srv/shop"
    home = agent_home(served.root)
    assert (home / f"{namespace_key({'user': user})}.state.json").is_file()


HEAVY = ("spacy", "chromadb", "torch", "onnxruntime", "numpy", "pydantic", "pydantic_core",
         "analyzers", "httpx", "fastapi", "sentence_transformers", "tiktoken")  # fmt: skip


def imported(ran_err: str) -> set[str]:
    """The modules a process imported, from its `python -X importtime` lines."""
    names = set()
    for line in ran_err.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_a_hook_process_loads_no_model_engine_or_analyzer(served: Served, tmp_path: Path) -> None:
    """The console script routes `hook` before loading any command: a hook process (prompt,
    tool use, end of turn, session start) imports the thin client only: no spaCy, Chroma,
    torch, ONNX, numpy, pydantic, httpx or the analyzer (`python -X importtime` lists them)."""
    import sys

    served.warm("light")
    prefix = (sys.executable, "-X", "importtime")
    served.hook("tool-use", read_payload("s6", "toolu_6"), namespace="user=light")
    prompt = {"session_id": "s6", "prompt": "What is the deploy codename?", "prompt_id": "p6"}
    t = Transcript("s6")
    t.prompt("What is the deploy codename?", prompt_id="p6")
    t.reply("BLUEHERON.", message_id="msg_6")
    path = tmp_path / "s6.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    stop = {"session_id": "s6", "transcript_path": str(path), "prompt_id": "p6"}
    runs = {
        "prompt": served.hook("prompt", prompt, namespace="user=light", prefix=prefix),
        "tool-use": served.hook("tool-use", read_payload("s6", "toolu_7"), namespace="user=light",
                                prefix=prefix),
        "stop": served.hook("stop", stop, namespace="user=light", prefix=prefix),
        "session-start": served.hook("session-start", {"session_id": "s7"},
                                     namespace="user=light", prefix=prefix),
    }  # fmt: skip
    assert "BLUEHERON" in runs["prompt"].context()  # it did reach the service and answer
    assert "Worked on:" in runs["session-start"].context()
    for event, ran in runs.items():
        modules = imported(ran.err)
        assert "disclosure.faces.agent.hooks" in modules, event
        assert "disclosure.faces.cli.common" not in modules and "tiers.memory" not in modules, event
        assert {m.split(".")[0] for m in modules} & set(HEAVY) == set(), event
        assert not [line for line in ran.err.splitlines() if not line.startswith("import time")]


def test_the_installed_mcp_entry_serves_what_the_hooks_stored(
    served: Served, tmp_path: Path
) -> None:
    """The MCP server the installer writes into .mcp.json (`disclosure agent mcp`) serves the
    project's namespace: the one its hooks write to."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters, stdio_client

    from disclosure.faces.cli import main
    from tests.disclosure.faces.agent.hookrun import clean_env

    project = tmp_path / "shop"
    project.mkdir()
    argv = ["agent", "install", "claude-code", "--project", str(project), "--root",
            str(served.root), "--profile", str(served.profile)]  # fmt: skip
    assert main(argv) == 0
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["tiered-disclosure"]
    user = project_namespace(project)["user"]
    served.warm(user)
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert f"--namespace {user}" in hooks["PostToolUse"][0]["hooks"][0]["command"]
    ran = served.hook("tool-use", read_payload("s9", "toolu_9", str(project)), namespace=user)
    assert (ran.code, ran.err) == (0, "")

    async def search() -> list[dict[str, object]]:
        server = StdioServerParameters(command=entry["command"], args=entry["args"],
                                       env=clean_env(CLAUDE_PROJECT_DIR=str(project)),
                                       cwd=str(project))  # fmt: skip
        with (tmp_path / "mcp.log").open("a") as log:
            async with (
                stdio_client(server, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                found = await session.call_tool("search", {"query": "deploy codename"})
                assert not found.is_error and found.structured_content is not None
                results: list[dict[str, object]] = found.structured_content["results"]
                return results

    results = asyncio.run(search())
    assert "cc:s9:tool:toolu_9" in {r["id"] for r in results}

"""The official MCP Inspector as a client: its command-line mode
(``@modelcontextprotocol/inspector``, pinned in tests/tools, installed there by ``npm ci``) drives
``disclosure serve --mcp`` over stdio.

It lists the tools with ``--strict`` (its tool-schema portability checks must find no error),
then walks the three steps, search -> timeline -> get_details, and the write tools, remember and
forget, each call a fresh server as an MCP client starts it. Every call starts the server and
loads its model (the default profile), so the test is slow (~2-3 minutes): .ci/run runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[4]
INSPECTOR = REPO / "tests" / "tools" / "node_modules" / ".bin" / "mcp-inspector"
CALL_SECONDS = 240
READ_ONLY = {"search", "timeline", "get_details", "disclose"}
FACT = "Billing moves to Postgres 16 on Tuesday; Ivan writes the migration."
NEXT = "The migration window is Tuesday 02:00-04:00 UTC."


@pytest.fixture(scope="module")
def inspect(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Runs the inspector's CLI against a fresh `disclosure serve --mcp` (one namespace, no
    local service) and returns its JSON answer."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the MCP Inspector runs on it)")
    if not INSPECTOR.exists():
        pytest.skip("the MCP Inspector is not installed: run `npm ci` in tests/tools")
    data = tmp_path_factory.mktemp("inspected")
    own_home = tmp_path_factory.mktemp("inspector-home")  # whatever the inspector writes
    server_env = {
        "TIERED_DISCLOSURE_NO_SERVICE": "1",
        "PYTHONPATH": str(REPO),
        "HOME": os.environ.get("HOME", str(own_home)),  # the server's model cache
    }
    server = [sys.executable, "-m", "disclosure", "serve", "--mcp", "--data-dir", str(data)]
    server += ["--user", "dana"]

    def run(*options: str, expect: int = 0) -> Any:
        settings = [f"{k}={v}" for k, v in server_env.items()]
        command = [str(INSPECTOR), "--cli", "--format", "json"]
        command += [arg for setting in settings for arg in ("-e", setting)]
        answer = subprocess.run(
            [*command, *options, *server],
            capture_output=True,
            text=True,
            timeout=CALL_SECONDS,
            env={**os.environ, "HOME": str(own_home)},
            check=False,
        )
        assert answer.returncode == expect, answer.stdout[-2000:] + answer.stderr[-2000:]
        return json.loads(answer.stdout)

    return run


def call(inspect: Any, tool: str, *, expect: int = 0, **arguments: Any) -> dict[str, Any]:
    """One tool call; ``expect``: the inspector's exit status (5: the tool answered an error)."""
    options = ["--method", "tools/call", "--tool-name", tool]
    answer = inspect(*options, "--tool-args-json", json.dumps(arguments), expect=expect)
    return dict(answer["result"])


def test_the_inspector_lists_and_runs_every_step(inspect: Any) -> None:
    listed = inspect("--method", "tools/list", "--strict")["result"]["tools"]
    tools = {t["name"]: t for t in listed}
    assert set(tools) == READ_ONLY | {"remember", "forget"}
    for name, tool in tools.items():
        assert tool["description"] and tool["inputSchema"]["additionalProperties"] is False
        hints = tool["annotations"]
        assert hints["readOnlyHint"] is (name in READ_ONLY) and hints["openWorldHint"] is False
    assert tools["forget"]["annotations"]["destructiveHint"] is True
    assert tools["remember"]["annotations"]["destructiveHint"] is False
    assert tools["search"]["inputSchema"]["properties"]["limit"]["maximum"] == 100

    saved = call(inspect, "remember", content=FACT, session_id="ops")
    assert saved["isError"] is False and saved["structuredContent"]["stored"] is True
    citation = saved["structuredContent"]["citation"]
    call(inspect, "remember", content=NEXT, session_id="ops")

    found = call(inspect, "search", query="Which database will billing use?")["structuredContent"]
    assert found["results"][0]["citation"] == citation and citation in found["text"]
    around = call(inspect, "timeline", refs=[citation])["content"][0]["text"]
    assert "Postgres 16" in around and "02:00-04:00" in around  # its neighbour in the session
    details = call(inspect, "get_details", refs=[citation])["content"][0]["text"]
    assert FACT in details and citation in details

    preview = call(inspect, "forget", refs=[citation])["structuredContent"]
    assert preview["forgotten"] is False and preview["citations"] == [citation]
    gone = call(inspect, "forget", refs=[citation], confirm=True)["structuredContent"]
    assert gone["forgotten"] is True and gone["count"] == 1
    after = call(inspect, "search", query="Which database will billing use?")["structuredContent"]
    assert citation not in {r["citation"] for r in after["results"]}

    wrong = call(inspect, "search", query="billing", limt=3, expect=5)
    assert wrong["isError"] is True and "limt" in wrong["content"][0]["text"]

"""``disclosure serve`` for real: uvicorn on a free loopback port, and MCP over stdio."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.disclosure.faces.api.conftest import API_KEY, sample_json

REPO = Path(__file__).resolve().parents[4]
STARTUP_SECONDS = 90


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`disclosure serve` in a subprocess, with an API key from the environment."""
    port = free_port()
    env = {**os.environ, "TIERED_DISCLOSURE_API_KEYS": API_KEY, "PYTHONPATH": str(REPO)}
    command = ["serve", "--port", str(port), "--data-dir", str(tmp_path / "home")]
    process = subprocess.Popen(
        [sys.executable, "-m", "disclosure", *command, "--log-level", "warning"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited early: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("the server did not answer /health in time")
    yield base, process
    if process.poll() is None:
        process.kill()
        process.wait(timeout=30)
    process.stderr.close()  # type: ignore[union-attr]


def test_a_real_server_serves_authenticates_and_stops(
    server: tuple[str, subprocess.Popen[str]],
) -> None:
    """Over real HTTP: 401 without the key; ingest, disclose, feedback with it; SIGINT stops it."""
    base, process = server
    assert httpx.get(f"{base}/v1/stats", timeout=10).status_code == 401
    with httpx.Client(base_url=base, headers={"X-API-Key": API_KEY}, timeout=60) as client:
        ingested = client.post(
            "/v1/ingest", params={"user": "dana"}, json={"memories": sample_json()}
        )
        assert ingested.status_code == 200 and ingested.json()["added"] == 38
        disclosed = client.post(
            "/v1/disclose", params={"user": "dana"}, json={"query": "Which database for billing?"}
        ).json()
        assert "Postgres" in disclosed["text"]
        citation = disclosed["items"][0]["citation"]
        feedback = client.post(
            "/v1/feedback",
            params={"user": "dana"},
            json={"disclosure_id": disclosed["disclosure_id"], "reply": f"Postgres [{citation}]"},
        )
        assert feedback.status_code == 200 and feedback.json()["cited"]
        other = client.post("/v1/disclose", params={"user": "eve"}, json={"query": "billing"})
        assert other.status_code == 200 and "Postgres" not in other.text
        assert other.json()["items"] == [] and other.json()["warnings"]  # eve has nothing stored
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0
    stderr = process.stderr.read()  # type: ignore[union-attr]
    assert "1 API keys" in stderr and API_KEY not in stderr


def test_the_mcp_server_over_stdio(tmp_path: Path) -> None:
    """`disclosure serve --mcp --user dana` answers an MCP client over stdio."""
    pytest.importorskip("mcp.server.mcpserver")
    from mcp import Client, StdioServerParameters

    from disclosure import ControllerPool
    from disclosure.sample import load_sample_conversation

    home = tmp_path / "home"
    with ControllerPool("default", root=home) as pool, pool.lease(pool.namespace(user="dana")) as c:
        c.ingest(load_sample_conversation())
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "disclosure", "serve", "--mcp", "--data-dir", str(home), "--user", "dana"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )

    async def session() -> tuple[dict[str, object], Any, Any, Any]:
        async with Client(parameters, read_timeout_seconds=STARTUP_SECONDS) as client:
            result = await client.call_tool("search", {"query": "postgres", "limit": 2})
            assert result.structured_content is not None
            saved = await client.call_tool("remember", {"content": "Dana's badge is 7731."})
            citation = (saved.structured_content or {})["citation"]
            erased = await client.call_tool("forget", {"refs": [citation], "confirm": True})
            bad = await client.call_tool("disclose", {"query": "x", "level": "all of it"})
            return result.structured_content, saved, erased, bad

    from disclosure.service import stop_service

    try:
        found, saved, erased, bad = asyncio.run(session())
    finally:
        stop_service(home)  # the MCP server started the root's local service
    assert len(found["results"]) == 2  # type: ignore[arg-type]
    assert "Postgres" in str(found["text"])
    assert not saved.is_error and saved.structured_content["stored"] is True
    assert erased.structured_content["forgotten"] is True
    assert bad.is_error and "level" in bad.content[0].text

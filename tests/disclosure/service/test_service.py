"""The local service that owns a root: started, found, shared and stopped by real processes.

Every test runs the service as its own process on loopback (``disclosure service start``), and
talks to it from command-line subprocesses, the Python client and MCP stdio clients.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disclosure.service import (
    LOCK_FILE,
    SERVICE_FILE,
    ServiceInfo,
    find_service,
    stop_service,
    write_info,
)
from disclosure.service.client import AsyncMemoryClient, MemoryClient
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import iter_namespaces
from tiers.errors import (
    MemoryNotFoundError,
    NamespaceError,
    ServiceError,
    StorageError,
)

pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "disclosure" / "data" / "sample_conversation.jsonl"
NOW = ("--now", "2026-04-10T09:00:00+00:00")  # the morning after the sample conversation
LEAN = "extends: default\nname: lean-service\ntiers:\n  warm:\n    embedder: none\n"


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    return {**clean, "PYTHONPATH": str(REPO)}


def cli(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "disclosure", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env(),
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def lean(tmp_path: Path) -> Path:
    path = tmp_path / "lean.yaml"
    path.write_text(LEAN, encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "root"
    yield home
    stop_service(home, timeout=20)  # whatever a test started


def start(root: Path, profile: Path) -> ServiceInfo:
    done = cli("service", "start", "--root", str(root), "--profile", str(profile))
    assert done.returncode == 0, done.stderr
    info = find_service(root)
    assert info is not None
    return info


@pytest.fixture
def service(root: Path, lean: Path) -> ServiceInfo:
    return start(root, lean)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, ServiceInfo]]:
    """One service for the tests that only use it (each in a namespace of its own)."""
    base = tmp_path_factory.mktemp("shared")
    lean = base / "lean.yaml"
    lean.write_text(LEAN, encoding="utf-8")
    root = base / "root"
    info = start(root, lean)
    yield root, lean, info
    stop_service(root, timeout=20)


def ended(pid: int, wait: float = 10.0) -> bool:
    """Whether the process has exited (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def write_memories(path: Path, prefix: str, count: int) -> list[str]:
    ids = [f"{prefix}-{i}" for i in range(count)]
    lines = [
        json.dumps({"id": i, "content": f"{prefix} note {n}: the {prefix} team chose plan {n}."})
        for n, i in enumerate(ids)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def test_start_status_stop(root: Path, service: ServiceInfo) -> None:
    """start writes an owner-only file with address, pid and token; a second start finds it;
    stop ends the process and removes the file."""
    path = root / SERVICE_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert service.url.startswith("http://127.0.0.1:") and len(service.token) >= 32
    again = cli("service", "start", "--root", str(root))
    assert again.returncode == 0 and "already running" in again.stdout
    status = cli("service", "status", "--root", str(root), "--json")
    data = json.loads(status.stdout)
    assert status.returncode == 0 and data["pid"] == service.pid and "token" not in data
    assert data["health"]["status"] == "ok" and data["profile"] == "lean-service"
    stopped = cli("service", "stop", "--root", str(root))
    assert stopped.returncode == 0 and f"pid {service.pid}" in stopped.stdout
    assert not path.exists()
    assert ended(service.pid)
    assert cli("service", "status", "--root", str(root)).returncode == 3


def test_the_token_is_required(shared: tuple[Path, Path, ServiceInfo]) -> None:
    """The service answers nobody without its token: a wrong one is a ServiceError."""
    _, _, service = shared
    with (
        MemoryClient(service.url, api_key="x" * 40) as client,
        pytest.raises(ServiceError) as caught,
    ):
        client.stats()
    assert caught.value.status == 401


def test_a_stale_service_file_is_replaced_never_trusted(root: Path, lean: Path) -> None:
    """A file left by a dead process: commands open the store themselves, and start replaces
    it with a live service's."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    root.mkdir(parents=True)
    (root / LOCK_FILE).touch()
    stale = ServiceInfo("http://127.0.0.1:9", dead.pid, "t" * 43, str(root), "x", "then", "0")
    write_info(root, stale)
    done = cli("ingest", str(SAMPLE), "--root", str(root), "--profile", str(lean), "--user", "u")
    assert done.returncode == 0, done.stderr
    assert "38 added" in done.stdout
    assert not (root / SERVICE_FILE).exists()  # found stale and removed
    write_info(root, stale)
    started = cli("service", "start", "--root", str(root), "--profile", str(lean))
    assert started.returncode == 0, started.stderr
    info = find_service(root)
    assert info is not None and info.pid not in (dead.pid, 0) and info.token != stale.token
    query = cli(
        "query", "Why did we move billing off SQLite?", *NOW, "--root", str(root), "--user", "u"
    )
    assert query.returncode == 0 and "Postgres" in query.stdout


def test_the_store_commands_go_through_the_running_service(
    shared: tuple[Path, Path, ServiceInfo],
) -> None:
    """While the service holds the stores, ingest, query, show, stats and forget work from
    other processes (no "in use" error) and see each other's writes."""
    root, _, service = shared
    scope = ["--root", str(root), "--user", "dana"]
    done = cli("ingest", str(SAMPLE), *scope)
    assert done.returncode == 0, done.stderr
    assert "38 added" in done.stdout
    assert "new namespace user=dana" in done.stderr  # said once, when the write created it
    again = cli("ingest", str(SAMPLE), *scope)
    assert again.returncode == 0 and "new namespace" not in again.stderr
    query = cli("query", "Why did we move billing off SQLite?", "--json", *NOW, *scope)
    assert query.returncode == 0, query.stderr
    result = json.loads(query.stdout)
    assert "Postgres" in result["text"] and result["namespace"] == {"user": "dana"}
    citation = result["items"][0]["citation"]
    shown = cli("show", citation, *scope)
    assert shown.returncode == 0 and f"[{citation}]" in shown.stdout
    stats = json.loads(cli("stats", "--json", *scope).stdout)
    assert stats["store"]["cold"] == 38 and stats["service"] == service.url
    assert set(stats["usage"]) == {"minimal", "standard", "detailed", "comprehensive"}
    forgot = cli("forget", "--id", result["items"][0]["id"], "--yes", *scope)
    assert forgot.returncode == 0 and "forgot 1 memories" in forgot.stdout
    assert json.loads(cli("stats", "--json", *scope).stdout)["store"]["cold"] == 37
    second = result["items"][1]["citation"]
    by_citation = cli("forget", "--id", second, "--yes", *scope)  # the service resolves it
    assert by_citation.returncode == 0 and "forgot 1 memories" in by_citation.stdout
    assert json.loads(cli("stats", "--json", *scope).stdout)["store"]["cold"] == 36
    missing = cli("show", citation, *scope)
    assert missing.returncode == 1 and "no memory" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_a_served_query_loads_no_model_no_numpy_and_no_async_http(
    shared: tuple[Path, Path, ServiceInfo],
) -> None:
    """What a query served by the running service imports: not the analyzers, the embedder,
    Chroma or numpy (the store's modules), nor trio, anyio and click (httpx and httpcore
    probe for them); and the modules held back load normally afterwards in that process."""
    root, _, _ = shared
    scope = ["--root", str(root), "--user", "probe"]
    assert cli("ingest", str(SAMPLE), *scope).returncode == 0
    argv = ["disclosure", "query", "Why did we move billing off SQLite?", *NOW, *scope]
    probe = (
        "import json, runpy, sys\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('disclosure', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "loaded = sorted(sys.modules)\n"
        "import anyio\n"
        "print(json.dumps({'loaded': loaded, 'anyio': anyio.__name__}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env(), cwd=REPO,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Postgres" in done.stdout  # the answer came, through the service
    report = json.loads(done.stdout.splitlines()[-1])
    tops = {m.split(".")[0] for m in report["loaded"]}
    assert "httpx" in tops and "disclosure" in tops
    unwanted = {"spacy", "onnxruntime", "torch", "chromadb", "analyzers", "numpy", "trio", "anyio",
                "click", "rich"}  # fmt: skip
    assert tops & unwanted == set()
    assert report["anyio"] == "anyio"


def test_the_client_has_the_controllers_surface(shared: tuple[Path, Path, ServiceInfo]) -> None:
    """ingest, disclose, feedback, show, forget and stats, with the library's types and errors."""
    root, _, service = shared
    with MemoryClient.for_root(root, namespace={"user": "erin"}) as memory:
        report = memory.ingest(
            [
                {"id": f"m{i}", "content": f"Erin keeps the spare key number {i} in the shed."}
                for i in range(3)
            ]
        )
        assert (report.added, report.ids) == (3, ("m0", "m1", "m2"))
        result = memory.disclose("Where does Erin keep the spare key?", level="standard")
        assert result.level.value == "standard" and "shed" in result.text
        assert result.analysis.query == "Where does Erin keep the spare key?"
        cited = result.items[0].citation
        feedback = memory.feedback(result, f"In the shed [{cited}].")
        assert result.items[0].id in feedback.used
        assert "spare key number" in memory.show(result.items[0].id)
        with pytest.raises(MemoryNotFoundError):
            memory.show("mem:zzzzzz")
        gone = memory.forget(ids=["m0"])
        assert gone.ids == ("m0",)
        assert memory.stats()["store"]["cold"] == 2
    with (
        MemoryClient(service.url, api_key=service.token, namespace={"user": "a/b"}) as bad,
        pytest.raises(NamespaceError),
    ):
        bad.stats()

    async def run_async() -> tuple[str, int]:
        async with AsyncMemoryClient(
            service.url, api_key=service.token, namespace={"user": "erin"}
        ) as memory:
            result = await memory.disclose("Where does Erin keep the spare key?")
            return result.text, (await memory.stats())["store"]["cold"]

    text, cold = asyncio.run(run_async())
    assert "shed" in text and cold == 2
    with MemoryClient.for_root(root, namespace={"user": "someone-else"}) as other:
        # namespaces stay apart: erin's memories are not someone else's, and a read of a
        # namespace nothing is stored in answers empty with a warning, creating nothing
        stats = other.stats()
        assert stats["store"]["cold"] == 0 and "nothing is stored" in stats["warnings"][0]
        empty = other.disclose("Where does Erin keep the spare key?")
        assert (empty.text, empty.items, empty.tokens_used) == ("", (), 0)
        assert empty.analysis.query.startswith("Where") and empty.level == empty.analysis.level
        assert empty.warnings and "nothing is stored" in empty.warnings[0]
        assert other.search("spare key") == []
        with pytest.raises(MemoryNotFoundError, match="nothing is stored"):
            other.show("mem:zzzzzz")
        assert other.forget(ids=["m0"]).count == 0
        assert other.stats().get("warnings")  # still nothing: no read created it
    assert all(parts.get("user") != "someone-else" for parts, _ in iter_namespaces(root))


def test_a_pool_on_a_served_root_hands_out_the_service(
    shared: tuple[Path, Path, ServiceInfo],
) -> None:
    """ControllerPool.memory gives the service's client; a direct lease says who owns it."""
    root, lean, _ = shared
    with MemoryClient.for_root(root, namespace={"user": "fay"}) as client:
        client.ingest([{"id": "f1", "content": "Fay parks in bay 12."}])
    with ControllerPool(lean, root=root) as pool:
        erin = pool.namespace(user="fay")
        with pool.memory(erin) as memory:
            assert isinstance(memory, MemoryClient)
            assert memory.stats()["store"]["cold"] == 1
        with pytest.raises(StorageError, match="local service"):
            pool.acquire(erin)


def test_export_and_import_refuse_a_root_whose_service_runs(
    shared: tuple[Path, Path, ServiceInfo], tmp_path: Path
) -> None:
    """Both open the store themselves: behind the service's back an import would be invisible
    to its caches. One line says to stop the service or go through it; nothing is written."""
    root, lean, service = shared
    scope = ["--root", str(root), "--user", "gil", "--profile", str(lean)]
    with MemoryClient.for_root(root, namespace={"user": "gil"}) as client:
        client.ingest([{"id": "g1", "content": "Gil keeps the spare keys in the blue tin."}])
    exported = tmp_path / "gil.jsonl"
    done = cli("export", *scope, "-o", str(exported))
    assert done.returncode == 1 and not exported.exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert f"pid {service.pid}" in lines[0] and "disclosure service stop" in lines[0]
    assert "go through the service" in lines[0]
    with (
        ControllerPool(lean, root=tmp_path / "elsewhere") as other,  # a valid export file
        other.lease(other.namespace(user="gil")) as controller,
    ):
        controller.ingest([{"id": "g2", "content": "Gil moved the tin to the shelf."}])
    assert cli("export", "--root", str(tmp_path / "elsewhere"), "--user", "gil",
               "--profile", str(lean), "-o", str(exported)).returncode == 0  # fmt: skip
    for user in ("gil", "hal"):  # one the service has open, one it has not
        target = ["--root", str(root), "--user", user, "--profile", str(lean)]
        refused = cli("import", str(exported), *target, "--merge")
        assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
        assert "disclosure service stop" in refused.stderr and "Traceback" not in refused.stderr
    with MemoryClient.for_root(root, namespace={"user": "gil"}) as client:
        assert client.stats()["store"]["cold"] == 1  # nothing was imported behind its back
    assert all(parts.get("user") != "hal" for parts, _ in iter_namespaces(root))


def test_an_unreachable_service_is_a_service_error() -> None:
    """Connection errors are retried, then reported as ServiceError (never httpx's)."""
    with (
        MemoryClient("http://127.0.0.1:9", retries=1, backoff=0.01) as client,
        pytest.raises(ServiceError, match="unreachable"),
    ):
        client.stats()


async def _mcp_search(root: Path, profile: Path, query: str, log: Path) -> list[dict[str, Any]]:
    """The results of the MCP tool ``search`` (an empty list when the tool reports an error,
    which it does for a namespace nothing was written to)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "disclosure",
            "serve",
            "--mcp",
            "--root",
            str(root),
            "--user",
            "dana",
            "--profile",
            str(profile),
        ],
        env=env(),
        cwd=str(REPO),
    )
    with log.open("a") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found = await session.call_tool("search", {"query": query, "limit": 50})
            if found.is_error:
                assert "nothing is stored" in str(found.content), found.content
                return []
            assert found.structured_content is not None
            results: list[dict[str, Any]] = found.structured_content["results"]
            return results


def test_two_mcp_servers_a_cli_ingest_and_a_client_share_one_memory(
    root: Path, lean: Path, tmp_path: Path
) -> None:
    """No service runs: the first MCP server starts it; then a CLI ingest, a client ingest and
    two MCP servers for the same user run at once, and all see every write."""
    log = tmp_path / "mcp.log"
    first = asyncio.run(_mcp_search(root, lean, "plan", log))
    assert first == []
    info = find_service(root)
    assert info is not None, log.read_text()  # the MCP server started the service
    cli_ids = write_memories(tmp_path / "cli.jsonl", "cli", 40)
    with MemoryClient.for_root(root, namespace={"user": "dana"}) as client:
        ingest = subprocess.Popen(
            [sys.executable, "-m", "disclosure", "ingest", str(tmp_path / "cli.jsonl"),
             "--root", str(root), "--user", "dana"],
            env=env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        client.ingest(
            [
                {"id": f"py-{i}", "content": f"py note {i}: the py team chose plan {i}."}
                for i in range(40)
            ]
        )

        async def both() -> list[list[dict[str, Any]]]:
            return list(
                await asyncio.gather(
                    _mcp_search(root, lean, "team chose plan", log),
                    _mcp_search(root, lean, "team chose plan", log),
                )
            )

        _out, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 0, err
        found = asyncio.run(both())
        stats = client.stats()
    assert stats["store"]["cold"] == 80
    for results in found:
        ids = {r["id"] for r in results}
        assert ids & set(cli_ids) and ids & {f"py-{i}" for i in range(40)}


def test_the_mem0_style_calls_and_the_mcp_write_tools_over_the_client(
    shared: tuple[Path, Path, ServiceInfo],
) -> None:
    """add and get of /v1/memories from the client, and an MCP server over a client can
    remember, preview a forget, forget, and name an unknown reference as a tool error."""
    pytest.importorskip("mcp.server.mcpserver")
    from mcp import Client

    from disclosure.faces.mcp.server import create_mcp_server

    _, _, service = shared
    with MemoryClient(service.url, api_key=service.token, namespace={"user": "mona"}) as memory:
        added = memory.add("Mona's locker code is 4412.", session_id="notes")
        (record,) = added.results
        assert record.event == "ADD" and record.citation.startswith("mem:")
        assert memory.get(record.citation).content == "Mona's locker code is 4412."
        with pytest.raises(MemoryNotFoundError):
            memory.get("mem:zzzzzz")
        server = create_mcp_server(memory)

        async def run() -> list[Any]:
            async with Client(server) as client:
                saved = await client.call_tool("remember", {"content": "Mona parks on level 3."})
                cite = (saved.structured_content or {})["citation"]
                return [
                    saved,
                    await client.call_tool("forget", {"refs": [cite]}),
                    await client.call_tool("forget", {"refs": [cite], "confirm": True}),
                    await client.call_tool("forget", {"refs": [cite], "confirm": True}),
                ]

        saved, preview, erased, unknown = asyncio.run(run())
        assert not saved.is_error and saved.structured_content["stored"] is True
        citation = saved.structured_content["citation"]
        assert preview.structured_content["forgotten"] is False
        assert "level 3" in preview.structured_content["text"]
        assert erased.structured_content == {
            "forgotten": True,
            "count": 1,
            "citations": [citation],
            "text": "Forgot 1 memories for good.",
        }
        assert unknown.is_error and citation in unknown.content[0].text
        assert memory.stats()["store"]["cold"] == 1  # the locker code stays

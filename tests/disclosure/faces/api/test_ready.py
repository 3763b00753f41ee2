"""``GET /ready``: 503 until the models are loaded and the backends answer, 200 then, 503 again
when a backend goes away; ``/health`` answers 200 throughout. The default suite checks the
route with the lean profile and no server (a step of its own holds the loading back); the slow
tests start real PostgreSQL and Chroma servers late and stop them early on purpose."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")

from fastapi.testclient import TestClient

from disclosure.core.profiles import Profile
from disclosure.faces.api import create_app
from disclosure.service.readiness import RECHECK_SECONDS, RETRY_SECONDS
from disclosure.service.vector_server import with_chroma_url
from tests.disclosure.faces.api.conftest import BASE
from tests.pg_server import PostgresServer
from tiers.chroma_server import ChromaServer
from tiers.config import DATABASE_URL_VARIABLE

WAIT_SECONDS = 120  # loading the models on a busy machine, and the pool's connect timeout


def _until(client: TestClient, wanted: int | Callable[[httpx.Response], bool]) -> httpx.Response:
    """``/ready`` once it answers ``wanted`` (a status, or a test of the answer), else after
    :data:`WAIT_SECONDS`; ``/health`` must answer 200 at every poll."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        assert client.get("/health").status_code == 200
        reply = client.get("/ready")
        done = reply.status_code == wanted if isinstance(wanted, int) else wanted(reply)
        if done or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


def _loaded(*names: str) -> Callable[[httpx.Response], bool]:
    return lambda reply: all(reply.json()["checks"][name] == "ok" for name in names)


def test_ready_answers_503_while_a_step_loads_then_200(
    lean_profile: Profile, tmp_path: Path
) -> None:
    """A step that has not finished keeps ``/ready`` at 503 ``starting``, naming it, while
    ``/health`` answers 200; once it finishes, 200 ``ready`` with every check ok."""
    app = create_app(lean_profile, root=tmp_path / "root")
    gate = threading.Event()
    app.state.readiness.add_step("gate", lambda: gate.wait(WAIT_SECONDS))
    with TestClient(app, base_url=BASE) as client:
        loaded = _until(client, _loaded("analyzer", "tokens", "pipeline", "render", "routes"))
        assert loaded.status_code == 503
        body = loaded.json()
        assert body["status"] == "starting" and body["reason"] == "gate: loading"
        assert body["checks"]["gate"] == "loading" and body["profile"] == "lean"
        assert "postgresql" not in body["checks"] and "chroma" not in body["checks"]
        gate.set()
        ready = _until(client, 200)
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "ready" and ready.json()["reason"] is None
        assert set(ready.json()["checks"].values()) == {"ok"}
        assert client.get("/health").status_code == 200


def test_a_step_that_fails_keeps_the_process_unready_and_is_retried(
    lean_profile: Profile, tmp_path: Path
) -> None:
    """A step that raises is reported as failed (its exception's type, never its message) and
    tried again: ready once it succeeds."""
    app = create_app(lean_profile, root=tmp_path / "root")
    tries: list[float] = []
    mended = threading.Event()

    def flaky() -> None:
        tries.append(time.monotonic())
        if not mended.is_set():
            raise ConnectionError("backend at 10.0.0.7:5432 refused")

    app.state.readiness.add_step("flaky", flaky)
    with TestClient(app, base_url=BASE) as client:
        failed = _until(client, lambda reply: reply.json()["checks"]["flaky"] != "loading")
        assert failed.status_code == 503 and failed.json()["status"] == "starting"
        assert failed.json()["checks"]["flaky"] == "failed (ConnectionError); retrying"
        assert failed.json()["reason"] == "flaky: failed (ConnectionError); retrying"
        assert "10.0.0.7" not in failed.text
        mended.set()
        ready = _until(client, 200)
        assert ready.status_code == 200, ready.text
    gaps = [later - earlier for earlier, later in itertools.pairwise(tries)]
    assert gaps and min(gaps) >= 0.9 * RETRY_SECONDS  # retried after a pause, not in a loop


@pytest.fixture
def late_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL whose address is known but which is not started yet."""
    server = PostgresServer()
    try:
        yield server
    finally:
        if (server.data / "PG_VERSION").exists():
            server.stop()


@pytest.mark.slow  # a PostgreSQL cluster of its own (initdb), started late: ~30 s
def test_ready_waits_for_postgresql_and_notices_when_it_goes(
    late_postgres: PostgresServer,
    lean_profile: Profile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DATABASE_URL_VARIABLE, late_postgres.url)
    with TestClient(create_app(lean_profile, root=tmp_path / "root"), base_url=BASE) as client:
        early = client.get("/ready")
        assert early.status_code == 503
        body = early.json()
        assert body["status"] == "starting" and body["profile"] == "lean"
        assert set(body["checks"]) == {
            "analyzer",
            "tokens",
            "pipeline",
            "render",
            "routes",
            "postgresql",
        }
        assert body["checks"]["postgresql"] != "ok" and body["reason"]
        assert "127.0.0.1" not in early.text  # reasons name the check, never the address
        loaded = _until(client, _loaded("analyzer", "tokens", "pipeline", "render", "routes"))
        assert loaded.status_code == 503  # the models are loaded; the database does not answer
        assert loaded.json()["reason"].startswith("postgresql: ")
        late_postgres.start()
        ready = _until(client, 200)
        assert ready.status_code == 200, ready.text
        assert ready.json() == {**ready.json(), "status": "ready", "reason": None}
        assert set(ready.json()["checks"].values()) == {"ok"}
        late_postgres.stop()
        time.sleep(RECHECK_SECONDS + 0.1)
        gone = _until(client, 503)
        assert gone.status_code == 503
        assert gone.json()["status"] == "unavailable"
        assert gone.json()["reason"] == "postgresql: unreachable"


@pytest.mark.slow  # the ONNX embedder and a Chroma server of its own, started late
def test_ready_needs_the_embedder_and_the_chroma_server(
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    default_with: Callable[[str], Profile],
) -> None:
    chroma = ChromaServer(tmp_path / "chroma")  # its port is chosen; it runs from the middle on
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    profile = default_with(chroma.url)
    try:
        with TestClient(create_app(profile, root=tmp_path / "root"), base_url=BASE) as client:
            early = client.get("/ready")
            assert early.status_code == 503
            assert {"embedder", "chroma", "postgresql"} <= set(early.json()["checks"])
            waiting = _until(client, _loaded("embedder", "pipeline", "postgresql"))
            assert waiting.status_code == 503 and waiting.json()["checks"]["chroma"] != "ok"
            chroma.start()
            ready = _until(client, 200)
            assert ready.status_code == 200, ready.text
            memory = {"id": "r1", "content": "The rowing club meets on Thursdays at seven."}
            reply = client.post("/v1/ingest?user=ray", json={"memories": [memory]})
            assert reply.status_code == 200
            chroma.stop()
            time.sleep(RECHECK_SECONDS + 0.1)
            gone = _until(client, 503)
            assert gone.json()["reason"] == "chroma: unreachable"
    finally:
        chroma.stop()


@pytest.fixture
def default_with() -> Callable[[str], Profile]:
    from disclosure.core.profiles import load_profile

    return lambda url: with_chroma_url(load_profile("default"), url)

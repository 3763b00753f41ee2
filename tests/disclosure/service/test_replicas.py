"""Two controllers (two replicas' data directories) on one PostgreSQL archive: a write through
one is disclosed by the other on its next request, cached disclosures included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import Profile
from tests.disclosure.conftest import make_lean_profile
from tests.disclosure.faces.cli.test_cli_store import run
from tests.pg_server import free_port, unique_namespace
from tiers.config import DATABASE_URL_VARIABLE
from tiers.memory import Memory
from tiers.store import REPLICA_CHECK_SECONDS

REPO = Path(__file__).resolve().parents[3]


def test_a_write_on_one_replica_is_disclosed_by_the_other(
    pg_url: str, tmp_path: Path, lean_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    namespace = unique_namespace()  # the same directory name under two roots: one namespace
    with (
        DisclosureController(lean_profile, data_dir=tmp_path / "one" / namespace) as one,
        DisclosureController(lean_profile, data_dir=tmp_path / "two" / namespace) as two,
    ):
        query = "what did we decide about the kumquat import licence?"
        before = two.disclose(query)  # cached by replica two
        assert "kumquat" not in before.text.lower()
        one.ingest([Memory(id="k1", content="We decided the kumquat import licence goes to Ana.")])
        time.sleep(REPLICA_CHECK_SECONDS + 0.05)  # the longest another replica may look stale
        after = two.disclose(query)
        assert "k1" in {item.id for item in after.items}
        assert "Ana" in two.show("k1")
        one.forget(ids=["k1"])
        time.sleep(REPLICA_CHECK_SECONDS + 0.05)
        gone = two.disclose(query)
        assert "k1" not in {item.id for item in gone.items}
        assert "kumquat" not in gone.text.lower()


# -- two `disclosure serve` replicas on one PostgreSQL ---------------------------------------------


def _start_replica(root: Path, profile: Path, url: str) -> tuple[str, subprocess.Popen[str]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("TIERED_DISCLOSURE_API_KEYS", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "disclosure", "serve", "--port", str(port), "--data-dir",
         str(root), "--profile", str(profile), "--database-url", url, "--log-level", "warning"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    return f"http://127.0.0.1:{port}", process


def _wait_healthy(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"a replica exited early: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail("a replica did not answer /health in time")


Replica = tuple[str, "subprocess.Popen[str]"]


@contextmanager
def _two_replicas(tmp_path: Path, pg_url: str) -> Iterator[tuple[Replica, Replica]]:
    """Two `disclosure serve --database-url` processes on the lean profile, each with its own
    data directory, answering /health; killed (if still alive) when the block ends."""
    profile = tmp_path / "lean.yaml"
    profile.write_text(make_lean_profile().to_yaml(), encoding="utf-8")
    replicas = [_start_replica(tmp_path / name, profile, pg_url) for name in ("a", "b")]
    try:
        for base, process in replicas:
            _wait_healthy(base, process)
        yield replicas[0], replicas[1]
    finally:
        for _, process in replicas:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
            process.stderr.close()  # type: ignore[union-attr]


def _turns(user: str, batch: int, size: int = 20) -> list[dict[str, str]]:
    return [
        {
            "id": f"{user}-{batch}-{i}",
            "content": f"{user} note {batch}.{i}: the {user}zeta{batch} ledger moved to bucket {i}",
            "session_id": f"{user}-s{batch}",
        }
        for i in range(size)
    ]


def test_two_replicas_serve_every_namespace_and_survive_a_kill(pg_url: str, tmp_path: Path) -> None:
    """Two `disclosure serve --database-url` processes, each with its own data directory:
    concurrent ingest and disclose for three users through both; one is SIGKILLed in the middle
    of a bulk ingest; every batch it acknowledged is then disclosed by the other, and no user's
    words reach another user's context."""
    with _two_replicas(tmp_path, pg_url) as ((a, proc_a), (b, _)):
        users = ["ana", "ben", "cai"]
        failures: list[str] = []

        def work(user: str) -> None:
            with httpx.Client(timeout=60) as client:
                for batch in range(3):
                    base = (a, b)[batch % 2]  # write through one replica, read through the other
                    reply = client.post(
                        f"{base}/v1/ingest", params={"user": user},
                        json={"memories": _turns(user, batch)},
                    )  # fmt: skip
                    if reply.status_code != 200:
                        failures.append(f"{user} ingest {batch}: {reply.text}")
                    time.sleep(REPLICA_CHECK_SECONDS + 0.05)
                    other = (b, a)[batch % 2]
                    seen = client.post(
                        f"{other}/v1/disclose", params={"user": user},
                        json={"query": f"where did the {user}zeta{batch} ledger move?"},
                    ).json()  # fmt: skip
                    if f"{user}zeta{batch}" not in seen.get("text", ""):
                        failures.append(f"{user} batch {batch} not disclosed by the other replica")
                    if any(f"{u}zeta" in seen.get("text", "") for u in users if u != user):
                        failures.append(f"{user}'s context holds another user's memories")

        threads = [threading.Thread(target=work, args=(u,)) for u in users]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []

        acknowledged: list[int] = []

        def bulk() -> None:
            with httpx.Client(timeout=60) as client:
                for batch in range(10, 200):
                    try:
                        reply = client.post(
                            f"{a}/v1/ingest", params={"user": "dee"},
                            json={"memories": _turns("dee", batch, 25)},
                        )  # fmt: skip
                    except httpx.TransportError:
                        return  # the replica died mid-request: that batch was not acknowledged
                    if reply.status_code == 200:
                        acknowledged.append(batch)

        writer = threading.Thread(target=bulk)
        writer.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc_a.send_signal(signal.SIGKILL)
        writer.join(timeout=60)
        assert proc_a.wait(timeout=30) == -signal.SIGKILL
        assert len(acknowledged) >= 4
        with httpx.Client(base_url=b, timeout=60) as client:
            stats = client.get("/v1/stats", params={"user": "dee"}).json()
            assert stats["stats"]["store"]["cold"] >= 25 * len(acknowledged)
            for batch in (acknowledged[0], acknowledged[-1]):
                found = client.get(f"/v1/memories/dee-{batch}-7", params={"user": "dee"})
                assert found.status_code == 200, found.text
                seen = client.post(
                    "/v1/disclose", params={"user": "dee"},
                    json={"query": f"where did the deezeta{batch} ledger move?"},
                ).json()  # fmt: skip
                assert f"deezeta{batch}" in seen["text"]


def test_citations_and_summaries_recorded_through_one_served_replica_are_read_through_another(
    pg_url: str, tmp_path: Path
) -> None:
    """Two `disclosure serve --database-url` processes: a reply's citations fed back and a
    consolidation run through one are listed by the other's /v1/citations and /v1/summaries,
    and a forget through the other removes them for both."""
    with _two_replicas(tmp_path, pg_url) as ((a, _), (b, _)):
        user = {"user": "ivy"}
        with httpx.Client(timeout=60) as client:
            ingested = client.post(
                f"{a}/v1/ingest", params=user, json={"memories": _turns("ivy", 0, 6)}
            )
            assert ingested.status_code == 200
            query = {"query": "where did the ivyzeta0 ledger move?"}
            shown = client.post(f"{a}/v1/disclose", params=user, json=query).json()
            first = shown["items"][0]
            fed = client.post(f"{a}/v1/feedback", params=user, json={
                "disclosure_id": shown["disclosure_id"], "reply": f"See [{first['citation']}].",
            })  # fmt: skip
            assert fed.status_code == 200 and fed.json()["cited"] == [first["id"]]
            done = client.post(f"{a}/v1/consolidate", params=user, json={"all": True})
            assert done.status_code == 200 and done.json()["written"] > 0

            counted = client.post(f"{b}/v1/citations", params=user, json={"top": 5}).json()
            assert [c["memory_id"] for c in counted["citations"]] == [first["id"]]
            summaries = client.get(f"{b}/v1/summaries", params=user).json()["summaries"]
            assert summaries and any(first["id"] in s["sources"] for s in summaries)

            gone = client.request("DELETE", f"{b}/v1/memories/{first['id']}", params=user)
            assert gone.status_code == 200, gone.text
            counted = client.post(f"{a}/v1/citations", params=user, json={"top": 5}).json()
            assert counted["citations"] == []
            summaries = client.get(f"{a}/v1/summaries", params=user).json()["summaries"]
            assert summaries and not any(first["id"] in s["sources"] for s in summaries)


def test_forget_all_drops_the_namespace_from_the_database(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A replica serves a namespace another one created; `forget --all` removes the directory
    and the schema, so no replica finds it any more."""
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    monkeypatch.setenv("TIERED_DISCLOSURE_NO_SERVICE", "1")
    profile = tmp_path / "lean.yaml"
    profile.write_text(make_lean_profile().to_yaml(), encoding="utf-8")
    memories = tmp_path / "m.jsonl"
    memories.write_text('{"id": "q1", "content": "quince jam recipe from grandma"}\n')
    common = ["--profile", str(profile), "--user", "fay"]
    code, _, err = run(capsys, "ingest", str(memories), "--data-dir", str(tmp_path / "a"), *common)
    assert code == 0, err
    code, out, _ = run(capsys, "query", "quince jam", "--data-dir", str(tmp_path / "b"), *common)
    assert code == 0 and "grandma" in out  # replica b never wrote to it, and serves it
    code, out, _ = run(
        capsys, "forget", "--all", "--yes", "--data-dir", str(tmp_path / "a"), *common
    )
    assert code == 0 and "schema from the PostgreSQL archive" in out
    with psycopg.connect(pg_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'td\\_%'"
        ).fetchone()
    assert left == (0,)  # a replica without the directory finds nothing now

"""Replicas on one host, started with the same command line except the port (no data directory:
both take the default root), and the embedded mode's protection that must stay as it was.

With the archive in PostgreSQL and the vectors on a Chroma server a store keeps nothing on the
host and takes no lock, so both replicas serve every namespace at once; with single-writer
state in the root (a SQLite archive, an embedded Chroma) a second server is refused when it
starts, with one line, and a second embedded process still cannot open an open namespace."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from disclosure.core.controller import DisclosureController
from disclosure.storage.namespaces import HOME_VARIABLE
from disclosure.storage.root_lock import RootLock
from tests.disclosure.conftest import make_lean_profile
from tests.pg_server import free_port
from tiers.chroma_server import ChromaServer

REPO = Path(__file__).resolve().parents[3]
START_SECONDS = 300  # two replicas loading the models at once on a busy 2-core machine


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    env.update({"PYTHONPATH": str(REPO), HOME_VARIABLE: str(home)})
    return env


def _serve(home: Path, *options: str) -> tuple[str, subprocess.Popen[str]]:
    """``disclosure serve --port P OPTIONS...`` with ``home`` as the default root."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "disclosure", "serve", "--port", str(port), *options,
         "--log-level", "warning"],
        cwd=REPO, env=_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    return f"http://127.0.0.1:{port}", process


def _answers(base: str, process: subprocess.Popen[str], path: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"a server exited early: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}{path}", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    pytest.fail(f"a server did not answer {path} in time")


@contextmanager
def _stopped(*processes: subprocess.Popen[str]) -> Iterator[None]:
    try:
        yield
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
            process.stderr.close()  # type: ignore[union-attr]


def test_a_second_embedded_process_is_still_refused(tmp_path: Path) -> None:
    """A namespace open in one process (SQLite archive) cannot be opened by another: the CLI
    in a second process says so in one line and exits 1; nothing is written."""
    profile = tmp_path / "lean.yaml"
    profile.write_text(make_lean_profile().to_yaml(), encoding="utf-8")
    home = tmp_path / "home"
    memories = tmp_path / "m.jsonl"
    memories.write_text('{"id": "q2", "content": "the quince tree needs pruning"}\n')
    command = [sys.executable, "-m", "disclosure", "ingest", str(memories), "--profile",
               str(profile), "--user", "eve"]  # fmt: skip
    env = {**_env(home), "TIERED_DISCLOSURE_NO_SERVICE": "1"}
    first = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    directory = next((home / "namespaces").glob("default.eve-*"))
    with DisclosureController(make_lean_profile(), data_dir=directory) as held:
        again = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, check=False
        )
        assert again.returncode == 1
        assert "in use by another store" in again.stderr
        assert len(again.stderr.strip().splitlines()) == 1
        assert held.store.count() == 1


def test_a_second_server_of_an_embedded_root_is_refused_when_it_starts(tmp_path: Path) -> None:
    """Two `disclosure serve` on one root with a SQLite archive: the second exits at once with
    one line naming the first's pid, instead of answering 503 later; the first serves on."""
    profile = tmp_path / "lean.yaml"
    profile.write_text(make_lean_profile().to_yaml(), encoding="utf-8")
    home = tmp_path / "home"
    base, first = _serve(home, "--profile", str(profile))
    with _stopped(first):
        _answers(base, first, "/health")
        _, second = _serve(home, "--profile", str(profile))
        with _stopped(second):
            assert second.wait(timeout=120) == 1
            said = second.stderr.read().strip()  # type: ignore[union-attr]
        assert len(said.splitlines()) == 1, said
        assert f"already served by another process (pid {first.pid})" in said
        assert "a SQLite archive" in said and "--database-url and --chroma-url" in said
        reply = httpx.post(f"{base}/v1/ingest", params={"user": "ann"},
                           json={"memories": [{"id": "a1", "content": "apricot jam"}]})  # fmt: skip
        assert reply.status_code == 200


def test_a_server_keeping_vectors_in_the_root_is_refused_beside_another(
    pg_url: str, tmp_path: Path
) -> None:
    """PostgreSQL archive but embedded Chroma: the vectors are single-writer state in the root,
    so a server is refused while another holds the root (before loading any model)."""
    home = tmp_path / "home"
    lock = RootLock(home, "held by the test")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "disclosure", "serve", "--port", str(free_port()),
             "--database-url", pg_url],
            cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    finally:
        lock.release()
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"(pid {os.getpid()})" in done.stderr and "an embedded Chroma" in done.stderr


# -- two replicas with the archive and the vectors on servers --------------------------------------

KINDS = ("ingest", "disclose", "search", "disclose", "show", "stats", "disclose", "feedback")


def _request(
    client: httpx.Client,
    bases: list[str],
    user: str,
    kind: str,
    n: int,
    shown: dict[str, list[Any]],
) -> httpx.Response:
    """One request of ``kind`` for ``user`` through one of ``bases`` (a feedback goes to the
    replica that made the disclosure: each keeps its recent disclosures in memory)."""
    base, params = bases[n % 2], {"user": user}
    if kind == "ingest":
        turns = [{"id": f"{user}-{n}-{i}", "content": f"{user} moved crate {n}.{i} to dock {i}",
                  "session_id": f"{user}-s{n}"} for i in range(3)]  # fmt: skip
        return client.post(f"{base}/v1/ingest", params=params, json={"memories": turns})
    if kind == "search":
        return client.post(f"{base}/v1/search", params=params, json={"query": "which dock?"})
    if kind == "show":
        return client.get(f"{base}/v1/memories/{user}-seed", params=params)
    if kind == "stats":
        return client.get(f"{base}/v1/stats", params=params)
    if kind == "feedback" and shown.get(user):
        where, disclosure = shown[user].pop()
        body = {"disclosure_id": disclosure, "reply": "Crate went to dock 2."}
        return client.post(f"{where}/v1/feedback", params=params, json=body)
    reply = client.post(f"{base}/v1/disclose", params=params, json={"query": "where is crate 1?"})
    if reply.status_code == 200:
        shown.setdefault(user, []).append((base, reply.json()["disclosure_id"]))
    return reply


@pytest.mark.slow  # two replicas loading the ONNX model, then a mixed load: ~2 minutes
def test_two_replicas_on_one_host_answer_every_request(
    pg_url: str, chroma_server: ChromaServer, tmp_path: Path
) -> None:
    """Same command line but the port, no data directory: /health answers at once and /ready
    says 503 until the models and backends are loaded; then a mixed load over 8 namespaces
    through both gets no answer that is not 2xx, and the shared root holds nothing but the
    namespaces' markers."""
    home = tmp_path / "home"
    options = ("--database-url", pg_url, "--chroma-url", chroma_server.url)
    replicas = [_serve(home, *options) for _ in range(2)]
    with _stopped(*(process for _, process in replicas)):
        for base, process in replicas:
            _answers(base, process, "/health")
        early = [httpx.get(f"{base}/ready", timeout=5) for base, _ in replicas]
        assert 503 in [reply.status_code for reply in early]  # loading: not ready yet
        assert all(reply.json()["status"] in ("starting", "ready") for reply in early)
        for base, process in replicas:
            _answers(base, process, "/ready")
        bases = [base for base, _ in replicas]
        users = [f"crew{i}" for i in range(8)]
        for user in users:
            seed = {"id": f"{user}-seed", "content": f"{user} keeps crate 1 at dock 4"}
            reply = httpx.post(f"{bases[0]}/v1/ingest", params={"user": user},
                               json={"memories": [seed]}, timeout=120)  # fmt: skip
            assert reply.status_code == 200, reply.text
        failures: Counter[str] = Counter()
        lock = threading.Lock()

        def work(seed: int) -> None:
            rng = random.Random(seed)
            shown: dict[str, list[Any]] = {}
            with httpx.Client(timeout=300) as client:
                for n in range(40):
                    user, kind = rng.choice(users), KINDS[n % len(KINDS)]
                    reply = _request(client, bases, user, kind, seed * 1000 + n, shown)
                    if not 200 <= reply.status_code < 300:
                        with lock:
                            failures[f"{kind} {reply.status_code}: {reply.text[:200]}"] += 1

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert dict(failures) == {}
        kept = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
        assert kept and all(p.startswith("namespaces/") and p.endswith("/namespace.json")
                            for p in kept), kept  # fmt: skip
        assert len(kept) == len(users)

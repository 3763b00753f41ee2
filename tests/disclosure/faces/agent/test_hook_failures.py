"""A hook never breaks the agent: malformed input, a service that is down or stopped, a full
disk, a step that hangs: each ends in exit 0 with one line on stderr, nothing half-written, and
what was not stored is handed over later."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from disclosure.core.records import MemoryRecord
from disclosure.faces.agent.project import agent_home, namespace_key
from disclosure.service import ServiceInfo, find_service, stop_service, write_info
from disclosure.service.client import MemoryClient
from tests.disclosure.faces.agent.hookrun import (
    PATIENT,
    SCRIPT,
    Served,
    clean_env,
    serve,
    wait_for,
)
from tests.disclosure.faces.agent.test_hooks import read_payload
from tiers.errors import MemoryNotFoundError, ServiceError

pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

# a hook ends within a second; the bound here only tells "bounded" from "hung" on a busy machine
BOUNDED = 5.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("failures"))


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("event", "payload", "reason"),
    [
        ("prompt", "not json", "the hook input is not JSON"),
        ("prompt", "[1, 2]", "the hook input is not a JSON object"),
        ("prompt", '{"prompt": "hi"}', "has no usable session_id"),
        ("prompt", '{"session_id": "a\\nb", "prompt": "hi"}', "control characters"),
        ("prompt", '{"session_id": "s"}', "the hook input has no prompt"),
        ("tool-use", '{"session_id": "s"}', "the hook input has no tool_name"),
        ("launch", "{}", "unknown event 'launch'"),
    ],
)
def test_malformed_input_is_one_line_and_exit_0(
    tmp_path: Path, event: str, payload: str, reason: str
) -> None:
    """Nothing is contacted or started for input that cannot be used."""
    served = Served(tmp_path / "root", tmp_path / "none.yaml", None)  # type: ignore[arg-type]
    ran = served.hook(event, payload)
    assert ran.code == 0 and ran.out == ""
    assert reason in one_line(ran.err) and ran.err.startswith(f"disclosure hook {event}:")
    assert not (tmp_path / "root").exists()


def test_unknown_options_and_oversized_input_are_refused_quietly(tmp_path: Path) -> None:
    served = Served(tmp_path / "root", tmp_path / "none.yaml", None)  # type: ignore[arg-type]
    bad = subprocess.run([str(SCRIPT), "hook", "prompt", "--colour", "red"], input=b"{}",
                         capture_output=True, env=clean_env(), timeout=30, check=False)  # fmt: skip
    assert bad.returncode == 0 and "unknown option '--colour'" in one_line(bad.stderr.decode())
    huge = '{"session_id": "s", "prompt": "' + "x" * (33 * 2**20) + '"}'
    ran = served.hook("prompt", huge)
    assert ran.code == 0 and "over 32 MB" in one_line(ran.err)


def test_a_hook_that_hangs_is_ended_by_its_watchdog(tmp_path: Path) -> None:
    """An agent that never closes stdin: the watchdog ends the hook, exit 0, one line."""
    started = time.perf_counter()
    with subprocess.Popen([str(SCRIPT), "hook", "prompt", "--root", str(tmp_path)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=clean_env()) as process:  # fmt: skip
        code = process.wait(timeout=30)  # stdin stays open: the hook waits on it
        elapsed = time.perf_counter() - started
        out, err = process.communicate()
    assert code == 0 and out == b"" and elapsed < BOUNDED
    assert "out of time" in one_line(err.decode())


def test_a_service_that_is_down_is_started_and_gets_the_spool_once_up(tmp_path: Path) -> None:
    """A dead service's file is not trusted: the hook starts a service (first use) without
    waiting for it, keeps the observation in the spool, and a delivery hands it over."""
    profile = tmp_path / "lean.yaml"
    profile.write_text("extends: coding-agent\ntiers:\n  warm:\n    embedder: none\n")
    root = tmp_path / "root"
    root.mkdir()
    write_info(root, ServiceInfo(url="http://127.0.0.1:9", pid=999_999, token="t", root=str(root),
                                 profile="x", started="", version="0"))  # fmt: skip
    served = Served(root, profile, None)  # type: ignore[arg-type]
    try:
        ran = served.hook("tool-use", read_payload("d1", "toolu_d1"), namespace="user=down")
        assert ran.code == 0 and ran.out == "" and ran.seconds < BOUNDED
        line = one_line(ran.err)
        assert "started; not ready yet; 1 memories kept until it answers" in line
        spool = agent_home(root) / "spool" / namespace_key({"user": "down"})
        assert [json.loads(p.read_text())["id"] for p in spool.glob("*.json")] == [
            "cc:d1:tool:toolu_d1"
        ]
        info = wait_for(lambda: find_service(root), timeout=120)
        with MemoryClient(info.url, api_key=info.token, namespace={"user": "down"}) as memory:
            stored = wait_for(lambda: _get(memory, "cc:d1:tool:toolu_d1"), timeout=180)
        assert "BLUEHERON" in stored.content
        wait_for(lambda: not list(spool.glob("*.json")), timeout=30)
    finally:
        stop_service(root, timeout=20)


def _get(memory: MemoryClient, ref: str) -> MemoryRecord | None:
    try:
        return memory.get(ref)
    except (MemoryNotFoundError, ServiceError):
        return None


def test_no_service_wanted_means_nothing_is_started(tmp_path: Path) -> None:
    served = Served(tmp_path / "root", tmp_path / "none.yaml", None)  # type: ignore[arg-type]
    env = clean_env(TIERED_DISCLOSURE_NO_SERVICE="1")
    ran = served.hook("prompt", {"session_id": "s", "prompt": "hi"}, env=env)
    assert ran.code == 0 and "TIERED_DISCLOSURE_NO_SERVICE" in one_line(ran.err)
    assert not (tmp_path / "root" / "service.log").exists()


def test_a_stopped_service_costs_a_second_and_loses_nothing(served: Served) -> None:
    """SIGSTOP: the service takes connections but never answers. Each hook gives up within
    its deadline; the observation waits, whole, in the spool and is handed over once the
    service answers again."""
    served.warm("stopped")
    spool = agent_home(served.root) / "spool" / namespace_key({"user": "stopped"})
    default = clean_env()  # the default deadline
    os.kill(served.info.pid, signal.SIGSTOP)
    try:
        prompt = {"session_id": "s8", "prompt": "What is the deploy codename?"}
        ran = served.hook("prompt", prompt, namespace="user=stopped", env=default)
        assert ran.code == 0 and ran.out == "" and ran.seconds < BOUNDED
        assert "did not answer within" in one_line(ran.err)
        payload = read_payload("s8", "toolu_8")
        secret = "ghp_" + "x7Kq2LmN9pQr4StU6vWy8Za1Bc3De5Fg7Hj9"
        payload["tool_response"]["file"]["content"] += f"GITHUB_TOKEN={secret}\n"
        ran = served.hook("tool-use", payload, namespace="user=stopped", env=default)
        assert ran.code == 0 and ran.seconds < BOUNDED
        assert "1 memories kept until it answers" in one_line(ran.err)
        kept = [json.loads(p.read_text()) for p in spool.glob("*.json")]
        assert [m["id"] for m in kept] == ["cc:s8:tool:toolu_8"] and "BLUEHERON" in kept[0][
            "content"
        ]
        assert not list(spool.glob(".*.tmp"))
    finally:
        os.kill(served.info.pid, signal.SIGCONT)
    wait_for(lambda: not list(spool.glob("*.json")), timeout=120)  # the delivery's work
    ran = served.hook("prompt", prompt, namespace="user=stopped")
    assert ran.code == 0 and "BLUEHERON" in ran.context()


def test_a_full_disk_ends_the_hook_quietly_and_half_writes_nothing(
    served: Served, tmp_path: Path
) -> None:
    """Output to a full device (/dev/full) and a spool on a full file system (a 16 KiB tmpfs,
    mounted in a mount namespace of the hook's own)."""
    served.warm("full")
    served.hook("tool-use", read_payload("s9", "toolu_9"), namespace="user=full")
    with Path("/dev/full").open("wb") as full:
        ran = served.hook("prompt", {"session_id": "s9", "prompt": "deploy codename?"},
                          namespace="user=full", stdout=full)  # fmt: skip
    assert ran.code == 0 and "No space left on device" in one_line(ran.err)

    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: no mount namespace for a full file system")
    home = agent_home(served.root)
    home.mkdir(parents=True, exist_ok=True)
    mounted = home / "mnt"
    mounted.mkdir(exist_ok=True)
    script = (
        'mount -t tmpfs -o size=16k tmpfs "$AGENT" || exit 97\n'
        'head -c 16384 /dev/zero > "$AGENT/fill" 2>/dev/null\n'
        '"$@" < "$INPUT" 2> "$ERRORS"; echo "rc=$?"\n'
        'find "$AGENT" -type f ! -name fill -printf "%P\\n"\n'
    )
    payload = tmp_path / "input.json"
    payload.write_text(json.dumps(read_payload("s10", "toolu_10")), encoding="utf-8")
    errors = tmp_path / "errors.txt"
    command = [str(SCRIPT), "hook", "tool-use", "--root", str(served.root), "--profile",
               str(served.profile), "--namespace", "user=full"]  # fmt: skip
    env = clean_env(AGENT=str(home), INPUT=str(payload), ERRORS=str(errors), **PATIENT)
    os.kill(served.info.pid, signal.SIGSTOP)  # the hook must spool, onto the full disk
    try:
        done = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", *command], env=env,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    finally:
        os.kill(served.info.pid, signal.SIGCONT)
    if done.returncode == 97 or "rc=" not in done.stdout:
        pytest.skip(f"no tmpfs in a mount namespace here: {done.stderr.strip()[:200]}")
    assert done.stdout.splitlines()[0] == "rc=0"
    line = one_line(errors.read_text())
    assert "could not be kept" in line and "No space left on device" in line
    assert done.stdout.splitlines()[1:] == []  # no spooled file, whole or partial

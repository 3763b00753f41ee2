"""The real Claude Code CLI (pinned in tests/tools/package.json) with this memory installed, in a
project of its own and a HOME of its own, against a loopback stand-in for the model (the one
fake: agent, hooks, service and store are real).

A first session reads a file holding a fact and secrets (the Read tool, observed by the hooks);
a second session's prompt about the fact reaches the model with the fact and its citation; the
secrets are in no file of the namespace's data directory; the slash commands answer through the
real agent; the agent's own transcripts import without duplicating what the hooks stored; and
uninstall leaves the project as it was.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disclosure.faces.agent.project import project_namespace
from disclosure.service import find_service, stop_service
from disclosure.service.client import MemoryClient
from disclosure.storage.namespaces import Namespace, namespace_dir
from tests.disclosure.faces.agent.hookrun import SCRIPT, clean_env, wait_for
from tests.disclosure.faces.agent.standin_model import StandInModel

pytestmark = pytest.mark.slow
pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

REPO = Path(__file__).resolve().parents[4]
TOOLS = REPO / "tests" / "tools"
CLAUDE = TOOLS / "node_modules" / ".bin" / "claude"
VERSION = "2.1.328"
FACT = "The deploy codename for the billing service is BLUEHERON."
AWS_KEY = "AKIAQ3EGV7NRXK2M4P6T"
DB_PASSWORD = "S3cr3t-Pa55w0rd-9x"
NOTES = (
    f"# Deploy notes\n{FACT}\nIt ships on Fridays from the eu-west cluster.\n\n"
    f"AWS_ACCESS_KEY_ID={AWS_KEY}\n"
    f"DATABASE_URL=postgresql://billing:{DB_PASSWORD}@db.internal:5432/billing\n"
)


@pytest.fixture(scope="module")
def claude() -> Path:
    """The pinned agent, installed with `npm ci` unless .ci/run did it already."""
    if not CLAUDE.exists():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: the real agent cannot be installed here")
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=TOOLS,
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        if done.returncode != 0 or not CLAUDE.exists():
            pytest.skip(f"npm cannot install the agent here: {done.stderr.strip()[-300:]}")
    version = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True,
                             timeout=60, check=True)  # fmt: skip
    assert VERSION in version.stdout
    return CLAUDE


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Path]]:
    home = tmp_path / "home"
    project = tmp_path / "billing"
    home.mkdir()
    project.mkdir()
    root = home / ".local" / "share" / "tiered-disclosure"
    yield {"home": home, "project": project, "root": root}
    stop_service(root, timeout=30)


def environment(home: Path, model: StandInModel | None = None) -> dict[str, str]:
    env = clean_env(
        HOME=str(home),
        # the ONNX export of the embedder is made once per machine: the shared cache keeps it
        XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"),
        # what reaches the model is checked here; the hooks' latency is benchmarks/hook_bench.py's
        TIERED_DISCLOSURE_HOOK_DEADLINE="5",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    env.pop("XDG_DATA_HOME", None)
    if model is not None:
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-stand-in")
    return env


def run_claude(claude: Path, prompt: str, world: dict[str, Path], model: StandInModel) -> str:
    done = subprocess.run(
        [str(claude), "-p", prompt, "--allowedTools", "Read"],
        cwd=world["project"],
        env=environment(world["home"], model),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


def disclosure(*args: str, world: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], cwd=world["project"],
                          env=environment(world["home"]), capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip


def test_claude_code_remembers_across_sessions_and_keeps_secrets_out(
    claude: Path, world: dict[str, Path]
) -> None:
    project, root = world["project"], world["root"]
    before = {p.name for p in project.iterdir()}
    installed = disclosure("agent", "install", "claude-code", world=world)
    assert installed.returncode == 0, installed.stderr
    notes = project / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    user = project_namespace(project)["user"]

    with StandInModel() as model:
        run_claude(claude, f"READ:{notes} and keep what matters", world, model)
        first = model.messages_requests()
        results = [r for r in first if "tool_result" in json.dumps(r)]
        assert results and FACT in json.dumps(results[0])  # the agent ran the Read tool
        tool_use_id = _tool_use_id(first)

        info = wait_for(lambda: find_service(root), timeout=180)  # the hooks started it
        with MemoryClient(info.url, api_key=info.token, namespace={"user": user},
                          timeout=120) as memory:  # fmt: skip
            observed = wait_for(lambda: _observation(memory, tool_use_id), timeout=300)
        assert observed.kind.value == "observation" and FACT in observed.content

        run_claude(claude, "What is the deploy codename for billing?", world, model)
        second = model.messages_requests()[len(first) :]
        seen = [json.dumps(r) for r in second]
        assert any(FACT in s and f"[{observed.citation}]" in s for s in seen), seen[:1]

        run_claude(claude, "/mem-search deploy codename", world, model)
        third = [json.dumps(r) for r in model.messages_requests()[len(first) + len(second) :]]
        assert any("## /mem-search deploy codename" in s and observed.citation in s for s in third)

    _no_secret_in(namespace_dir(root, Namespace((("tenant", "default"), ("user", user)))))
    _import_the_agents_own_transcripts(world, user)

    removed = disclosure("agent", "uninstall", "claude-code", world=world)
    assert removed.returncode == 0, removed.stderr
    assert {p.name for p in project.iterdir()} == before | {"notes.md"}


def _tool_use_id(requests: list[dict[str, Any]]) -> str:
    for request in requests:
        for message in request.get("messages", []):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return str(block["tool_use_id"])
    raise AssertionError("no tool result reached the model")


def _observation(memory: MemoryClient, tool_use_id: str) -> Any:
    from tiers.errors import DisclosureError

    try:
        found = memory.search("deploy codename billing", limit=20)
    except DisclosureError:
        return None
    for entry in found:
        if entry.id.endswith(f":tool:{tool_use_id}"):
            return memory.get(entry.id)
    return None


def _no_secret_in(directory: Path) -> None:
    """No file of the namespace's data directory holds a secret that passed through the tool
    output (the archive, its versions, the vectors' store, caches, logs)."""
    assert directory.is_dir()
    files = [p for p in directory.rglob("*") if p.is_file()]
    assert files
    leaks = [
        (str(p.relative_to(directory)), secret)
        for p in files
        for secret in (AWS_KEY, DB_PASSWORD)
        if secret.encode() in p.read_bytes()
    ]
    assert leaks == []


def _import_the_agents_own_transcripts(world: dict[str, Path], user: str) -> None:
    """The transcripts the agent wrote import into the project's namespace; the turns the
    hooks stored keep their ids (nothing added twice), and a second import changes nothing."""
    transcripts = world["home"] / ".claude" / "projects"
    files = sorted(transcripts.rglob("*.jsonl"))
    assert len(files) >= 3
    first = disclosure("import", str(transcripts), "--format", "claude-code", world=world)
    assert first.returncode == 0, first.stderr
    line = next(x for x in first.stdout.splitlines() if f"user={user}" in x)
    total, added, replaced, unchanged = map(
        int,
        re.findall(
            r"imported (\d+) memories .*: (\d+) added, (\d+) replaced, (\d+) unchanged", line
        )[0],
    )
    assert added + replaced + unchanged == total
    assert replaced + unchanged >= 5  # two prompts, two replies, the observation: the hooks' ids
    again = disclosure("import", str(transcripts), world=world)
    assert again.returncode == 0, again.stderr
    line = next(x for x in again.stdout.splitlines() if f"user={user}" in x)
    assert " 0 added, 0 replaced" in line, again.stdout

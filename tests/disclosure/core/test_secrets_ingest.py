"""Secrets stay out of the store by every way in: after an ingest through the controller, the
mem0-style facade, the HTTP API, the local service (background enrichment), the CLI and its file
importers, the chat middleware, or an import of an export, no file of the data directory holds
a secret, however it came (content, summary, entities, metadata, the query a reply's feedback
logs, a consolidated summary); the counts say how many were replaced; the profile's switch
turns it off.

Real components: the SQLite archive, Chroma embedded with the ONNX MiniLM (the controller and
the service), the disk caches, a service process. Every byte of every file is searched, as
tests/disclosure/test_erasure.py does for forget (Chroma's HNSW files aside: hnswlib writes heap
garbage into them, see tests/disk_bytes.py).
"""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure import ControllerPool, Profile, load_profile
from disclosure.consolidation.store import Summary, SummaryStore
from disclosure.core.controller import DisclosureController
from disclosure.core.transfer import export_namespace, import_namespace, read_export
from disclosure.faces.cli import main
from disclosure.faces.memories import Memories
from disclosure.faces.middleware import DisclosureMiddleware
from disclosure.service import find_service, stop_service
from tests.disclosure.conftest import ChatModel
from tests.disk_bytes import files_with
from tiers.memory import Memory

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]
_RNG = random.Random(2027)


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# Made-up secrets (seeded, never real); each core is what must not reach a file.
GITHUB = _chars(string.ascii_letters + string.digits, 36)
AWS_ID = _chars(string.ascii_uppercase + string.digits, 16)
AWS_SECRET = _chars(string.ascii_letters + string.digits + "+/", 40)
DB_PASSWORD = _chars(string.ascii_letters + string.digits, 18)
API_KEY = _chars(string.ascii_letters + string.digits, 32)
PEM = "\n".join(_chars(string.ascii_letters + string.digits + "+/", 64) for _ in range(4))
CORES = [GITHUB, AWS_ID, AWS_SECRET, DB_PASSWORD, API_KEY, *PEM.splitlines()]

TOOL_OUTPUT = (
    "$ env | grep -i key\n"
    f"AWS_ACCESS_KEY_ID=AKIA{AWS_ID}\n"
    f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n"
    f"DATABASE_URL=postgres://billing:{DB_PASSWORD}@db.internal:5432/billing\n"
    "The billing service reads its Postgres settings from these variables.\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{PEM}\n-----END RSA PRIVATE KEY-----"
)
CHAT = f"My GitHub token for the billing repo is ghp_{GITHUB}, use it for the Postgres migration."


def secret_memory(memory_id: str = "tool-1") -> Memory:
    """A memory with secrets in every field a caller may fill."""
    return Memory(
        id=memory_id,
        content=TOOL_OUTPUT,
        session_id="s1",
        timestamp=NOW - timedelta(hours=2),
        summary=f"env dump with ghp_{GITHUB}",
        entities=("billing", f"ghp_{GITHUB}"),
        metadata={"api_key": API_KEY, "command": f"psql postgres://b:{DB_PASSWORD}@db/x"},
    )


def plain_memories() -> list[Memory]:
    return [
        Memory(
            id=f"p{i}",
            content=f"We moved billing to Postgres, step {i} of the migration plan.",
            session_id="s1",
            timestamp=NOW - timedelta(hours=3, minutes=i),
        )
        for i in range(6)
    ]


def leaked(root: Path) -> dict[str, list[str]]:
    """The files under ``root`` holding any secret core (empty when none does)."""
    found = {core[:12]: files_with(root, core) for core in CORES}
    return {core: files for core, files in found.items() if files}


def profile_with(base: str = "default", *, redact: bool = True, warm: bool = True) -> Profile:
    data = load_profile(base).model_dump(mode="json")
    data["tiers"]["ingest"]["redact_secrets"] = redact
    if not warm:
        data["tiers"]["warm"]["embedder"] = "none"
    return Profile.model_validate(data)


def test_the_controller_stores_no_secret_anywhere(tmp_path: Path) -> None:
    """Ingest, disclose, feedback and consolidation through the controller: every file of the
    data directory (archive, Chroma, caches, logs, summaries) is free of every secret."""
    data = tmp_path / "data"
    with DisclosureController.from_profile(profile_with(), data_dir=data) as controller:
        report = controller.ingest([*plain_memories(), secret_memory()])
        assert report.added == 7
        assert report.secrets >= 7  # content 4 + summary + entity + metadata 2
        assert controller.store.flush() == 0
        stored = controller.store.get(["tool-1"])[0]
        assert "AWS_SECRET_ACCESS_KEY=[redacted:aws_secretkey]" in stored.content
        assert "postgres://billing:[redacted:passwd]@db.internal" in stored.content
        assert "[redacted:privkey]" in stored.content
        assert stored.metadata["api_key"] == "[redacted:apikey]"
        assert stored.entities == ("billing",)
        result = controller.disclose(f"what did the env dump show, token ghp_{GITHUB}?", now=NOW)
        assert "tool-1" in [item.id for item in result.items]
        controller.feedback(result, f"It held the AWS keys [{result.items[0].citation}].")
        controller.show("tool-1")
        assert controller.consolidation.run(include_working_set=True, now=NOW).written
    assert leaked(data) == {}


def test_with_the_switch_off_secrets_are_stored_as_given(tmp_path: Path) -> None:
    """tiers.ingest.redact_secrets: false stores the text as given (and the search above
    would have found it)."""
    data = tmp_path / "data"
    profile = profile_with(redact=False, warm=False)
    with DisclosureController.from_profile(profile, data_dir=data) as controller:
        report = controller.ingest([secret_memory()])
        assert (report.added, report.secrets) == (1, 0)
        assert controller.store.get(["tool-1"])[0].content == TOOL_OUTPUT
    assert set(leaked(data)) == {core[:12] for core in CORES}


def test_a_profile_says_it_in_yaml(tmp_path: Path) -> None:
    """The switch is a strict profile field: on by default, off by name, a typo an error."""
    assert load_profile("default").tiers.ingest.redact_secrets is True
    path = tmp_path / "mine.yaml"
    path.write_text("extends: default\ntiers:\n  ingest:\n    redact_secrets: false\n")
    assert load_profile(path).tiers.ingest.redact_secrets is False
    path.write_text("extends: default\ntiers:\n  ingest:\n    redact_secret: false\n")
    with pytest.raises(ValueError, match="redact_secret"):
        load_profile(path)


def test_the_mem0_style_facade_add_and_update(tmp_path: Path) -> None:
    """add (messages and a note, with metadata) and update say how many secrets they
    replaced; neither the memories nor their earlier versions keep one."""
    root = tmp_path / "root"
    with Memories.from_profile(profile_with(warm=False), root=root) as memories:
        added = memories.add(
            [{"role": "user", "content": CHAT}, {"role": "tool", "content": TOOL_OUTPUT}],
            user_id="dana",
            metadata={"password": DB_PASSWORD},
        )
        assert added.secrets >= 7 and len(added.results) == 2
        note = memories.add(f"the deploy key is AKIA{AWS_ID}", user_id="dana")
        assert note.secrets == 1
        ref = note.results[0].id
        updated = memories.update(
            ref, f"rotated: aws_secret_access_key={AWS_SECRET}", user_id="dana"
        )
        assert "[redacted:aws_secretkey]" in updated.content
        assert len(memories.history(ref, user_id="dana")) == 2
    assert leaked(root) == {}


def test_the_http_api_ingest_and_memories_routes(tmp_path: Path) -> None:
    """POST /v1/ingest reports the secrets it replaced; /v1/memories add and update too."""
    pytest.importorskip("fastapi", reason="the [server] extra is not installed")
    from fastapi.testclient import TestClient

    from disclosure.faces.api import create_app

    root = tmp_path / "root"
    app = create_app(profile_with(warm=False), root=root)
    with TestClient(app, base_url="http://localhost") as client:
        memory = json.loads(secret_memory().model_dump_json())
        response = client.post("/v1/ingest?user=dana", json={"memories": [memory]})
        assert response.status_code == 200, response.text
        assert response.json()["secrets"] >= 7
        response = client.post(
            "/v1/memories?user=dana",
            json={"text": CHAT, "metadata": {"deploy": {"token": f"ghp_{GITHUB}"}}},
        )
        assert response.status_code == 200, response.text
        assert response.json()["secrets"] == 2
        ref = response.json()["results"][0]["id"]
        response = client.patch(f"/v1/memories/{ref}?user=dana", json={"text": TOOL_OUTPUT})
        assert response.status_code == 200, response.text
        assert "[redacted:privkey]" in response.json()["content"]
    assert leaked(root) == {}


def test_the_cli_ingest_and_its_file_importers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """disclosure ingest of a JSONL file (with metadata) and of a chat transcript: the
    summary line counts the secrets redacted."""
    jsonl = tmp_path / "memories.jsonl"
    jsonl.write_text(json.dumps(json.loads(secret_memory().model_dump_json())) + "\n")
    transcript = tmp_path / "chat.txt"
    transcript.write_text(f"Dana: {CHAT}\nassistant: Noted, I will use it for the migration.\n")
    data = tmp_path / "home"
    lean = tmp_path / "lean.yaml"
    lean.write_text("extends: default\ntiers:\n  warm:\n    embedder: none\n")
    store = ["--data-dir", str(data), "--user", "dana", "--profile", str(lean)]
    for path in (jsonl, transcript):
        capsys.readouterr()
        assert main(["ingest", str(path), *store]) == 0
        out = capsys.readouterr().out
        assert " secrets redacted" in out and " 0 secrets redacted" not in out
    assert leaked(data) == {}


def test_the_middleware_records_turns_and_feedback_without_secrets(
    tmp_path: Path, chat_model: ChatModel
) -> None:
    """A chat turn holding a secret: the stored question, the reply and the logged query."""
    root = tmp_path / "root"
    with ControllerPool(profile_with(warm=False), root=root) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(plain_memories())
        records: list[Any] = []
        chat = DisclosureMiddleware(pool, on_turn=records.append).wrap(chat_model.create)
        question = f"{CHAT} Which database did we move billing to?"
        chat(
            model="m", messages=[{"role": "user", "content": question}], disclosure={"user": "dana"}
        )
        record = records[-1]
        assert record.errors == () and record.ingest is not None
        assert record.ingest.secrets == 1 and record.feedback is not None
        assert record.feedback.used  # the reply used a memory: the query was logged
    assert leaked(root) == {}


def test_an_import_replaces_the_secrets_an_export_brought(tmp_path: Path) -> None:
    """An export made with the switch off holds secrets in memories, logged queries and
    summaries; importing it with the switch on stores none of them."""
    source = tmp_path / "source"
    with DisclosureController.from_profile(
        profile_with(redact=False, warm=False), data_dir=source
    ) as controller:
        controller.ingest([*plain_memories(), secret_memory()])
        result = controller.disclose(f"the env dump and ghp_{GITHUB}", now=NOW)
        controller.feedback(result, f"See [{result.items[0].citation}].")
        assert controller.consolidation.run(include_working_set=True, now=NOW).written
        out = io.StringIO()
        export_namespace(controller, out, namespace={"user": "dana"})
    assert GITHUB in out.getvalue() and AWS_SECRET in out.getvalue()
    target = tmp_path / "target"
    export = read_export(out.getvalue().splitlines())
    with DisclosureController.from_profile(profile_with(warm=False), data_dir=target) as controller:
        report = import_namespace(controller, export)
        assert report.memories == 7 and report.summaries and report.secrets >= 7
        assert report.logs["citation_use"] >= 1
    assert leaked(target) == {}


def test_summaries_are_written_without_secrets(tmp_path: Path) -> None:
    """The one place every summary is written (a consolidation run, an import) redacts it."""
    store = SummaryStore(tmp_path, redact_secrets=True)
    summary = Summary(
        id="sum:1", kind="topic", session_id="s1", position=0, topic=f"ghp_{GITHUB}",
        start=NOW, end=NOW, index_line=f"token ghp_{GITHUB}",
        paragraph=f"DB_PASSWORD={DB_PASSWORD}", full_text=TOOL_OUTPUT, sources=("m1",),
        summarizer="model",
    )  # fmt: skip
    store.replace_session("s1", [summary], [("m1", "x")], now=NOW)
    kept = store.get("sum:1")
    assert kept is not None and kept.index_line == "token [redacted:github_token]"
    assert kept.paragraph == "DB_PASSWORD=[redacted:passwd]"
    store.close()
    assert leaked(tmp_path) == {}


# -- the local service --------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    return subprocess.run(
        [sys.executable, "-m", "disclosure", *args],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=180,
        check=False,
    )


@pytest.fixture
def served_root(tmp_path: Path) -> Iterator[Path]:
    pytest.importorskip("uvicorn", reason="the [server] extra is not installed")
    root = tmp_path / "root"
    done = _cli("service", "start", "--root", str(root), "--profile", "default")
    assert done.returncode == 0, done.stderr
    assert find_service(root) is not None
    yield root
    stop_service(root, timeout=30)


def test_the_local_service_with_background_enrichment(served_root: Path) -> None:
    """Through the service (acknowledged once archived, enriched and embedded by its worker):
    the client's report counts the secrets, and once the service has stopped no file holds
    one."""
    from disclosure.service.client import MemoryClient

    with MemoryClient.for_root(served_root, namespace={"user": "dana"}) as client:
        report = client.ingest([*plain_memories(), secret_memory()])
        assert report.added == 7 and report.secrets >= 7
        for _ in range(600):
            if client.stats()["store"]["pending"] == 0:
                break
            time.sleep(0.1)
        assert client.stats()["store"]["pending"] == 0
        assert "[redacted:aws_secretkey]" in client.show("tool-1")
    stop_service(served_root, timeout=30)
    assert leaked(served_root) == {}

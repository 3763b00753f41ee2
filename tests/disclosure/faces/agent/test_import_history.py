"""`disclosure import` of agent transcripts and a ChatGPT export: sessions, roles and times
kept, the same file twice changes nothing, another shape refused with its line and reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from disclosure.faces.agent.history import detect_format
from disclosure.faces.agent.project import project_namespace
from disclosure.faces.cli import main
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import iter_namespaces
from tests.disclosure.faces.agent.shapes import PROJECT, SESSION, Transcript, conversation
from tiers.memory import MemoryKind

LEAN = "extends: coding-agent\nname: lean-agent\ntiers:\n  warm:\n    embedder: none\n"


@pytest.fixture
def lean(tmp_path: Path) -> Path:
    path = tmp_path / "lean.yaml"
    path.write_text(LEAN, encoding="utf-8")
    return path


def transcript(tmp_path: Path, session: str = SESSION, cwd: str = PROJECT) -> Path:
    t = Transcript(session, cwd)
    t.noise()
    t.prompt("Where is the deploy codename kept?", prompt_id="p1")
    read = {"type": "text", "file": {"filePath": f"{cwd}/notes.txt",
                                     "content": "The deploy codename is BLUEHERON.\n"}}  # fmt: skip
    t.tool("Read", {"file_path": f"{cwd}/notes.txt"}, read, "1\tThe deploy codename ...")
    t.reply("It is BLUEHERON.", message_id="msg_1")
    path = tmp_path / f"{session}.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    return path


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_transcript_goes_to_its_projects_namespace_and_twice_changes_nothing(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    path = transcript(tmp_path)
    root = tmp_path / "root"
    options = ("--root", str(root), "--profile", str(lean))
    code, out, err = run(capsys, "import", str(path), *options)
    assert code == 0, err
    user = project_namespace(PROJECT)["user"]
    assert f"user={user} (project {PROJECT}): 3 added, 0 replaced, 0 unchanged" in out
    assert "claude-code: 3 memories from 1 sessions in 1 files" in out
    code, out, _ = run(capsys, "import", str(path), *options)
    assert code == 0 and "0 added, 0 replaced, 3 unchanged" in out
    with ControllerPool(lean, root=root) as pool, pool.lease(pool.namespace(user=user)) as c:
        stored = sorted(c.store.iter_memories(), key=lambda m: m.timestamp)
    assert [(m.kind, m.speaker, m.session_id) for m in stored] == [
        (MemoryKind.PROMPT, "user", SESSION),
        (MemoryKind.OBSERVATION, None, SESSION),
        (MemoryKind.RESPONSE, "assistant", SESSION),
    ]
    assert stored[0].timestamp.isoformat() == "2026-11-27T06:14:02+00:00"
    assert "BLUEHERON" in stored[1].content and stored[1].metadata["tool"] == "Read"


def test_a_directory_of_transcripts_is_read_whole_and_the_options_can_name_the_namespace(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    folder = tmp_path / "projects" / "-home-dana-billing"
    folder.mkdir(parents=True)
    transcript(folder, "s-1")
    transcript(folder, "s-2", cwd="/home/dana/other")
    root = tmp_path / "root"
    code, out, err = run(capsys, "import", str(folder.parent), "--root", str(root),
                         "--profile", str(lean), "--user", "dana")  # fmt: skip
    assert code == 0, err
    assert "6 memories from 2 sessions in 2 files" in out
    assert [parts["user"] for parts, _ in iter_namespaces(root)] == ["dana"]


def test_a_chatgpt_export_keeps_conversations_as_sessions(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    export = [
        conversation("c1", "Billing", [("user", "Where does billing live?"),
                                       ("assistant", "In Postgres.")]),
        conversation("c2", "Trip", [("user", "Book Busan"), ("assistant", "Done.")]),
    ]  # fmt: skip
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    assert detect_format(path) == "chatgpt"
    root = tmp_path / "root"
    options = ("--root", str(root), "--profile", str(lean), "--user", "dana")
    code, out, err = run(capsys, "import", str(path), *options)
    assert code == 0, err
    assert "4 added" in out and "chatgpt: 4 memories from 2 sessions in 1 files" in out
    assert "0 added, 0 replaced, 4 unchanged" in run(capsys, "import", str(path), *options)[1]
    with ControllerPool(lean, root=root) as pool, pool.lease(pool.namespace(user="dana")) as c:
        sessions = {m.session_id for m in c.store.iter_memories()}
    assert sessions == {"c1", "c2"}


@pytest.mark.parametrize(
    ("content", "given", "message"),
    [
        ("TRANSCRIPT\n{broken", "auto", ".jsonl: line 8: not valid JSON"),
        ('TRANSCRIPT\n{"id": "m1", "content": "x"}', "claude-code",
         ".jsonl: line 8: a JSON object without a 'type': not a Claude Code record"),
        ('[{"title": "no tree"}]', "auto", "conversation 0: not a conversation"),
        ("TRANSCRIPT", "chatgpt", "not valid JSON"),
    ],
)  # fmt: skip
def test_another_shape_is_refused_with_line_and_reason_and_nothing_is_stored(
    tmp_path: Path, lean: Path, capsys: Any, content: str, given: str, message: str
) -> None:
    good = transcript(tmp_path).read_text(encoding="utf-8").rstrip("\n")
    path = tmp_path / "bad.jsonl"
    path.write_text(content.replace("TRANSCRIPT", good), encoding="utf-8")
    root = tmp_path / "root"
    code, _, err = run(capsys, "import", str(path), "--format", given, "--root", str(root),
                       "--profile", str(lean))  # fmt: skip
    assert code == 1 and message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(iter_namespaces(root))


def test_an_export_of_disclosure_is_still_told_apart(tmp_path: Path) -> None:
    """Format detection keeps `disclosure import EXPORT` as it was."""
    header = {"type": "header", "format": "tiered-disclosure-export", "version": 1}
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    assert detect_format(path) == "export"
    path.write_text('{"id": "x", "content": "y"}\n', encoding="utf-8")
    assert detect_format(path) == "export"  # its reader says "not an export", as before
    assert detect_format(transcript(tmp_path)) == "claude-code"
    assert detect_format(tmp_path) == "claude-code"  # a directory of transcripts

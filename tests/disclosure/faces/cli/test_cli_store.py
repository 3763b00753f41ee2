"""The store commands (ingest, query, show, stats, forget), run in process through main()."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from disclosure.faces.cli import main
from disclosure.sample import load_sample_conversation

EVALUATION_DATA = Path(__file__).resolve().parents[2] / "evaluation" / "data"
TRANSCRIPT = """\
# Session kickoff 2026-03-02 09:00
Dana: Kickoff for the invoicing rewrite. Priya owns billing, Marco the payments gateway.
assistant: Noted: Priya on billing, Marco on the gateway.
Dana: Decision: we move billing from SQLite to Postgres 16.
  Priya writes the migration in billing/migrations/0007_postgres.py.
# Session incident 2026-03-19 08:00
Dana: The nightly batch sent 212 duplicate invoice emails.
[08:20] assistant: Add pg_advisory_lock so only one batch runs at a time.
"""


def run(capsys: pytest.CaptureFixture[str], *args: str, stdin: str = "") -> tuple[int, str, str]:
    capsys.readouterr()
    old, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        code = main(list(args))
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(tmp_path: Path) -> list[str]:
    return ["--data-dir", str(tmp_path / "home"), "--user", "dana"]


def test_a_transcript_goes_in_and_comes_back_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """ingest a transcript; query prints the context; show expands; a second ingest is a no-op."""
    path = tmp_path / "chat.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    code, out, _ = run(capsys, "ingest", str(path), *store)
    assert code == 0
    assert "ingested 5 memories from chat.txt (transcript, 5)" in out and "5 added" in out
    assert "user='dana'" in out
    code, out, _ = run(capsys, "ingest", str(path), *store)
    assert "5 unchanged" in out
    code, out, err = run(
        capsys, "query", "Which database for billing?", "--level", "detailed", *store
    )
    assert code == 0 and "Postgres 16" in out and "0007_postgres.py" in out  # continuation line
    assert err.startswith("detailed · ") and "savings" in err
    citation = next(word.strip("[]") for word in out.split() if word.startswith("[mem:"))
    code, out, _ = run(capsys, "show", citation, *store)
    assert code == 0 and f"### [{citation}]" in out and "kickoff" in out
    code, out, _ = run(capsys, "query", "duplicate emails", "--json", "--budget", "120", *store)
    data = json.loads(out)
    assert data["budget"] == 120 and data["tokens_used"] <= 120
    assert data["namespace"] == {"tenant": "default", "user": "dana"}
    assert "savings_line" in data


def test_stats_show_tiers_usage_and_namespaces(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """stats: per tier counts, pending, disk, usage per level; --all lists the namespaces.

    Another user's query in the same data directory sees none of it."""
    path = tmp_path / "sample.jsonl"
    path.write_text(
        "\n".join(m.model_dump_json() for m in load_sample_conversation()), encoding="utf-8"
    )
    assert run(capsys, "ingest", str(path), *store)[0] == 0
    code, out, _ = run(capsys, "stats", *store)
    assert code == 0
    assert "tiers: hot" in out and "cold 38" in out and "waiting for embedding" in out
    assert "disk:" in out and "comprehensive" in out
    code, out, _ = run(capsys, "stats", "--json", *store)
    data = json.loads(out)
    assert data["store"]["cold"] == 38 and data["usage"]["standard"]["replies"] == 0
    code, out, err = run(
        capsys, "query", "billing database", "--data-dir", store[1], "--user", "eve"
    )
    # eve has nothing stored: an empty answer, nothing of Dana's, and no namespace created
    assert code == 0 and out == "" and "nothing is stored" in err and "Postgres" not in err
    code, out, _ = run(capsys, "stats", "--all", "--json", "--data-dir", store[1])
    assert sorted(row["namespace"]["user"] for row in json.loads(out)) == ["dana"]


def test_forget_asks_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """Without --yes, forget asks; 'n' keeps everything, --yes removes the session."""
    path = tmp_path / "chat.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    run(capsys, "ingest", str(path), *store)
    code, _, err = run(capsys, "forget", "--session", "incident", *store, stdin="n\n")
    assert code == 1 and "forget 2 memories" in err and "nothing forgotten" in err
    code, out, _ = run(capsys, "forget", "--session", "incident", *store, stdin="y\n")
    assert code == 0 and "forgot 2 memories" in out
    code, out, _ = run(capsys, "forget", "--id", "chat/kickoff#1", "--yes", *store)
    assert code == 0 and "forgot 1 memories" in out
    code, out, _ = run(capsys, "query", "duplicate invoice emails", "--json", *store)
    assert "212" not in json.loads(out)["text"]


@pytest.mark.parametrize(
    ("name", "content", "count"),
    [
        ("m.jsonl", '{"id": "a", "content": "first"}\n\n{"id": "b", "content": "second"}\n', 2),
        ("m.json", '[{"id": "a", "content": "first"}]', 1),
    ],
)
def test_memory_files_jsonl_and_json(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    store: list[str],
    name: str,
    content: str,
    count: int,
) -> None:
    """JSON Lines and JSON arrays of Memory objects."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, out, _ = run(capsys, "ingest", str(path), *store)
    assert code == 0 and f"({'memories'}, {count})" in out


def test_locomo_and_evaluation_conversations(
    capsys: pytest.CaptureFixture[str], store: list[str]
) -> None:
    """LoCoMo JSON and the evaluation JSONL are read through the evaluation loaders."""
    code, out, _ = run(capsys, "ingest", str(EVALUATION_DATA / "locomo_tiny.json"), *store)
    assert code == 0 and "(locomo, " in out
    code, out, _ = run(capsys, "ingest", str(EVALUATION_DATA / "tiny.jsonl"), *store)
    assert code == 0 and "(conversations, " in out


@pytest.mark.parametrize(
    ("content", "args", "needle"),
    [
        ('{"id": "a", "content": "x"}\nnot json\n', (), "m.jsonl:2: not valid JSON"),
        ('{"id": "a"}\n', (), "m.jsonl:1: invalid memory: content"),
        ("no speaker on this line\n", ("--format", "transcript"), "expected 'Speaker: text'"),
        ('{"id": "a", "content": "x"}\n', ("--conversation", "c1"), "not in this profile's"),
        ('{"id": "a", "content": "x"}\n', ("--tenant", "../etc"), "path separator"),
    ],
)
def test_mistakes_are_one_line_and_store_nothing(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    store: list[str],
    content: str,
    args: tuple[str, ...],
    needle: str,
) -> None:
    """A bad file or namespace: exit 1, one 'disclosure: error:' line, nothing stored."""
    path = tmp_path / "m.jsonl"
    path.write_text(content, encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(path), *args, *store)
    assert code == 1
    assert err.startswith("disclosure: error:") and err.count("\n") == 1
    assert needle in err and "Traceback" not in err
    code, out, _ = run(capsys, "stats", "--all", "--json", "--data-dir", store[1])
    assert all(row["namespace"]["user"] != "dana" for row in json.loads(out) or [])


def test_show_and_forget_mistakes(
    capsys: pytest.CaptureFixture[str], store: list[str], tmp_path: Path
) -> None:
    """An unknown citation, forget without a target: one clear line each."""
    code, _, err = run(capsys, "show", "mem:zzzzzz", *store)
    assert code == 1 and "nothing is stored" in err  # a read creates no namespace
    path = tmp_path / "one.jsonl"
    path.write_text('{"id": "m1", "content": "hello"}\n', encoding="utf-8")
    assert run(capsys, "ingest", str(path), *store)[0] == 0
    code, _, err = run(capsys, "show", "mem:zzzzzz", *store)
    assert code == 1 and "no memory has the id or citation 'mem:zzzzzz'" in err
    code, _, err = run(capsys, "forget", *store)
    assert code == 1 and "--id" in err
    code, out, _ = run(capsys, "forget", "--id", "nope", *store)
    assert code == 0 and "nothing to forget" in out


def test_a_new_namespace_is_announced_and_a_typo_creates_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """The first ingest says it creates the namespace; reads of a misspelt one say nothing is
    stored and leave no store behind."""
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "a", "content": "Dana likes tea."}\n', encoding="utf-8")
    code, _, err = run(capsys, "ingest", str(path), *store)
    assert code == 0 and "new namespace tenant=default, user=dana in " in err
    code, _, err = run(capsys, "ingest", str(path), *store)
    assert "new namespace" not in err
    typo = ["--data-dir", store[1], "--user", "dnaa"]
    warning = f"nothing is stored for tenant='default', user='dnaa' under {store[1]}"
    for command, exit_code in ((["query", "tea"], 0), (["stats"], 0), (["show", "a"], 1)):
        code, out, err = run(capsys, *command, *typo)
        assert code == exit_code, (command, err)
        assert warning in err and "created by its first ingest" in err, (command, err)
        assert "new namespace" not in err and "tea" not in out, command
    code, out, err = run(capsys, "forget", "--id", "a", *typo)
    assert code == 0 and "nothing to forget" in out and warning in err
    code, out, err = run(capsys, "query", "what tea does Dana like?", "--json", *typo)
    data = json.loads(out)  # the empty answer in full: the query's level, and the warning
    assert code == 0 and (data["text"], data["items"], data["tokens_used"]) == ("", [], 0)
    assert data["level"] == data["analysis"]["level"] and data["budget"] > 0
    assert warning in data["warnings"][0] and data["namespace"]["user"] == "dnaa"
    code, out, err = run(capsys, "stats", "--json", *typo)
    assert code == 0 and json.loads(out)["store"]["cold"] == 0 and warning in err
    code, out, _ = run(capsys, "stats", "--all", "--json", "--data-dir", store[1])
    assert [row["namespace"]["user"] for row in json.loads(out)] == ["dana"]


def test_forget_takes_the_citations_query_and_show_print(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    path = tmp_path / "chat.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    run(capsys, "ingest", str(path), *store)
    code, out, _ = run(
        capsys, "query", "duplicate invoice emails", "--level", "comprehensive", *store
    )
    citation = next(word.strip("[]") for word in out.split() if word.startswith("[mem:"))
    code, out, _ = run(capsys, "forget", "--id", citation, "--yes", *store)
    assert code == 0 and "forgot 1 memories" in out
    code, _, err = run(capsys, "show", citation, *store)
    assert code == 1 and "no memory has the id or citation" in err


def test_ingest_counts_add_up_with_private_memories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """A memory that is entirely private is counted as such, so the counts add up."""
    path = tmp_path / "m.jsonl"
    path.write_text(
        '{"id": "a", "content": "public note"}\n'
        '{"id": "b", "content": "<private>my PIN is 4821</private>"}\n',
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "ingest", str(path), *store)
    assert code == 0 and "ingested 2 memories" in out
    assert "1 added" in out and "1 entirely private (not stored)" in out


def test_a_json_array_without_content_is_not_taken_for_locomo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: list[str]
) -> None:
    """Records that lack content are memories with a missing field, not a LoCoMo file."""
    path = tmp_path / "m.json"
    path.write_text('[{"id": "a", "text": "oops"}]', encoding="utf-8")
    code, _, err = run(capsys, "ingest", str(path), *store)
    assert code == 1 and "content" in err and "sample_id" not in err

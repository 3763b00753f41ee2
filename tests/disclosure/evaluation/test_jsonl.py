"""The JSONL format for users' own data: it loads, and every mistake names line and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure.evaluation import load_jsonl
from disclosure.evaluation.jsonl import JSONL_EPOCH
from tiers.errors import DatasetError
from tiers.memory import MemoryKind

JSONL_TINY = Path(__file__).resolve().parent / "data" / "tiny.jsonl"


def good() -> dict[str, Any]:
    return {
        "id": "c",
        "turns": [{"id": "t1", "text": "We chose Postgres."}, {"id": "t2", "text": "Fine by me."}],
        "questions": [{"question": "Which database?", "evidence": ["t1"]}],
    }


def write(tmp_path: Path, *lines: Any, name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_the_fixture_loads_with_ids_sessions_timestamps_and_questions() -> None:
    """Memory ids are conversation/turn; defaults fill speaker, session, time and kind."""
    dataset = load_jsonl(JSONL_TINY)
    trip = dataset.conversation("trip")
    assert [m.id for m in trip.memories] == ["trip/t1", "trip/t2", "trip/t3"]
    assert trip.memories[1].timestamp == datetime(2024, 5, 1, 10, 1, tzinfo=UTC)
    assert trip.memories[2].timestamp == datetime(2024, 5, 2, 16, 0, tzinfo=UTC)
    assert trip.memories[1].kind is MemoryKind.RESPONSE
    assert trip.memories[2].session_id == "trip/s2"
    assert trip.now == datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
    garden = dataset.conversation("garden")
    assert garden.memories[0].timestamp == JSONL_EPOCH
    assert garden.memories[0].session_id == "garden/default"
    assert garden.memories[0].kind is MemoryKind.PROMPT
    assert garden.now == JSONL_EPOCH + timedelta(minutes=2)
    questions = {q.id: q for q in dataset.questions}
    assert questions["trip/flight"].evidence == ("trip/t2",)
    assert questions["trip/flight"].category == "single-hop"
    assert questions["trip/q1"].category == "2"
    assert not questions["trip/q2"].scored
    assert len(dataset.scored_questions) == 3


def test_a_directory_reads_every_jsonl_file_in_name_order(tmp_path: Path) -> None:
    """Separate files per conversation work; conversation ids must stay unique across them."""
    write(tmp_path, {**good(), "id": "b"}, name="2.jsonl")
    write(tmp_path, {**good(), "id": "a"}, name="1.jsonl")
    assert [c.id for c in load_jsonl(tmp_path).conversations] == ["a", "b"]
    write(tmp_path, {**good(), "id": "a"}, name="3.jsonl")
    with pytest.raises(DatasetError, match=r"3\.jsonl:1: id: conversation 'a' appears twice"):
        load_jsonl(tmp_path)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{oops", "data.jsonl:2: not valid JSON"),
        ("[1, 2]", "data.jsonl:2: each line must be a JSON object"),
        ({**good(), "turns": []}, "data.jsonl:2: turns: List should have at least 1 item"),
        ({"id": "c", "turns": good()["turns"]}, "data.jsonl:2: questions: Field required"),
        ({**good(), "colour": "red"}, "data.jsonl:2: colour: unknown key"),
        (
            {**good(), "turns": [{"id": "t1", "text": "   "}]},
            "data.jsonl:2: turns -> 0 -> text: must not be blank",
        ),
        (
            {**good(), "turns": [{"id": "t1", "text": "x", "kind": "robot"}]},
            "data.jsonl:2: turns -> 0 -> kind: Input should be",
        ),
        (
            {**good(), "turns": [{"id": "t1", "text": "x", "timestamp": "soon"}]},
            "data.jsonl:2: turns -> 0 -> timestamp:",
        ),
        (
            {**good(), "turns": [{"id": "t1", "text": "x"}, {"id": "t1", "text": "y"}]},
            "data.jsonl:2: turns -> 1 -> id: duplicate turn id 't1'",
        ),
        (
            {**good(), "questions": [{"question": "q?", "evidence": ["t1", "t9"]}]},
            "data.jsonl:2: questions -> 0 -> evidence -> 1: unknown turn id 't9'",
        ),
        (
            {**good(), "questions": [{"question": "q?"}]},
            "data.jsonl:2: questions -> 0 -> evidence: Field required",
        ),
        (
            {**good(), "questions": [{"question": "a?", "evidence": [], "id": "x"}] * 2},
            "data.jsonl:2: questions -> 1 -> id: duplicate 'x'",
        ),
    ],
)
def test_mistakes_name_the_line_and_the_field(tmp_path: Path, line: Any, needle: str) -> None:
    """A bad second line fails with a DatasetError naming file:line and the field path."""
    path = write(tmp_path, {**good(), "id": "first"}, line)
    with pytest.raises(DatasetError) as caught:
        load_jsonl(path)
    assert needle in str(caught.value)


def test_blank_lines_are_skipped_but_an_empty_file_is_an_error(tmp_path: Path) -> None:
    """Blank lines do not count as conversations; a file with none is refused."""
    assert len(load_jsonl(write(tmp_path, good(), "", "   ")).conversations) == 1
    with pytest.raises(DatasetError, match="no conversations"):
        load_jsonl(write(tmp_path, "", name="empty.jsonl"))
    with pytest.raises(DatasetError, match="no such file or directory"):
        load_jsonl(tmp_path / "absent.jsonl")

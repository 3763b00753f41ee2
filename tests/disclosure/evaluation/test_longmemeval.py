"""The LongMemEval loader on rows written here (the shipped dev file is only read by `eval`).

Each row is one question with its own haystack; the rows below carry the format's quirks: an
empty turn (skipped and counted), an evidence turn that is empty, sessions of the same day out
of order, and an assistant turn marked as evidence.
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure.evaluation import Dataset, load_longmemeval
from disclosure.evaluation.experiment import DatasetSpec
from disclosure.evaluation.loading import load_dataset
from tiers.errors import DatasetError
from tiers.memory import MemoryKind


def row(question_id: str = "q1", **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "question_id": question_id,
        "question_type": "multi-session",
        "question": "How many mugs did I buy?",
        "answer": "5",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_dates": ["2023/05/20 (Sat) 15:08", "2023/05/28 (Sun) 09:00"],
        "haystack_session_ids": ["s01", "s02"],
        "answer_session_ids": None,
        "haystack_sessions": [
            [
                {"role": "user", "content": "I bought 5 mugs for work.", "has_answer": True},
                {"role": "assistant", "content": "What a kind gesture!"},
                {"role": "user", "content": "   "},
            ],
            [
                {"role": "user", "content": "Any tips for gift wrapping?"},
                {"role": "assistant", "content": "Use kraft paper.", "has_answer": True},
            ],
        ],
    }
    base.update(changes)
    return base


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as stream:
            stream.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    return load_longmemeval(write(tmp_path / "lme.jsonl.gz", [row("q1"), row("q2")]))


def test_each_question_is_its_own_conversation_asked_at_its_date(dataset: Dataset) -> None:
    """One conversation per question, now = question_date, ids session:turn."""
    assert [c.id for c in dataset.conversations] == ["q1", "q2"]
    conversation = dataset.conversation("q1")
    assert conversation.now == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    assert [m.id for m in conversation.memories] == ["s01:0", "s01:1", "s02:0", "s02:1"]
    first = conversation.memories[0]
    assert first.speaker == "user" and first.kind is MemoryKind.PROMPT
    assert conversation.memories[1].kind is MemoryKind.RESPONSE
    assert conversation.memories[1].timestamp == datetime(2023, 5, 20, 15, 9, tzinfo=UTC)


def test_evidence_is_the_turns_marked_has_answer(dataset: Dataset) -> None:
    """Gold evidence: every has_answer turn, whoever said it; the type is the category."""
    (question,) = dataset.questions_of("q1")
    assert question.evidence == ("s01:0", "s02:1")
    assert question.category == "multi-session"
    assert question.text == "How many mugs did I buy?" and question.answer == "5"


def test_empty_turns_are_skipped_and_counted(dataset: Dataset) -> None:
    """The blank turn is no memory; the loader says where and how many."""
    assert "s01:2" not in dataset.conversation("q1").contents
    empty = [i for i in dataset.issues if i.kind == "empty-turn"]
    assert [(i.where.split(":")[-1], i.detail) for i in empty] == [
        ("1.s01", "1 empty turn(s) skipped"),
        ("2.s01", "1 empty turn(s) skipped"),
    ]


def test_an_empty_evidence_turn_is_unresolved_not_scored(tmp_path: Path) -> None:
    """Evidence on an empty turn leaves the denominator and is reported."""
    sessions = row()["haystack_sessions"]
    sessions[0][2] = {"role": "user", "content": "", "has_answer": True}
    data = load_longmemeval(write(tmp_path / "x.jsonl", [row(haystack_sessions=sessions)]))
    (question,) = data.questions
    assert question.evidence == ("s01:0", "s02:1")
    assert question.unresolved_evidence == ("s01:2",)
    assert any(i.kind == "evidence-unresolved" for i in data.issues)


def test_memories_are_in_time_order_when_sessions_are_not(tmp_path: Path) -> None:
    """Sessions listed out of order on one day still give memories in time order."""
    dates = ["2023/05/28 (Sun) 18:00", "2023/05/28 (Sun) 09:00"]
    data = load_longmemeval(write(tmp_path / "x.jsonl", [row(haystack_dates=dates)]))
    memories = data.conversations[0].memories
    assert [m.session_id for m in memories] == ["s02", "s02", "s01", "s01"]
    assert memories[0].timestamp == datetime(2023, 5, 28, 9, 0, tzinfo=UTC)
    assert memories[1].timestamp - memories[0].timestamp == timedelta(minutes=1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question_date": "30 May 2023"}, "question_date: '30 May 2023' does not match"),
        ({"haystack_dates": ["2023/05/20 (Sat) 15:08"]}, "must have one entry per session"),
        ({"question": 7}, "question: expected str"),
    ],
)
def test_bad_rows_name_where_and_what(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    """A malformed row is a DatasetError naming the line and the field."""
    path = write(tmp_path / "bad.jsonl", [row(**change)])
    with pytest.raises(DatasetError, match=message):
        load_longmemeval(path)


def test_a_bad_role_and_a_duplicate_question_are_errors(tmp_path: Path) -> None:
    """Roles are user or assistant; question ids are unique."""
    sessions = row()["haystack_sessions"]
    sessions[1][0]["role"] = "narrator"
    with pytest.raises(DatasetError, match="'narrator' is neither 'user' nor 'assistant'"):
        load_longmemeval(write(tmp_path / "a.jsonl", [row(haystack_sessions=sessions)]))
    with pytest.raises(DatasetError, match="duplicate question_id 'q1'"):
        load_longmemeval(write(tmp_path / "b.jsonl", [row("q1"), row("q1")]))


def test_unreadable_files_are_dataset_errors(tmp_path: Path) -> None:
    """A missing file and a corrupt gzip are DatasetErrors, never tracebacks."""
    with pytest.raises(DatasetError, match="no such file"):
        load_longmemeval(tmp_path / "missing.jsonl")
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(DatasetError, match="not a readable LongMemEval"):
        load_longmemeval(broken)


def test_an_experiment_reads_the_path_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """format longmemeval with no path: $DISCLOSURE_LONGMEMEVAL names the file; all types."""
    path = write(tmp_path / "mine.jsonl", [row("q1"), row("q2", question_type="temporal")])
    monkeypatch.setenv("DISCLOSURE_LONGMEMEVAL", str(path))
    spec = DatasetSpec(format="longmemeval")
    assert spec.resolved_path() == path
    assert len(load_dataset(spec).questions) == 2
    only = DatasetSpec(format="longmemeval", categories=("temporal",))
    assert [q.id for q in load_dataset(only).questions] == ["q2"]

"""The LoCoMo loader on a fixture written for this project (never the licensed file).

The fixture ``data/locomo_tiny.json`` carries the dev file's known faults: evidence joined in one
string (``"D8:6; D9:17"``, ``"D9:17 D11:26"``), ``"D:11:26"``, a zero-padded ``"D30:05"``, an id
that matches no turn (``"D10:19"``), a bare ``"D"``, empty evidence lists, a date key without a
session, and image turns whose ``query`` must never reach a memory. Its dia ids are sparse
(``D11:25``, ``D11:26``) so that the real faulty ids resolve without writing 26 turns.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure.evaluation import Dataset, load_locomo
from disclosure.evaluation.locomo import repair_evidence
from tiers.errors import DatasetError
from tiers.memory import MemoryKind

LOCOMO_TINY = Path(__file__).resolve().parent / "data" / "locomo_tiny.json"


def issues_of(dataset: Dataset, where: str) -> list[str]:
    return [f"{i.kind}: {i.detail}" for i in dataset.issues if i.where == where]


def test_one_memory_per_turn_with_stable_ids_sessions_and_kinds(tiny: Dataset) -> None:
    """Ids are sample/dia_id, sessions per session, speaker_a prompts and speaker_b responses."""
    conv_a = tiny.conversation("conv-a")
    assert len(conv_a.memories) == 15
    first = conv_a.memories[0]
    assert first.id == "conv-a/D1:1"
    assert first.session_id == "conv-a/session_1"
    assert first.speaker == "Ana" and first.kind is MemoryKind.PROMPT
    assert conv_a.memories[1].kind is MemoryKind.RESPONSE
    assert {m.session_id for m in tiny.conversation("conv-b").memories} == {
        f"conv-b/session_{n}" for n in (8, 9, 11, 30)
    }


def test_timestamps_come_from_the_session_dates_one_minute_a_turn(tiny: Dataset) -> None:
    """'9:15 am on 3 March, 2024' is the first turn's time; later turns follow a minute apart."""
    memories = tiny.conversation("conv-a").memories
    start = datetime(2024, 3, 3, 9, 15, tzinfo=UTC)
    assert [m.timestamp for m in memories[:3]] == [start + timedelta(minutes=i) for i in range(3)]
    assert memories[6].timestamp == datetime(2024, 3, 10, 16, 40, tzinfo=UTC)
    assert [m.timestamp for m in memories] == sorted(m.timestamp for m in memories)


def test_questions_are_asked_just_after_the_last_session(tiny: Dataset) -> None:
    """now is a minute after the last turn (session 30 here, not the dateless session 31)."""
    conv_b = tiny.conversation("conv-b")
    assert conv_b.now == datetime(2023, 12, 1, 18, 47, tzinfo=UTC)
    assert conv_b.now > max(m.timestamp for m in conv_b.memories)


def test_image_captions_stay_with_their_turn_and_the_query_never_leaks(tiny: Dataset) -> None:
    """The caption is appended to the turn's text; the image-search query appears nowhere."""
    memory = next(m for m in tiny.conversation("conv-b").memories if m.id == "conv-b/D9:17")
    assert memory.content == (
        "My first bowl came out lopsided but I love it. "
        "[shares photo: a photo of a lopsided clay bowl on a wooden table]"
    )
    everything = json.dumps(
        [m.model_dump(mode="json") for c in tiny.conversations for m in c.memories]
    )
    for leaked in ("tahoe", "registration number secret", "example.invalid"):
        assert leaked not in everything


def test_evidence_is_repaired_where_unambiguous(tiny: Dataset) -> None:
    """Joined ids split, 'D:11:26' and 'D30:05' normalise, and each repair is logged."""
    by_id = {q.id: q for q in tiny.questions}
    assert by_id["conv-b/q0"].evidence == ("conv-b/D8:6", "conv-b/D9:17")
    assert by_id["conv-b/q1"].evidence == ("conv-b/D11:26",)
    assert by_id["conv-b/q2"].evidence == ("conv-b/D30:5",)
    assert by_id["conv-b/q6"].evidence == ("conv-b/D9:17", "conv-b/D11:26")
    assert issues_of(tiny, "conv-b.qa[0]") == ["evidence-split: 'D8:6; D9:17' -> ['D8:6', 'D9:17']"]
    assert issues_of(tiny, "conv-b.qa[1]") == ["evidence-normalised: 'D:11:26' -> 'D11:26'"]
    assert issues_of(tiny, "conv-b.qa[2]") == ["evidence-normalised: 'D30:05' -> 'D30:5'"]


def test_unresolvable_evidence_is_reported_and_left_out_of_the_denominator(tiny: Dataset) -> None:
    """'D10:19' (no such turn) is dropped from q3's evidence; the resolvable id stays."""
    question = next(q for q in tiny.questions if q.id == "conv-b/q3")
    assert question.evidence == ("conv-b/D8:5",)
    assert question.unresolved_evidence == ("D10:19",)
    assert issues_of(tiny, "conv-b.qa[3]") == ["evidence-unresolved: 'D10:19': no such turn"]


def test_questions_left_without_evidence_are_reported_and_not_scored(tiny: Dataset) -> None:
    """A bare 'D' and empty lists leave questions that are asked but not scored for recall."""
    by_id = {q.id: q for q in tiny.questions}
    assert not by_id["conv-b/q4"].scored and by_id["conv-b/q4"].unresolved_evidence == ("D",)
    assert not by_id["conv-b/q5"].scored and not by_id["conv-a/q3"].scored
    assert issues_of(tiny, "conv-b.qa[4]") == [
        "evidence-unresolved: 'D' is not a dialogue id",
        "no-evidence: asked, but not scored for recall",
    ]
    assert by_id["conv-a/q0"].scored


def test_dates_without_a_session_are_noted(tiny: Dataset) -> None:
    """conv-b's session_31_date_time has no turns: logged, ignored."""
    assert issues_of(tiny, "conv-b") == ["dates-without-session: 1 ignored: session_31"]


def test_categories_follow_the_data_coding_not_the_papers_prose(tiny: Dataset) -> None:
    """1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial; default asks 1-4."""
    by_id = {q.id: q.category for q in tiny.questions}
    assert by_id["conv-a/q0"] == "single-hop" and by_id["conv-a/q1"] == "temporal"
    assert by_id["conv-a/q2"] == "multi-hop" and by_id["conv-a/q3"] == "open-domain"
    assert by_id["conv-a/q4"] == "adversarial"
    selected = tiny.select(categories=[1, 2, 3, 4])
    assert "conv-a/q4" not in {q.id for q in selected.questions}
    assert len(selected.questions) == len(tiny.questions) - 1
    assert {q.id for q in tiny.select(categories=["temporal"]).questions} == {
        "conv-a/q1",
        "conv-b/q2",
    }


def test_a_question_sample_is_seeded_and_keeps_dataset_order(tiny: Dataset) -> None:
    """The same seed picks the same questions, in dataset order; another seed picks others."""
    picks = [tiny.select(limit=5, seed=s).questions for s in (1, 1, 2)]
    assert picks[0] == picks[1]
    order = [q.id for q in tiny.questions]
    assert [q.id for q in picks[0]] == sorted((q.id for q in picks[0]), key=order.index)
    assert {q.id for q in picks[0]} != {q.id for q in picks[2]}


def test_repair_evidence_handles_commas_and_duplicates() -> None:
    """'D1:1, D1:2' splits; an id listed twice is kept once and logged."""
    turns = {"c/D1:1": "a", "c/D1:2": "b"}
    ids, unresolved, issues = repair_evidence(["D1:1, D1:2", "D1:01"], "c", turns, "here")
    assert ids == ("c/D1:1", "c/D1:2")
    assert unresolved == ()
    assert [i.kind for i in issues] == [
        "evidence-split",
        "evidence-normalised",
        "evidence-duplicate",
    ]


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def _sample(**changes: Any) -> dict[str, Any]:
    sample: dict[str, Any] = json.loads(LOCOMO_TINY.read_text(encoding="utf-8"))[0]
    sample.update(changes)
    return sample


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("{not json", "not a readable LoCoMo JSON file"),
        ({"sample_id": "x"}, "a JSON list of conversations"),
        ([_sample(sample_id=7)], "sample_id: expected str"),
        ([{"sample_id": "x"}], "x: missing field 'conversation'"),
        (
            [
                _sample(
                    conversation={**_sample()["conversation"], "session_1_date_time": "yesterday"}
                )
            ],
            "session_1_date_time: 'yesterday' does not match",
        ),
        (
            [
                _sample(
                    conversation={**_sample()["conversation"], "session_2": [{"dia_id": "D2:1"}]}
                )
            ],
            "conv-a.session_2[0]: missing field 'speaker'",
        ),
        (
            [
                _sample(
                    conversation={
                        **_sample()["conversation"],
                        "session_2": [
                            {"speaker": "Ana", "dia_id": "D1:1", "text": "Again the first id."}
                        ],
                    }
                )
            ],
            "duplicate dia_id 'D1:1'",
        ),
        (
            [_sample(qa=[{"question": "q?", "evidence": [], "category": "four"}])],
            "category: expected int",
        ),
    ],
)
def test_malformed_files_raise_a_dataset_error_naming_the_place(
    tmp_path: Path, data: Any, needle: str
) -> None:
    """Every malformed input fails with a DatasetError that says where and what."""
    with pytest.raises(DatasetError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_locomo(_write(tmp_path, data))


def test_a_missing_file_is_a_dataset_error(tmp_path: Path) -> None:
    """A path that does not exist says so."""
    with pytest.raises(DatasetError, match="no such file"):
        load_locomo(tmp_path / "absent.json")

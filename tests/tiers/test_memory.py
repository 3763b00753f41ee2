"""The Memory record: validated at the boundary, immutable, timezone-aware."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from tiers import Memory, MemoryKind, MemoryValidationError, ScoredMemory


def make(**changes: object) -> Memory:
    fields: dict[str, object] = {"id": "m1", "content": "We moved billing to Postgres."}
    fields.update(changes)
    return Memory(**fields)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": "   "}, "id"),
        ({"id": " padded"}, "id"),
        ({"id": "bad\nid"}, "id"),
        ({"id": "x" * 257}, "id"),
        ({"content": ""}, "content"),
        ({"content": " \n\t"}, "content"),
        ({"importance": 1.5}, "importance"),
        ({"importance": -0.1}, "importance"),
        ({"importance": float("nan")}, "importance"),
        ({"metadata": {"when": datetime(2024, 1, 1)}}, "metadata"),
        ({"metadata": {"x": float("inf")}}, "metadata"),
        ({"metadata": ["not", "a", "mapping"]}, "metadata"),
        ({"kind": "thought"}, "kind"),
        ({"summary": "s" * 101}, "summary"),
        ({"summary": "two\nlines"}, "summary"),
        ({"session_id": ""}, "session_id"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_fields_are_rejected_naming_the_field(
    changes: dict[str, object], field: str
) -> None:
    """Every invalid field raises MemoryValidationError whose message starts with the field."""
    with pytest.raises(MemoryValidationError) as info:
        make(**changes)
    assert f"invalid memory: {field}:" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert info.value.errors and info.value.errors[0]["loc"][0] == field


def test_naive_timestamps_are_taken_as_utc() -> None:
    """Naive datetimes and offset-less ISO strings are UTC; aware ones keep their offset."""
    naive = make(timestamp=datetime(2024, 5, 8, 13, 56))
    assert naive.timestamp == datetime(2024, 5, 8, 13, 56, tzinfo=UTC)
    from_text = make(timestamp="2024-05-08T13:56:00")
    assert from_text.timestamp.tzinfo is not None
    plus_two = timezone(timedelta(hours=2))
    aware = make(timestamp=datetime(2024, 5, 8, 15, 56, tzinfo=plus_two))
    assert aware.timestamp.utcoffset() == timedelta(hours=2)
    assert aware.timestamp == naive.timestamp


def test_defaults_and_kinds() -> None:
    """Defaults are usable, kinds parse from strings, entities are cleaned and deduplicated."""
    memory = make(kind="tool", entities=["billing/invoice.py", " Priya ", "Priya", ""])
    assert memory.kind is MemoryKind.TOOL
    assert memory.entities == ("billing/invoice.py", "Priya")
    assert memory.importance == 0.5
    assert memory.timestamp.tzinfo is not None
    assert memory.session_id == "default"


def test_memory_is_immutable_and_does_not_share_caller_metadata() -> None:
    """Fields cannot be assigned, and later changes to the caller's dict do not leak in."""
    meta = {"files": ["a.py"], "nested": {"k": 1}}
    memory = make(metadata=meta)
    meta["files"].append("b.py")
    meta["nested"]["k"] = 2
    assert memory.metadata == {"files": ["a.py"], "nested": {"k": 1}}
    with pytest.raises(ValidationError):
        memory.content = "changed"  # type: ignore[misc]


def test_replace_validates_and_json_round_trips() -> None:
    """replace() re-validates; to_json/from_json give back an equal record."""
    memory = make(speaker="Dana", summary="Billing moves to Postgres", metadata={"n": 1})
    assert Memory.from_json(memory.to_json()) == memory
    assert memory.replace(content="new text").content == "new text"
    with pytest.raises(MemoryValidationError, match="importance"):
        memory.replace(importance=2)


def test_scored_memory_is_a_frozen_value() -> None:
    """ScoredMemory carries the memory, the tier and the score, and cannot be changed."""
    hit = ScoredMemory(make(), tier="warm", score=0.8, rank=0)
    assert hit.id == "m1"
    with pytest.raises(AttributeError):
        hit.score = 1.0  # type: ignore[misc]


def test_stored_records_read_back_equal_to_what_was_validated() -> None:
    """The archive's records are rebuilt without re-running validators: what comes back must be
    exactly the validated Memory, for every field shape; another shape is validated in full."""
    from datetime import timedelta, timezone

    from tiers.memory import _parse

    samples = [
        Memory(id="m1", content="plain"),
        Memory(
            id="m2",
            content="with everything",
            timestamp=datetime(2024, 5, 1, 9, 30, tzinfo=timezone(timedelta(hours=2))),
            session_id="s9",
            kind="response",
            speaker="Priya",
            summary="one line",
            entities=("Postgres", "Priya"),
            importance=0.9,
            metadata={"source": {"file": "a.md", "lines": [1, 2]}},
        ),
    ]
    for memory in samples:
        text = memory.to_json()
        again = _parse.__wrapped__(text)  # type: ignore[attr-defined]
        assert again == memory
        assert again.model_fields_set == Memory(**json.loads(text)).model_fields_set
        assert again.timestamp.utcoffset() == memory.timestamp.utcoffset()
        assert again.to_json() == text
    # an older layout (a field missing) or a record edited by hand is validated in full
    old = json.loads(samples[0].to_json())
    del old["importance"]
    assert _parse.__wrapped__(json.dumps(old)).importance == 0.5  # type: ignore[attr-defined]
    bad = json.loads(samples[0].to_json()) | {"kind": "nonsense"}
    with pytest.raises(MemoryValidationError):
        _parse.__wrapped__(json.dumps(bad))  # type: ignore[attr-defined]
    naive = json.loads(samples[0].to_json()) | {"timestamp": "2024-05-01T09:30:00"}
    assert _parse.__wrapped__(json.dumps(naive)).timestamp.tzinfo is not None  # type: ignore[attr-defined]

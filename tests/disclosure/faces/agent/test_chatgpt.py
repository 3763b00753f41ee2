"""A ChatGPT export (conversations.json, the documented format) flattened along its branch."""

from __future__ import annotations

from typing import Any

import pytest

from disclosure.faces.agent.chatgpt import export_entries
from disclosure.faces.agent.transcript import ShapeError
from tests.disclosure.faces.agent.shapes import branch, conversation


def test_a_conversation_reads_in_order_with_roles_times_and_stable_ids() -> None:
    conv = conversation("c1", "Billing", [("user", "Where does billing live?"),
                                         ("assistant", "In Postgres since March.")])  # fmt: skip
    entries = export_entries([conv])
    assert [(e.role, e.text) for e in entries] == [
        ("user", "Where does billing live?"), ("assistant", "In Postgres since March."),
    ]  # fmt: skip
    assert [e.id for e in entries] == ["chatgpt:c1:c1-m0", "chatgpt:c1:c1-m1"]
    assert {e.session_id for e in entries} == {"c1"}
    assert entries[0].timestamp == "2025-10-09T08:53:30+00:00"  # create_time 1760000010
    assert entries[1].metadata == {"source": "chatgpt", "conversation_id": "c1",
                                   "title": "Billing", "model": "gpt-4o"}  # fmt: skip
    assert export_entries([conv]) == entries


def test_only_the_chosen_branch_is_read() -> None:
    """A regenerated answer and an edited question leave branches: current_node picks one."""
    conv = conversation("c2", "Plans", [("user", "Pick a database"), ("assistant", "MySQL"),
                                        ("user", "Why?"), ("assistant", "Because.")])  # fmt: skip
    branch(conv, "c2-m0", "assistant", "PostgreSQL, for its JSON support", chosen=True)
    assert [e.text for e in export_entries([conv])] == [
        "Pick a database", "PostgreSQL, for its JSON support",
    ]  # fmt: skip
    conv["current_node"] = "c2-m3"  # the original branch
    assert [e.text for e in export_entries([conv])][-1] == "Because."
    del conv["current_node"]  # missing: the last-created leaf
    assert [e.text for e in export_entries([conv])][-1] == "Because."


def test_hidden_system_empty_and_reasoning_messages_are_left_out_tools_kept() -> None:
    conv = conversation("c3", "Code", [("user", "Plot it"), ("assistant", "Running code.")])
    node = branch(conv, "c3-m1", "tool", "figure saved", chosen=True)
    conv["mapping"][node]["message"]["author"]["name"] = "python"
    thought = branch(conv, node, "assistant", "", chosen=True)
    conv["mapping"][thought]["message"]["content"] = {"content_type": "thoughts", "thoughts": []}
    image = branch(conv, thought, "user", "", chosen=True)
    conv["mapping"][image]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-1"}, "this one"],
    }
    entries = export_entries(conv)  # one conversation object is taken too
    assert entries[2].metadata["tool"] == "python"
    assert [(e.role, e.speaker, e.text) for e in entries] == [
        ("user", "user", "Plot it"),
        ("assistant", "assistant", "Running code."),
        ("tool", "tool", "figure saved"),
        ("user", "user", "[image]\nthis one"),
    ]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"conversations": []}, "a JSON array of conversations"),
        ([{"id": "x", "title": "t"}], "conversation 0: not a conversation: it has no 'mapping'"),
        ([{"mapping": {}}], "conversation 0: a conversation without an 'id'"),
    ],
)
def test_another_shape_is_refused_with_where_and_why(data: Any, reason: str) -> None:
    with pytest.raises(ShapeError, match=reason):
        export_entries(data)


def test_a_looping_tree_is_refused() -> None:
    conv = conversation("c4", "Loop", [("user", "a"), ("assistant", "b")])
    conv["mapping"]["sys"]["parent"] = "c4-m1"
    with pytest.raises(ShapeError, match=r"conversation 0 \(c4\): its message tree loops"):
        export_entries([conv])

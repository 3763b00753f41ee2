"""Claude Code transcripts read into prompts, replies and tool observations."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from disclosure.faces.agent.transcript import ShapeError, read_turn, transcript_entries
from tests.disclosure.faces.agent.shapes import PROJECT, SESSION, Transcript


def session() -> tuple[Transcript, str]:
    t = Transcript()
    t.noise()
    t.prompt("Where is the deploy codename kept?", prompt_id="p1")
    read = {"type": "text", "file": {"filePath": f"{PROJECT}/notes.txt",
                                     "content": "The deploy codename is BLUEHERON.\n"}}  # fmt: skip
    tool_use_id = t.tool("Read", {"file_path": f"{PROJECT}/notes.txt"}, read,
                         "1\tThe deploy codename is BLUEHERON.\n")  # fmt: skip
    t.reply("It is BLUEHERON, in notes.txt.", message_id="msg_1")
    return t, tool_use_id


def test_prompts_replies_and_tool_uses_in_order_with_stable_ids() -> None:
    """Each memory keeps its session, role, time and project; ids come from the agent's own."""
    t, tool_use_id = session()
    entries = transcript_entries(t.text().splitlines())
    assert [(e.role, e.speaker) for e in entries] == [
        ("user", "user"), ("tool", None), ("assistant", "assistant"),
    ]  # fmt: skip
    prompt, tool, reply = entries
    asked = next(line for line in t.lines if line.get("promptId") == "p1")
    assert prompt.id == f"cc:{SESSION}:{asked['uuid']}"
    assert tool.id == f"cc:{SESSION}:tool:{tool_use_id}"
    assert reply.id == f"cc:{SESSION}:msg_1"
    assert tool.text == "Read notes.txt\nThe deploy codename is BLUEHERON.\n"  # toolUseResult
    assert {e.session_id for e in entries} == {SESSION}
    assert prompt.timestamp == asked["timestamp"]
    assert all(e.metadata["cwd"] == PROJECT for e in entries)
    assert transcript_entries(t.text().splitlines()) == entries  # the same again


def test_one_messages_text_blocks_are_one_reply_and_meta_lines_are_skipped() -> None:
    """The agent writes one line per content block: a message's texts join; its expanded
    command bodies (isMeta) and local command output are not prompts."""
    t = Transcript()
    t.prompt("<command-message>mem-search</command-message>\n<command-name>/mem-search"
             "</command-name>\n<command-args>billing export</command-args>")  # fmt: skip
    t.prompt("Show the answer the hook gave.", isMeta=True)
    t.prompt("<local-command-stdout>ok</local-command-stdout>")
    t.reply("First part.", message_id="msg_7")
    t.reply("Second part.", message_id="msg_7")
    entries = transcript_entries(t.text().splitlines())
    assert [e.text for e in entries] == [
        "/mem-search billing export",
        "First part.\n\nSecond part.",
    ]


def test_sidechains_are_kept_and_marked() -> None:
    t = Transcript()
    t.prompt("Explore the repository")
    t.reply("Subagent findings.", isSidechain=True, agentId="a1b2")
    entries = transcript_entries(t.text().splitlines())
    assert entries[1].metadata["sidechain"] is True and entries[1].metadata["agent_id"] == "a1b2"
    assert "sidechain" not in entries[0].metadata


def test_a_tool_use_whose_result_never_came_is_kept_without_one() -> None:
    t = Transcript()
    t.prompt("run it")
    t.lines.append({**t.lines[0], "type": "assistant", "uuid": "u2", "message": {
        "id": "msg_2", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_x", "name": "Bash",
                     "input": {"command": "make test"}}]}})  # fmt: skip
    entries = transcript_entries(t.text().splitlines())
    assert entries[-1].text == "Bash make test" and entries[-1].id.endswith(":tool:toolu_x")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: a list, not a JSON object"),
        ('{"id": "m1", "content": "a memory"}', "line 2: a JSON object without a 'type'"),
        ('{"type": "user", "sessionId": "s"}', "line 2: a user record without message.content"),
        ('{"type": "assistant", "message": {"content": "x"}}', "line 2: a assistant record "
         "without a sessionId"),
    ],
)  # fmt: skip
def test_a_line_of_another_shape_is_refused_with_its_number_and_reason(
    line: str, reason: str
) -> None:
    t = Transcript()
    t.prompt("hello")
    with pytest.raises(ShapeError, match=reason):
        transcript_entries([*t.text().splitlines(), line])


def test_a_file_of_other_records_only_is_not_a_transcript() -> None:
    with pytest.raises(ShapeError, match="holds no transcript record"):
        transcript_entries([])


def test_read_turn_takes_the_last_turn_from_the_end_of_a_growing_file(tmp_path: Path) -> None:
    """The end-of-turn hook reads the turn of its prompt id (a cut first line is skipped)."""
    t, _ = session()
    t.prompt("And when does it ship?", prompt_id="p2")
    t.reply("On Friday.", message_id="msg_2")
    path = tmp_path / "s.jsonl"
    path.write_text('{"cut": "half a line' + "\n" + t.text(), encoding="utf-8")
    turn = read_turn(path, "p2")
    assert [e.text for e in turn] == ["And when does it ship?", "On Friday."]
    first = read_turn(path, "p1")  # an earlier prompt id: from its prompt to the end
    assert [e.role for e in first] == ["user", "tool", "assistant", "user", "assistant"]
    assert [e.text for e in read_turn(path, None)] == ["And when does it ship?", "On Friday."]
    # a prompt id the file does not have (an older agent writes none): the last prompt's turn
    assert [e.text for e in read_turn(path, "unknown")] == ["And when does it ship?", "On Friday."]


def test_the_stop_hook_waits_a_moment_for_the_reply_to_reach_the_transcript() -> None:
    """The agent can fire Stop before its transcript holds the reply: the hook reads the turn
    again until the reply the Stop input carries is in it (so it is stored under the id an
    import of the transcript gives it), and gives up within its wait when it never comes."""
    from types import SimpleNamespace

    from disclosure.faces.agent.hooks import TRANSCRIPT_WAIT, _await_reply

    prompt = SimpleNamespace(role="user", text="Which cluster?")
    reply = SimpleNamespace(role="assistant", text="The eu-west cluster.")
    reads: list[int] = []

    def late(path: str, prompt_id: str | None) -> list[SimpleNamespace]:
        reads.append(1)
        return [prompt, reply] if len(reads) >= 3 else [prompt]

    hook = SimpleNamespace(deadline=SimpleNamespace(left=lambda: 0.9))
    assert _await_reply(hook, late, "t.jsonl", "p1", "The eu-west cluster.\n") == [prompt, reply]
    assert len(reads) == 3

    reads.clear()
    started = time.monotonic()
    assert _await_reply(hook, lambda p, i: [prompt], "t.jsonl", "p1", "never written") == [prompt]
    assert TRANSCRIPT_WAIT <= time.monotonic() - started < 5  # it waited, and gave up

    reads.clear()
    assert _await_reply(hook, late, "t.jsonl", "p1", None) == [prompt]  # nothing to wait for
    assert len(reads) == 1

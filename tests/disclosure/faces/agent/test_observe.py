"""What a tool use becomes in memory: tool, target, an excerpt of the result."""

from __future__ import annotations

from disclosure.faces.agent.observe import (
    excerpt,
    observation,
    observation_id,
    result_text,
    skipped,
    target_of,
)
from tiers.memory import MemoryKind

PROJECT = "/home/dana/billing"


def test_a_read_names_the_file_relative_to_the_project_and_keeps_its_text() -> None:
    """A small file's content is kept whole, under a first line naming the tool and file."""
    response = {"type": "text", "file": {"filePath": f"{PROJECT}/src/app.py", "content": "x = 1\n"}}
    text, metadata = observation(
        "Read", {"file_path": f"{PROJECT}/src/app.py"}, response, cwd=PROJECT
    )
    assert text == "Read src/app.py\nx = 1\n"
    assert metadata == {
        "source": "claude-code",
        "tool": "Read",
        "target": "src/app.py",
        "result_chars": 6,
        "excerpted": False,
    }


def test_a_huge_read_keeps_its_head_and_says_how_much_was_left_out() -> None:
    """A 200 KB file is cut to about a thousand characters, mostly its beginning."""
    lines = [f"line {n}: " + "lorem ipsum " * 8 for n in range(2000)]
    content = "\n".join(lines)
    response = {"file": {"content": content}}
    text, metadata = observation("Read", {"file_path": "/elsewhere/big.txt"}, response, cwd=PROJECT)
    assert text.startswith("Read /elsewhere/big.txt\nline 0: ")
    assert len(text) < 1500 and metadata["excerpted"] and metadata["result_chars"] == len(content)
    omitted = int(text.split("[... ")[1].split(" characters")[0].replace(",", ""))
    kept = text.split("\n", 1)[1].replace(f"\n[... {omitted:,} characters left out ...]\n", "")
    assert omitted + len(kept) == len(content)
    assert "line 1999" in text  # the tail share: the end of the file is there too


def test_long_command_output_keeps_head_and_tail_with_stderr() -> None:
    """A failing build's last lines (where the error is) survive the excerpt."""
    stdout = "\n".join(f"compiling module {n}" for n in range(3000))
    response = {"stdout": stdout, "stderr": "error: linker failed", "interrupted": False}
    text, metadata = observation("Bash", {"command": "make all"}, response)
    assert text.startswith("Bash make all\ncompiling module 0")
    assert text.rstrip().endswith("error: linker failed")
    assert metadata["excerpted"] and len(text) < 1400


def test_edits_searches_and_todos_read_as_what_changed() -> None:
    """An edit keeps its diff lines, a glob its file names, a todo list its states."""
    edit = {"structuredPatch": [{"lines": [" keep", "-old()", "+new()"]}], "filePath": "a.py"}
    assert result_text("Edit", edit) == "-old()\n+new()"
    assert result_text("Glob", {"filenames": ["a.py", "b.py"], "numFiles": 2}) == "a.py\nb.py"
    todos = {
        "todos": [
            {"content": "write the parser", "status": "completed"},
            {"content": "benchmark it", "status": "in_progress"},
            {"content": "document it", "status": "pending"},
        ]
    }
    text, _ = observation("TodoWrite", todos, {"oldTodos": [], "newTodos": []})
    assert text.splitlines()[1:] == ["[x] write the parser", "[~] benchmark it", "[ ] document it"]
    assert (
        target_of("Grep", {"pattern": "TODO", "path": f"{PROJECT}/src"}, PROJECT) == "'TODO' in src"
    )
    assert (
        target_of("WebFetch", {"url": "https://example.org/a", "prompt": "x"})
        == "https://example.org/a"
    )


def test_a_result_given_as_content_blocks_reads_as_text() -> None:
    """A tool_result's blocks (as a transcript has them) give their text."""
    blocks = [{"type": "text", "text": "first"}, {"type": "image", "source": {}}]
    assert result_text("mcp__x__y", blocks) == "first\n[image]"
    assert result_text("Task", {"content": [{"type": "text", "text": "done"}]}) == "done"


def test_bookkeeping_and_this_memorys_own_tools_are_not_observed() -> None:
    assert skipped("ToolSearch") and skipped("mcp__tiered-disclosure__search")
    assert not skipped("Read") and not skipped("mcp__github__search")


def test_observation_ids_are_stable_and_named_by_the_tool_use() -> None:
    """The agent's tool use id names the memory; without one, a hash of the call does."""
    assert observation_id("s1", "toolu_9", "Read", {}) == "cc:s1:tool:toolu_9"
    first = observation_id("s1", None, "Read", {"file_path": "a"})
    assert first == observation_id("s1", None, "Read", {"file_path": "a"})
    assert first != observation_id("s1", None, "Read", {"file_path": "b"})
    assert MemoryKind("observation") is MemoryKind.OBSERVATION


def test_excerpt_leaves_short_text_alone_and_respects_the_limit() -> None:
    assert excerpt("short", 100) == "short"
    cut = excerpt("a" * 10_000, 500, 0.5)
    assert cut.startswith("a" * 250) and cut.endswith("a" * 250) and "9,500 characters" in cut

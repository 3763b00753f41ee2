"""The mem0-style facade: add, search, get, get_all, update, delete, delete_all, history."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from disclosure import ControllerPool, Profile
from disclosure.faces.memories import Memories
from disclosure.storage.namespaces import namespace_dir
from tests.disclosure.conftest import NOW
from tiers.errors import InvalidInputError, MemoryNotFoundError
from tiers.schema import ARCHIVE_FILE

CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I moved to Busan last spring."},
    {"role": "assistant", "content": "Busan has great seafood; noted that you live there now."},
]


@pytest.fixture
def memories(lean_profile: Profile, root: Path) -> Iterator[Memories]:
    with ControllerPool(lean_profile, root=root) as pool:
        yield Memories(pool)


def test_add_derives_ids_and_stores_one_memory_per_turn(memories: Memories) -> None:
    """System instructions are skipped; user and assistant turns become memories with ids
    derived from content and time; the same call again changes nothing."""
    added = memories.add(CHAT, user_id="alice", timestamp=NOW)
    assert [r.event for r in added.results] == ["ADD", "ADD"]
    assert added.skipped == 1
    assert [r.kind.value for r in added.results] == ["prompt", "response"]
    assert all(r.id.startswith("m-") and r.citation.startswith("mem:") for r in added.results)
    again = memories.add(CHAT, user_id="alice", timestamp=NOW)
    assert [r.event for r in again.results] == ["NONE", "NONE"]
    assert [r.id for r in again.results] == [r.id for r in added.results]
    later = memories.add(CHAT, user_id="alice", timestamp=NOW + timedelta(days=1))
    assert {r.id for r in later.results}.isdisjoint(r.id for r in added.results)


def test_a_text_is_a_note_and_metadata_is_kept(memories: Memories) -> None:
    added = memories.add("Alice is allergic to peanuts.", user_id="alice", metadata={"k": 1})
    (note,) = added.results
    assert note.kind.value == "insight"
    assert note.metadata["k"] == 1
    assert memories.get(note.citation, user_id="alice") == memories.get(note.id, user_id="alice")


def test_private_messages_are_counted_not_stored(memories: Memories) -> None:
    added = memories.add(
        [{"role": "user", "content": "<private>my PIN is 4821</private>"}], user_id="alice"
    )
    assert added.results == [] and added.private == 1
    assert memories.get_all(user_id="alice").total == 0


def test_search_finds_and_users_are_apart(memories: Memories) -> None:
    """alice's memories answer alice's search; bob sees none of them."""
    memories.add(CHAT, user_id="alice", timestamp=NOW)
    memories.add("Bob's cat is called Miso.", user_id="bob", timestamp=NOW)
    hits = memories.search("where does she live, Busan?", user_id="alice", limit=3)
    assert hits and "Busan" in hits[0].content
    assert 0.0 <= hits[0].score <= 1.0
    assert all("Miso" not in h.content for h in hits)
    assert all("Busan" not in h.content for h in memories.search("Busan", user_id="bob"))
    with pytest.raises(InvalidInputError, match="user_id is required"):
        memories.search("Busan")


def test_get_all_pages_in_time_order(memories: Memories) -> None:
    for day in range(5):
        memories.add(f"note number {day}", user_id="alice", timestamp=NOW + timedelta(days=day))
    first = memories.get_all(user_id="alice", limit=2)
    assert first.total == 5 and len(first.items) == 2 and first.next_cursor
    seen = [m.content for m in first.items]
    cursor = first.next_cursor
    while cursor:
        page = memories.get_all(user_id="alice", limit=2, cursor=cursor)
        seen += [m.content for m in page.items]
        cursor = page.next_cursor
    assert seen == [f"note number {d}" for d in range(5)]
    with pytest.raises(InvalidInputError, match="cursor"):
        memories.get_all(user_id="alice", cursor="not-a-cursor")
    with pytest.raises(InvalidInputError, match="limit"):
        memories.get_all(user_id="alice", limit=0)


def test_update_keeps_history_and_delete_erases_it(memories: Memories) -> None:
    (note,) = memories.add("Alice lives in Seoul.", user_id="alice", timestamp=NOW).results
    updated = memories.update(note.citation, "Alice lives in Busan.", user_id="alice")
    assert updated.content == "Alice lives in Busan." and updated.id == note.id
    memories.update(note.id, user_id="alice", metadata={"source": "correction"})
    history = memories.history(note.id, user_id="alice")
    assert [v.memory.content for v in history] == [
        "Alice lives in Seoul.",
        "Alice lives in Busan.",
        "Alice lives in Busan.",
    ]
    assert [v.current for v in history] == [False, False, True]
    assert history[-1].memory.metadata["source"] == "correction"
    assert memories.search("Seoul", user_id="alice") == [] or all(
        "Seoul" not in h.content for h in memories.search("Seoul", user_id="alice")
    )
    deleted = memories.delete(note.citation, user_id="alice")
    assert deleted.ids == [note.id]
    assert memories.get(note.id, user_id="alice") is None
    with pytest.raises(MemoryNotFoundError):
        memories.history(note.id, user_id="alice")
    with pytest.raises(MemoryNotFoundError):
        memories.delete(note.id, user_id="alice")


def test_delete_all_of_a_session_or_of_a_user(memories: Memories) -> None:
    memories.add("first", user_id="alice", session_id="s1", timestamp=NOW)
    memories.add("second", user_id="alice", session_id="s2", timestamp=NOW)
    memories.add("bob's", user_id="bob", session_id="s1", timestamp=NOW)
    assert memories.delete_all(user_id="alice", session_id="s1").count == 1
    assert [m.content for m in memories.get_all(user_id="alice").items] == ["second"]
    assert memories.delete_all(user_id="alice").count == 1
    assert memories.get_all(user_id="alice").total == 0
    assert memories.get_all(user_id="bob").total == 1


def test_versions_survive_reopening_and_an_old_archive_is_upgraded(
    lean_profile: Profile, root: Path
) -> None:
    """History is on disk; an archive of the schema before versions opens and gains them."""
    with ControllerPool(lean_profile, root=root) as pool:
        facade = Memories(pool)
        (note,) = facade.add("v1", user_id="alice", timestamp=NOW).results
        facade.update(note.id, "v2", user_id="alice")
        ns = pool.namespace(user="alice")
    archive = namespace_dir(root, ns) / ARCHIVE_FILE
    with Memories.from_profile(lean_profile, root=root) as reopened:
        assert [v.memory.content for v in reopened.history(note.id, user_id="alice")] == [
            "v1",
            "v2",
        ]
    with sqlite3.connect(archive) as conn:  # make it an archive of schema 1
        conn.execute("DROP TABLE memory_versions")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    with Memories.from_profile(lean_profile, root=root) as upgraded:
        assert [v.memory.content for v in upgraded.history(note.id, user_id="alice")] == ["v2"]
        upgraded.update(note.id, "v3", user_id="alice")
        assert len(upgraded.history(note.id, user_id="alice")) == 2


def test_bad_input_is_named(memories: Memories) -> None:
    with pytest.raises(InvalidInputError, match="list of messages"):
        memories.add(42, user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"messages -> 0"):
        memories.add(["hello"], user_id="alice")  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="update needs"):
        memories.update("x", user_id="alice")

"""show(): one memory in full, rendered once and cached until the memory or its session changes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from disclosure import Memory
from disclosure.core.controller import DisclosureController

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)


def turn(memory_id: str, content: str, minute: int) -> Memory:
    return Memory(
        id=memory_id,
        content=content,
        session_id="s1",
        speaker="Dana",
        timestamp=NOW.replace(minute=minute),
    )


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[DisclosureController]:
    with DisclosureController.from_profile("default", data_dir=tmp_path / "data") as c:
        c.ingest(
            [
                turn("t1", "Billing moves from SQLite to Postgres 16.", 0),
                turn("t2", "Priya owns the migration and the rollback plan.", 1),
            ]
        )
        yield c


def detail_stats(c: DisclosureController) -> dict[str, int]:
    return dict(c.stats()["caches"]["detail"])


def test_a_second_show_is_a_cache_hit(controller: DisclosureController) -> None:
    """The same memory shown twice is rendered once: the second answer comes from the cache."""
    first = controller.show("t1")
    assert "Postgres 16" in first
    assert detail_stats(controller)["hits"] == 0
    assert controller.show("t1") == first
    assert detail_stats(controller)["hits"] == 1


def test_a_reingest_with_new_content_shows_the_new_text(controller: DisclosureController) -> None:
    """Replacing a memory's content deletes its cached detail: show answers the new text."""
    assert "Postgres 16" in controller.show("t1")
    controller.ingest([turn("t1", "Billing stays on SQLite after all; Postgres is dropped.", 0)])
    shown = controller.show("t1")
    assert "stays on SQLite" in shown and "Postgres 16" not in shown


def test_a_new_neighbour_in_the_session_reaches_the_detail(
    controller: DisclosureController,
) -> None:
    """The detail names the memory's neighbours: a turn added to its session shows up."""
    before = controller.show("t2")
    controller.ingest([turn("t3", "Marco reviews the schema on Friday.", 2)])
    citation = "mem:" + controller.store.citation_of(["t3"])["t3"]
    assert citation not in before
    assert citation in controller.show("t2")


def test_forgetting_a_memory_removes_its_cached_detail(controller: DisclosureController) -> None:
    """Nothing kept that a user asked to forget: the rendered text leaves the cache's disk."""
    controller.show("t1")
    assert detail_stats(controller)["entries"] == 1
    controller.forget(ids=["t1"])
    assert detail_stats(controller)["entries"] == 0

"""The persistent outbox: queueing with the archive, exact-version acks, backoff, persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiers.contract import corpus
from tiers.cold import ColdArchive, content_sha
from tiers.config import OutboxConfig
from tiers.outbox import Outbox


class Clock:
    """A settable wall clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def archive(tmp_path: Path) -> ColdArchive:
    a = ColdArchive(tmp_path)
    a.add(corpus())
    return a


def test_items_queue_with_the_archive_transaction(archive: ColdArchive) -> None:
    """Queued work commits or rolls back with the archive change that caused it."""
    box = Outbox(archive)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c0", content_sha(corpus()[0].content))])
    with pytest.raises(RuntimeError), archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c1", "x")])
        raise RuntimeError("abort")
    assert [i.id for i in box.items()] == ["c0"]
    assert box.pending() == 1


def test_backoff_doubles_up_to_the_cap(archive: ColdArchive) -> None:
    """Delays grow 1, 2, 4, ... seconds and stop at retry_max_seconds."""
    box = Outbox(archive, OutboxConfig(retry_base_seconds=1, retry_max_seconds=10))
    assert [box.delay(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert box.delay(10_000) == 10


def test_failure_schedules_the_retry_and_keeps_the_error(archive: ColdArchive) -> None:
    """A failed item is not due until its backoff passes; attempts and error are kept."""
    clock = Clock()
    box = Outbox(archive, OutboxConfig(retry_base_seconds=4), clock=clock)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c0", "v1"), ("c1", "v1")])
    items = box.due(10)
    assert [i.id for i in items] == ["c0", "c1"]
    box.failed(items[:1], "TierUnavailableError: chroma down")
    assert [i.id for i in box.due(10)] == ["c1"]
    assert box.seconds_until_due() == 0.0
    box.succeeded(box.due(10))
    assert box.seconds_until_due() == pytest.approx(4.0)
    clock.now += 4.0
    (again,) = box.due(10)
    assert (again.id, again.attempts, again.last_error) == (
        "c0",
        1,
        "TierUnavailableError: chroma down",
    )
    assert box.due(10, ignore_schedule=True) == [again]


def test_an_ack_for_an_older_version_keeps_the_newer_one(archive: ColdArchive) -> None:
    """Embedding v1 while v2 was queued removes nothing: v2 stays pending."""
    box = Outbox(archive)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c0", "v1")])
    (old,) = box.due(1)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c0", "v2")])
    box.succeeded([old])
    (left,) = box.items()
    assert (left.id, left.content_sha, left.attempts) == ("c0", "v2", 0)


def test_a_delete_replaces_a_queued_upsert(archive: ColdArchive) -> None:
    """Forgetting a memory whose embedding is queued leaves only the deletion."""
    box = Outbox(archive)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("c0", "v1")])
        box.enqueue_deletes(txn, ["c0"])
    (item,) = box.items()
    assert (item.op, item.content_sha) == ("delete", None)


def test_the_queue_survives_reopening(tmp_path: Path) -> None:
    """Queued items, attempts and errors are on disk, not in memory."""
    archive = ColdArchive(tmp_path)
    box = Outbox(archive)
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [("a", "1"), ("b", "2")])
    box.failed(box.due(1), "boom")
    archive.close()
    reopened = Outbox(ColdArchive(tmp_path))
    assert {(i.id, i.attempts) for i in reopened.items()} == {("a", 1), ("b", 0)}


def test_requeue_unindexed_finds_what_was_never_queued(archive: ColdArchive) -> None:
    """Archived memories not yet in the warm index are queued once, not twice."""
    box = Outbox(archive)
    assert box.requeue_unindexed() == len(corpus())
    assert box.requeue_unindexed() == 0
    assert box.pending() == len(corpus())

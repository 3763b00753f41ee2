"""A dead warm backend loses nothing: items stay queued, visible, retried, and survive restarts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.tiers.contract import corpus
from tests.tiers.failing import DownWarm
from tiers.config import OutboxConfig, TiersConfig
from tiers.errors import TierUnavailableError
from tiers.lifecycle import WarmIndex
from tiers.store import TieredStore

FAST_RETRY = OutboxConfig(retry_base_seconds=0.05, retry_max_seconds=0.2)

pytestmark = pytest.mark.usefixtures("backend")  # each test on both archive backends


def config(drain: str = "inline") -> TiersConfig:
    return TiersConfig(outbox=FAST_RETRY.model_copy(update={"drain": drain}))


def test_the_fake_is_a_warm_index() -> None:
    """The failing fake satisfies the protocol the store needs from a warm tier."""
    assert isinstance(DownWarm(), WarmIndex)


def test_ingest_succeeds_and_queues_when_the_warm_tier_is_down(tmp_path: Path) -> None:
    """Archive and hot set take the batch; every embedding stays pending with its error."""
    warm = DownWarm()
    with TieredStore(tmp_path, config(), warm=warm) as store:
        report = store.ingest(corpus())
        assert report.added == 6
        assert store.count() == 6 and store.hot.count() == 6
        assert store.pending() == 6
        head = store.pending_items()
        assert {i.attempts for i in head} == {1}
        assert all("unreachable" in (i.last_error or "") for i in head)
        assert warm.calls == 1  # one batch, one failure: the pass stops there
        assert store.search("cold", "invoice totals Decimal", 1)[0].id == "c4"
        with pytest.raises(TierUnavailableError):
            store.search("warm", "invoice", 3)


def test_flush_retries_with_backoff_until_its_timeout(tmp_path: Path) -> None:
    """flush tries at once, then at each retry time, and returns what is still pending."""
    warm = DownWarm()
    with TieredStore(tmp_path, config("manual"), warm=warm) as store:
        store.ingest(corpus())
        assert warm.calls == 0  # manual: nothing drains during ingest
        assert store.flush(timeout=0) == 6
        assert warm.calls == 1
        started = time.monotonic()
        assert store.flush(timeout=0.5) == 6
        assert time.monotonic() - started < 5
        assert warm.calls >= 3  # several spaced attempts within half a second
        assert max(i.attempts for i in store.pending_items()) >= 3


def test_pending_work_survives_reopening(tmp_path: Path) -> None:
    """Queued embeddings and deletions are still queued after a restart, once each."""
    with TieredStore(tmp_path, config(), warm=DownWarm()) as store:
        store.ingest(corpus())
        store.forget(["c1"])
    with TieredStore(tmp_path, config("manual"), warm=DownWarm()) as store:
        items = {i.id: i.op for i in store.pending_items()}
        assert items == {
            "c0": "upsert",
            "c1": "delete",
            "c2": "upsert",
            "c3": "upsert",
            "c4": "upsert",
            "c5": "upsert",
        }
        assert store.pending() == 6
    with TieredStore(tmp_path, config("manual")) as without_warm:
        assert without_warm.pending() == 6  # still kept for the next warm tier


def test_forget_while_the_warm_tier_is_down(tmp_path: Path) -> None:
    """The deletion is queued; no tier returns the memory meanwhile."""
    with TieredStore(tmp_path, config(), warm=DownWarm()) as store:
        store.ingest(corpus())
        report = store.forget(["c4"])
        assert report.ids == ("c4",)
        assert [(i.id, i.op) for i in store.pending_items() if i.id == "c4"] == [("c4", "delete")]
        assert store.get(["c4"]) == []
        for tier in ("hot", "cold"):
            assert all(h.id != "c4" for h in store.search(tier, "invoice totals Decimal", 6))  # type: ignore[arg-type]


def test_background_worker_keeps_retrying_and_stops_on_close(tmp_path: Path) -> None:
    """With drain=background, ingest returns at once and the worker retries on schedule."""
    warm = DownWarm()
    store = TieredStore(tmp_path, config("background"), warm=warm)
    store.ingest(corpus())
    deadline = time.monotonic() + 10
    while warm.calls < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert warm.calls >= 3
    assert store.pending() == 6
    started = time.monotonic()
    store.close()
    assert time.monotonic() - started < 5
    calls = warm.calls
    time.sleep(0.3)
    assert warm.calls == calls  # the worker is gone

"""The store with the real warm tier (ChromaDB + MiniLM): sync, recovery, lifecycle, forgetting."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.tiers.contract import corpus
from tiers.base import Embedder
from tiers.config import LifecycleConfig, OutboxConfig, TiersConfig, WarmConfig
from tiers.errors import TierUnavailableError
from tiers.memory import Memory, ScoredMemory
from tiers.store import TieredStore
from tiers.warm import WarmTier

FAST = OutboxConfig(retry_base_seconds=0.01, retry_max_seconds=0.05)


def config(**sections: Any) -> TiersConfig:
    return TiersConfig(outbox=sections.pop("outbox", FAST), **sections)


class FlakyWarm:
    """The real warm tier behind a switch that makes its writes fail (a backend outage)."""

    name = "warm"

    def __init__(self, inner: WarmTier) -> None:
        self.inner = inner
        self.embedder: Embedder = inner.embedder
        self.down = True
        self.failures = 0

    def _check(self) -> None:
        if self.down:
            self.failures += 1
            raise TierUnavailableError("chroma unreachable (simulated outage)")

    def add(self, memories: Sequence[Memory], *, contexts: Mapping[str, str] | None = None) -> None:
        self._check()
        self.inner.add(memories, contexts=contexts)

    def forget(self, ids: Sequence[str]) -> int:
        self._check()
        return self.inner.forget(ids)

    def search(self, query: str, k: int) -> list[ScoredMemory]:
        return self.inner.search(query, k)

    def get(self, ids: Sequence[str]) -> list[Memory]:
        return self.inner.get(ids)

    def count(self) -> int:
        return self.inner.count()

    def contains(self, ids: Sequence[str]) -> set[str]:
        return self.inner.contains(ids)

    def touch(self, ids: Sequence[str]) -> None:
        self.inner.touch(ids)

    def evict_least_used(self, n: int) -> list[str]:
        return self.inner.evict_least_used(n)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def store(tmp_path: Path, st_embedder: Embedder) -> Iterator[TieredStore]:
    with TieredStore(tmp_path, config(), embedder=st_embedder) as s:
        yield s


def test_ingest_embeds_inline_and_warm_hits_come_from_the_archive(store: TieredStore) -> None:
    """After ingest the warm index holds every memory; a paraphrase finds the right one."""
    store.ingest(corpus())
    assert store.pending() == 0
    assert store.stats().warm == len(corpus())
    hits = store.search("warm", "money amounts were rounded wrongly because of float types", 3)
    assert hits[0].id == "c4" and hits[0].tier == "warm"
    assert 0.0 <= hits[-1].score <= hits[0].score <= 1.0


def test_a_replaced_memory_is_never_found_by_its_old_text(
    tmp_path: Path, st_embedder: Embedder
) -> None:
    """A stale vector's hit is dropped until the new version is embedded, then that is found."""
    with TieredStore(
        tmp_path, config(outbox=FAST.model_copy(update={"drain": "manual"})), embedder=st_embedder
    ) as store:
        store.ingest(corpus())
        store.flush()
        store.ingest([corpus()[4].replace(content="The team lunch moved to Thursday at noon.")])
        assert all(
            h.id != "c4" for h in store.search("warm", "invoice totals drifted by a cent", 6)
        )
        assert store.flush() == 0
        hits = store.search("warm", "when is the team lunch", 1)
        assert hits[0].id == "c4" and "Thursday" in hits[0].memory.content


@pytest.mark.usefixtures("backend")  # the outbox on both archive backends
def test_an_outage_loses_nothing_and_recovery_drains_everything(
    tmp_path: Path, st_embedder: Embedder
) -> None:
    """While Chroma is down everything queues (forgets too); once it is back, flush applies all."""
    warm = FlakyWarm(WarmTier(tmp_path / "warm", WarmConfig(), st_embedder))
    with TieredStore(tmp_path, config(), warm=warm) as store:
        store.ingest(corpus())
        store.forget(["c2"])
        assert store.pending() == 6 and warm.failures >= 2
        warm.down = False
        assert store.flush(timeout=30) == 0
        assert warm.inner.contains([m.id for m in corpus()]) == {"c0", "c1", "c3", "c4", "c5"}
        assert store.stats().cold_only == 0


def test_reopening_requeues_what_chroma_lost(tmp_path: Path, st_embedder: Embedder) -> None:
    """Vectors missing from Chroma (a deleted index) are re-queued on open and re-embedded."""
    with TieredStore(tmp_path, config(), embedder=st_embedder) as store:
        store.ingest(corpus())
    warm = WarmTier(tmp_path / "warm", WarmConfig(), st_embedder)
    warm.forget(["c0", "c1"])  # the index loses two vectors behind the archive's back
    warm.close()
    with TieredStore(
        tmp_path, config(outbox=FAST.model_copy(update={"drain": "manual"})), embedder=st_embedder
    ) as store:
        assert store.pending() == 2
        assert store.flush() == 0
        assert store.stats().warm == len(corpus())


def test_warm_capacity_leaves_least_used_cold_only_and_use_brings_them_back(
    tmp_path: Path, st_embedder: Embedder
) -> None:
    """Beyond max_items the least-used vectors leave Chroma; a cold-only one used twice returns."""
    tiers = config(
        warm=WarmConfig(max_items=4),
        lifecycle=LifecycleConfig(cold_to_warm_uses=2, warm_to_hot_uses=99),
    )
    with TieredStore(tmp_path, tiers, embedder=st_embedder) as store:
        store.ingest(corpus()[:4])
        store.record_use(["c0", "c1", "c2", "c3"])
        store.ingest(corpus()[4:])
        stats = store.stats()
        assert (stats.warm, stats.cold_only, stats.cold) == (4, 2, 6)
        cold_only = set(m.id for m in corpus()) - store.warm.contains([m.id for m in corpus()])  # type: ignore[union-attr]
        assert cold_only == {"c4", "c5"}  # the new, never used ones
        assert store.search("cold", "rate limiter fifty messages", 1)[0].id == "c5"
        store.record_use(["c5"])
        assert "c5" not in store.warm.contains(["c5"])  # type: ignore[union-attr]
        store.record_use(["c5"])
        assert "c5" in store.warm.contains(["c5"])  # type: ignore[union-attr]
        assert store.stats().warm == 4  # someone else, least used, made room


@pytest.mark.usefixtures("backend")  # the outbox on both archive backends
def test_forget_removes_from_chroma_at_once(store: TieredStore) -> None:
    """A forgotten memory leaves the warm index immediately; nothing stays queued."""
    store.ingest(corpus())
    store.forget(session_id="s0")
    assert store.warm is not None and store.warm.contains([m.id for m in corpus()]) == {
        "c1",
        "c3",
        "c5",
    }
    assert store.pending() == 0
    assert all(h.memory.session_id == "s1" for h in store.search("warm", "billing invoices", 6))


@pytest.mark.usefixtures("backend")  # the outbox on both archive backends
def test_the_background_worker_indexes_without_blocking_ingest(
    tmp_path: Path, st_embedder: Embedder
) -> None:
    """With drain=background the worker empties the queue on its own."""
    background = config(outbox=FAST.model_copy(update={"drain": "background"}))
    with TieredStore(tmp_path, background, embedder=st_embedder) as store:
        store.ingest(corpus())
        deadline = time.monotonic() + 60
        while store.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.pending() == 0
        assert store.stats().warm == len(corpus())


def test_vectors_carry_the_turn_before_and_follow_insertions(store: TieredStore) -> None:
    """Each vector embeds the previous turn of its session; a turn inserted before another
    re-embeds that one, and forgetting a turn re-embeds its successor."""
    from datetime import timedelta

    from tiers.history import history_line

    warm = store.warm
    assert isinstance(warm, WarmTier)
    base = corpus()[0]
    first = base.replace(id="t1", content="Which database should billing use?")
    third = base.replace(
        id="t3",
        content="Postgres 16, decided on Monday.",
        timestamp=base.timestamp + timedelta(minutes=2),
    )
    store.ingest([first, third])

    def embeds(memory: Memory, context: Memory | None) -> bool:
        text = warm.text_of(memory, history_line(context) if context else None)
        top = warm.search(text, k=1)
        return bool(top) and top[0].id == memory.id and top[0].score > 0.999

    assert embeds(third, first)
    second = base.replace(
        id="t2",
        content="Marco asked about SQLite in WAL mode instead.",
        timestamp=base.timestamp + timedelta(minutes=1),
    )
    store.ingest([second])
    assert embeds(third, second)
    store.forget(["t2"])
    assert embeds(third, first)

"""The PostgreSQL archive against a real server: the tier contract, BM25 parity with the
embedded engines, namespace isolation, forgetting, versions, and the outbox's claims."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.pg_server import PostgresServer, unique_namespace
from tests.tiers.contract import TierContract, corpus
from tests.tiers.test_cold import chat
from tiers.cold import ColdArchive, content_sha
from tiers.config import ColdConfig, OutboxConfig, TiersConfig
from tiers.errors import InvalidInputError
from tiers.memory import Memory
from tiers.pg_archive import PgArchive
from tiers.pg_outbox import PgOutbox
from tiers.pg_schema import TABLE_NAMES, schema_name
from tiers.store import TieredStore

BM25_TOLERANCE = 1e-9  # relative: the engines add the same terms in another order


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def archive(pg_url: str) -> Iterator[PgArchive]:
    a = PgArchive(pg_url, unique_namespace())
    yield a
    a.close()


class TestPostgresContract(TierContract):
    @pytest.fixture
    def tier(self, pg_url: str) -> Iterator[PgArchive]:
        archive = PgArchive(pg_url, unique_namespace())
        yield archive
        archive.close()


@pytest.mark.parametrize("engine", ["fts5", "rank_bm25"])
def test_bm25_matches_the_embedded_engines(pg_url: str, tmp_path: Path, engine: str) -> None:
    """Same top-k ids in the same order, scores within BM25_TOLERANCE, after writes,
    replacements and forgets, for several queries. (FTS5 counts a document's length in its own
    ASCII tokens, so a hyphenated word counts twice there: that corpus has none.)"""
    memories = chat(400, seed=11)
    embedded = ColdArchive(tmp_path, ColdConfig(engine=engine, fts5_budget=0))
    server = PgArchive(pg_url, unique_namespace())
    for target in (embedded, server):
        target.add(memories)
        target.forget([f"m{i}" for i in range(0, 400, 9)])
        target.add([memories[1].replace(content="postgres postgres failover drill")])
        woke = "the pager alert woke the on-call" if engine == "rank_bm25" else "pager woke us"
        target.add([memories[5].replace(content=woke)])
    queries = ["postgres failover cron", "invoice email", "pager alert redis", "note17 deploy"]
    for query in queries:
        want = [(h.id, h.score) for h in embedded.search(query, 25)]
        got = [(h.id, h.score) for h in server.search(query, 25)]
        assert len(got) == len(want) > 0
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=BM25_TOLERANCE)
        # ids agree wherever the scores are not tied within the tolerance
        assert _tie_free(got) == _tie_free(want)
    assert server.search("postgres failover cron", 1)[0].id == "m1"
    embedded.close()
    server.close()


def _tie_free(hits: list[tuple[str, float]]) -> list[tuple[float, str]]:
    return sorted((-round(score, 8), memory_id) for memory_id, score in hits)[:20]


def test_namespaces_are_isolated(pg_url: str) -> None:
    """Two namespaces in one database never see each other's memories, counts or terms."""
    a = PgArchive(pg_url, unique_namespace("alice"))
    b = PgArchive(pg_url, unique_namespace("bob"))
    a.add(corpus())
    b.add([Memory(id="c0", content="Bob's own secret about kumquats")])
    assert a.count() == len(corpus())
    assert b.count() == 1
    assert b.get(["c1"]) == []
    assert b.search("billing Postgres", 5) == []
    assert [h.id for h in a.search("kumquats", 5)] == []
    assert a.get(["c0"])[0].content != b.get(["c0"])[0].content
    assert a.schema != b.schema
    a.close()
    b.close()


def test_schema_names_are_distinct_and_safe() -> None:
    assert schema_name("Dana") != schema_name("dana")
    assert schema_name('x"; DROP TABLE memories; --').replace("_", "").isalnum()
    with pytest.raises(InvalidInputError):
        schema_name("")


def test_forget_leaves_no_row_holding_the_text(archive: PgArchive, pg_url: str) -> None:
    """After forget, no row of any table of the namespace holds the forgotten words."""
    secret = Memory(id="s1", content="the vault code is zanzibar-quokka")
    archive.add([*corpus(), secret])
    archive.add([secret.replace(content="the vault code is now wombat-umbrella")])
    assert archive.forget(["s1"]) == 1
    with psycopg.connect(pg_url) as conn:
        for table in TABLE_NAMES:
            rows = conn.execute(f'SELECT t::text FROM "{archive.schema}".{table} AS t').fetchall()
            text = " ".join(r[0] for r in rows).lower()
            for word in ("zanzibar", "quokka", "wombat", "umbrella", "vault"):
                assert word not in text, (table, word)
    assert archive.search("vault code", 5) == []
    archive.check_integrity()


def test_versions_are_kept_and_erased(pg_url: str, tmp_path: Path) -> None:
    """Replacing content keeps the earlier version; forgetting erases them all."""
    with TieredStore(
        tmp_path / unique_namespace(), TiersConfig(cold=ColdConfig(database_url=pg_url))
    ) as store:
        assert store.stats().cold_engine == "postgres"
        store.ingest([Memory(id="v", content="first draft")])
        store.ingest([Memory(id="v", content="second draft")])
        store.ingest([Memory(id="v", content="third draft")])
        assert [v.memory.content for v in store.versions("v")] == [
            "first draft",
            "second draft",
            "third draft",
        ]
        assert [v.version for v in store.versions("v")] == [1, 2, 3]
        store.forget(["v"])
        assert store.versions("v") == []
        assert store.cold is not None
        assert store.cold.query("SELECT COUNT(*) FROM memory_versions")[0][0] == 0


def test_a_failed_transaction_writes_nothing(archive: PgArchive) -> None:
    archive.add(corpus()[:2])
    with pytest.raises(RuntimeError), archive.transaction() as txn:
        txn.put(corpus()[2])
        raise RuntimeError("abort")
    assert archive.count() == 2
    assert archive.search("duplicate invoice emails", 3) == []
    archive.check_integrity()


def test_two_claimers_never_get_the_same_item(archive: PgArchive) -> None:
    """Replicas draining at once claim disjoint items, and together claim them all."""
    archive.add(chat(300))
    box = PgOutbox(archive, claimer="init")
    with archive.transaction() as txn:
        box.enqueue_upserts(txn, [(f"m{i}", f"sha{i}") for i in range(300)])
    claimed: dict[str, list[str]] = {"a": [], "b": []}

    def drain(name: str) -> None:
        mine = PgOutbox(archive, claimer=name)
        while items := mine.due(7):
            claimed[name].extend(i.id for i in items)

    threads = [threading.Thread(target=drain, args=(n,)) for n in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a, b = set(claimed["a"]), set(claimed["b"])
    assert not a & b
    assert len(claimed["a"]) + len(claimed["b"]) == 300
    assert a | b == {f"m{i}" for i in range(300)}
    assert a and b  # both worked
    assert box.pending() == 300  # claimed, not done


def test_a_dead_claimers_items_are_taken_over_after_the_lease(archive: PgArchive) -> None:
    """Claimed items stay claimed until the lease runs out, then another replica gets them;
    a failure releases the claim at once; re-queueing a new version releases it too."""
    archive.add(corpus())
    clock = Clock()
    config = OutboxConfig(lease_seconds=30, retry_base_seconds=1)
    dead = PgOutbox(archive, config, clock=clock, claimer="dead")
    alive = PgOutbox(archive, config, clock=clock, claimer="alive")
    shas = {m.id: content_sha(m.content) for m in corpus()}
    with archive.transaction() as txn:
        dead.enqueue_upserts(txn, sorted(shas.items()))
    taken = dead.due(3)  # ... and the replica dies here
    assert len(taken) == 3
    assert set(alive.claims()) == {i.id for i in taken}
    rest = alive.due(10)
    assert {i.id for i in rest} == set(shas) - {i.id for i in taken}
    alive.succeeded(rest)
    assert alive.due(10) == []
    assert alive.seconds_until_due() == pytest.approx(30)
    clock.now += 31
    again = alive.due(10)
    assert {i.id for i in again} == {i.id for i in taken}
    alive.failed(again[:1], "chroma down")
    clock.now += 1.5
    assert [i.id for i in alive.due(10)] == [again[0].id]
    with archive.transaction() as txn:  # a new version of a claimed item: claimable at once
        alive.enqueue_upserts(txn, [(again[1].id, "newer")])
    assert [(i.id, i.content_sha) for i in dead.due(10)] == [(again[1].id, "newer")]
    alive.succeeded(again)  # the old version's ack leaves the newer one queued
    assert [i.content_sha for i in alive.queued([again[1].id])] == ["newer"]


def test_the_database_url_is_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIERED_DISCLOSURE_DATABASE_URL", "mysql://nope")
    with pytest.raises(InvalidInputError, match="postgresql://"):
        TieredStore(tmp_path)
    with pytest.raises(ValueError, match="database_url"):
        ColdConfig(database_url="sqlite:///x.db")


def test_the_archive_reconnects_after_the_server_restarts(
    pg_server: PostgresServer, pg_url: str
) -> None:
    """A restarted database server costs no failed request: pooled connections are checked."""
    archive = PgArchive(pg_url, unique_namespace())
    archive.add(corpus())
    pg_server.restart()
    assert archive.count() == len(corpus())
    assert archive.search("invoice totals Decimal", 1)[0].id == "c4"
    archive.close()

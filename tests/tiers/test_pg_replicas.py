"""Several replicas on one PostgreSQL archive: a write on one is seen by the others' hot sets,
and a killed replica's outbox claims are taken over once their lease runs out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pg_server import unique_namespace
from tests.tiers.contract import corpus
from tiers.cold import content_sha
from tiers.config import ColdConfig, OutboxConfig, TiersConfig
from tiers.memory import Memory
from tiers.pg_archive import PgArchive
from tiers.pg_outbox import PgOutbox
from tiers.store import TieredStore

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "tiers" / "pg_claim_child.py"


def test_a_write_on_one_replica_reaches_the_others_hot_set(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores (two replicas' data directories) on one namespace: each sees the other's
    ingest and forget in its hot set once it checks; its own writes need no reload."""
    monkeypatch.setattr("tiers.store.REPLICA_CHECK_SECONDS", 0.0)
    config = TiersConfig(cold=ColdConfig(database_url=pg_url))
    namespace = unique_namespace()
    with (
        TieredStore(tmp_path / "a", config, namespace=namespace) as a,
        TieredStore(tmp_path / "b", config, namespace=namespace) as b,
    ):
        assert not b.follow_other_writers()
        a.ingest(corpus())
        assert b.search("hot", "invoice totals Decimal", 3) == []  # not looked yet
        assert b.follow_other_writers()
        assert b.search("hot", "invoice totals Decimal", 3)[0].id == "c4"
        assert not b.follow_other_writers()  # nothing new
        b.ingest([Memory(id="b1", content="replica b wrote about kumquats")])
        assert not b.follow_other_writers()  # its own write: its hot set has it already
        assert b.search("hot", "kumquats", 1)[0].id == "b1"
        assert a.follow_other_writers()
        assert a.search("hot", "kumquats", 1)[0].id == "b1"
        a.forget(["c4"])
        assert b.follow_other_writers()
        assert all(h.id != "c4" for h in b.search("hot", "invoice totals Decimal", 6))


def test_the_check_is_rate_limited_and_sqlite_never_reloads(pg_url: str, tmp_path: Path) -> None:
    """Within REPLICA_CHECK_SECONDS the check costs nothing; an embedded archive has no others."""
    config = TiersConfig(cold=ColdConfig(database_url=pg_url))
    namespace = unique_namespace()
    with (
        TieredStore(tmp_path / "a", config, namespace=namespace) as a,
        TieredStore(tmp_path / "b", config, namespace=namespace) as b,
        TieredStore(tmp_path / "local") as local,
    ):
        assert not b.follow_other_writers()  # the first check, now
        a.ingest(corpus())
        assert not b.follow_other_writers()  # within the interval: not looked
        time.sleep(0.3)
        assert b.follow_other_writers()
        local.ingest(corpus())
        assert not local.follow_other_writers()


def test_a_killed_replicas_claims_are_taken_over_after_the_lease(pg_url: str) -> None:
    """A replica process claims items and is SIGKILLed before acknowledging them: nobody gets
    them while the lease lasts, the next drainer gets exactly them after it."""
    namespace = unique_namespace()
    archive = PgArchive(pg_url, namespace)
    archive.add(corpus())
    alive = PgOutbox(archive, OutboxConfig(lease_seconds=1.0), claimer="alive")
    with archive.transaction() as txn:
        alive.enqueue_upserts(txn, [(m.id, content_sha(m.content)) for m in corpus()])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, str(CHILD), pg_url, namespace, "4", "1.5"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    ) as child:
        assert child.stdout is not None
        claimed = json.loads(child.stdout.readline())["claimed"]
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert len(claimed) == 4
    rest = alive.due(10)
    assert {i.id for i in rest} == {m.id for m in corpus()} - set(claimed)
    alive.succeeded(rest)
    assert alive.due(10) == []  # the dead replica's lease still holds
    assert alive.pending() == 4
    deadline = time.monotonic() + 30
    taken: list[str] = []
    while not taken and time.monotonic() < deadline:
        time.sleep(0.2)
        taken = [i.id for i in alive.due(10)]
    assert sorted(taken) == sorted(claimed)
    archive.close()

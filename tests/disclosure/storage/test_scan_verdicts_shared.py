"""Kept injection-scan verdicts with a PostgreSQL archive (disclosure.storage.scan_verdicts):
in the namespace's schema, so what one replica scanned another reads instead of scanning it
again; a forget through either deletes them for both; another filter version's are dropped.
Two controllers on one PostgreSQL namespace (each its own data directory), the real filter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import safeguards.filter as screen
from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import Profile
from disclosure.storage.scan_verdicts import FILE_NAME, PG_SCHEMA, ScanVerdicts, digest, texts_of
from disclosure.storage.sidetables import shared_tables
from formatters import FLAG_NOTE
from tests.disclosure.storage.test_scan_verdicts import (
    INJECTED,
    NOW,
    forget_process_scans,
    memories,
    scans_done,
)
from tests.pg_server import unique_namespace
from tiers.config import DATABASE_URL_VARIABLE
from tiers.pg_schema import schema_name


@pytest.fixture
def replicas(
    pg_url: str, tmp_path: Path, lean_profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[DisclosureController, DisclosureController, str]]:
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    namespace = unique_namespace()  # the same directory name under two roots: one namespace
    with (
        DisclosureController(lean_profile, data_dir=tmp_path / "one" / namespace) as one,
        DisclosureController(lean_profile, data_dir=tmp_path / "two" / namespace) as two,
    ):
        yield one, two, namespace


def _rows(url: str, namespace: str) -> list[tuple[str, bytes]]:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            f'SELECT filter, digest FROM "{schema_name(namespace)}".scan_clean'
        ).fetchall()
    return [(str(f), bytes(d)) for f, d in found]


def test_what_one_replica_scanned_the_other_does_not_scan_again(
    replicas: tuple[DisclosureController, DisclosureController, str], pg_url: str
) -> None:
    one, two, namespace = replicas
    one.ingest(memories())
    scans_done(one)
    kept = _rows(pg_url, namespace)
    clean = {digest(t) for m in memories()[:-1] for t in texts_of(m)}
    assert clean <= {d for _, d in kept} and digest(INJECTED) not in {d for _, d in kept}
    assert {f for f, _ in kept} == {screen.FILTER_VERSION}
    assert not any(p.name.startswith(FILE_NAME) for p in two.data_dir.iterdir())

    answers, scans = {}, {}
    for kept in (True, False):
        forget_process_scans()  # as a replica that never saw these texts
        two.caches.clear()
        verdicts, two.verdicts = two.verdicts, two.verdicts if kept else None
        shown = two.disclose("the garden fence and the prompt", now=NOW, level="comprehensive")
        two.verdicts = verdicts
        answers[kept] = (shown.text, [(i.id, i.layer) for i in shown.items])
        scans[kept] = screen._scan.cache_info().misses
    assert answers[True] == answers[False]
    assert "evil" in [i for i, _ in answers[True][1]] and FLAG_NOTE in answers[True][0]
    assert 0 < scans[True] < scans[False]  # the injected text scanned, the kept clean ones not


def test_a_forget_through_one_replica_drops_the_verdicts_for_both(
    replicas: tuple[DisclosureController, DisclosureController, str], pg_url: str
) -> None:
    one, two, namespace = replicas
    one.ingest(memories())
    scans_done(one)
    gone = memories()[3]
    assert digest(gone.content) in {d for _, d in _rows(pg_url, namespace)}
    assert two.verdicts is not None and two.verdicts.known_clean(gone.content)
    assert two.forget(ids=[gone.id]).ids == (gone.id,)
    assert digest(gone.content) not in {d for _, d in _rows(pg_url, namespace)}
    assert not one.verdicts.known_clean(gone.content)  # type: ignore[union-attr]
    # a verdict recorded late, by a replica that scanned the text before the forget, is not kept
    assert one.verdicts.record([gone], one._still_stored) == 0  # type: ignore[union-attr]
    assert digest(gone.content) not in {d for _, d in _rows(pg_url, namespace)}
    assert digest(memories()[4].content) in {d for _, d in _rows(pg_url, namespace)}


def test_another_filter_versions_verdicts_are_not_trusted_and_are_dropped(
    replicas: tuple[DisclosureController, DisclosureController, str], pg_url: str
) -> None:
    one, _, namespace = replicas
    one.ingest(memories())
    scans_done(one)
    schema = schema_name(namespace)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'UPDATE "{schema}".scan_clean SET filter = %s', ("an older filter",))
        conn.execute(f'INSERT INTO "{schema}".scan_filters VALUES (%s)', ("an older filter",))
    assert not one.verdicts.known_clean(memories()[0].content)  # type: ignore[union-attr]
    opened = ScanVerdicts(one.data_dir, tables=shared_tables(one.store, PG_SCHEMA, "scan_verdicts"))
    assert opened.count() == 0 and _rows(pg_url, namespace) == []

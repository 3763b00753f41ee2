"""Two replicas (two controllers, each with its own data directory) on one PostgreSQL namespace
share the side stores: participants learned through one rank queries on the other, a citation
logged through one is counted through the other, summaries consolidated on one are disclosed by
the other, and a forget through either erases them for both. Nothing of them is kept in the
replicas' data directories, and concurrent writers lose none of each other's rows."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import Profile
from tests.disclosure.consolidation.conftest import START, hand_made, profile_with
from tests.pg_server import unique_namespace
from tiers.config import DATABASE_URL_VARIABLE
from tiers.memory import Memory
from tiers.pg_schema import schema_name
from tiers.store import REPLICA_CHECK_SECONDS

NOW = START + timedelta(days=2)
SIDE_FILES = ("participants.json", "citations.sqlite3", "summaries.sqlite3", "usage.sqlite3")


@pytest.fixture
def profile() -> Profile:
    return profile_with(
        consolidation={"serve": {"enabled": True, "levels": ["comprehensive", "detailed"]}}
    )


@pytest.fixture
def replicas(
    pg_url: str, tmp_path: Path, profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[DisclosureController, DisclosureController, str]]:
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    namespace = unique_namespace()  # the same directory name under two roots: one namespace
    with (
        DisclosureController(profile, data_dir=tmp_path / "one" / namespace) as one,
        DisclosureController(profile, data_dir=tmp_path / "two" / namespace) as two,
    ):
        yield one, two, namespace


def _side_files(controller: DisclosureController) -> list[str]:
    return sorted(p.name for p in controller.data_dir.iterdir() if p.name.startswith(SIDE_FILES))


def test_participants_citations_and_summaries_are_shared_between_replicas(
    replicas: tuple[DisclosureController, DisclosureController, str],
) -> None:
    one, two, _ = replicas
    query = "What did Priya say about the migration?"
    assert two.participants.named_in(query) == set()  # nothing stored yet
    one.ingest(hand_made())
    assert two.participants.named_in(query) == {"Priya"}  # learned on one, used on two
    assert {"Dana", "Marco", "Priya"} <= set(two.participants)

    result = one.disclose("Where is the team offsite?", level="detailed", now=NOW)
    lisbon = next(i for i in result.items if i.id == "m5")
    one.feedback(result, f"In Lisbon [{lisbon.citation}].", session_id="chat-1")
    top = two.citations(top=3)  # logged through one, counted through two
    assert top and top[0].memory_id == lisbon.id and top[0].cited == 1
    assert [u.session_id for u in two.where_cited(lisbon.citation)] == ["chat-1"]
    assert len(two.citation_log.replies()) == 1

    assert two.search_summaries("boat trip agenda") == []  # two's summary index: empty
    assert one.consolidate(include_working_set=True).written > 0
    hits = two.search_summaries("boat trip agenda")  # consolidated on one, seen by two
    assert hits and "m7" in hits[0].summary.sources
    assert two.stats()["summaries"]["memories"] == 8
    session = two.consolidation.of_session("s1")[0]
    assert "Lisbon" in two.show(session.id)
    time.sleep(REPLICA_CHECK_SECONDS + 0.05)
    served = two.disclose("What is on the offsite agenda?", level="comprehensive", now=NOW)
    assert "Overview (consolidated summaries" in served.text
    assert _side_files(one) == [] and _side_files(two) == []


def test_a_forget_on_one_replica_erases_the_side_stores_for_both(
    replicas: tuple[DisclosureController, DisclosureController, str], pg_url: str
) -> None:
    one, two, namespace = replicas
    one.ingest(hand_made())
    result = one.disclose("Where is the team offsite?", level="detailed", now=NOW)
    cited = [i for i in result.items if i.id in ("m5", "m6")]
    assert cited
    one.feedback(result, " ".join(f"[{i.citation}]" for i in cited), session_id="chat-1")
    assert one.consolidate(include_working_set=True).written > 0
    assert any("Lisbon" in s.full_text for s in two.consolidation.of_session("s1"))

    two.forget(ids=["m5", "m6"])  # through the other replica
    assert {c.memory_id for c in one.citations(top=20)}.isdisjoint({"m5", "m6"})
    assert one.citation_log.where("m5") == [] and one.consolidation.citing("m5") == []
    for summary in one.consolidation.summaries.all():
        assert "Lisbon" not in summary.full_text + summary.paragraph + summary.index_line
        assert not {"m5", "m6"} & set(summary.sources)
    assert "m7" in {m for s in one.consolidation.of_session("s1") for m in s.sources}
    with psycopg.connect(pg_url) as conn:  # no row of the namespace's schema holds the words
        schema = schema_name(namespace)
        for table in ("citation_uses", "summaries", "summary_sources", "consolidated"):
            rows = conn.execute(f'SELECT * FROM "{schema}".{table}').fetchall()
            assert "Lisbon" not in repr(rows) and "'m5'" not in repr(rows), table


def test_concurrent_writers_on_two_replicas_lose_nothing(
    replicas: tuple[DisclosureController, DisclosureController, str],
) -> None:
    """Both replicas add speakers and log replies at once: every name and every reply is kept
    (row-level inserts, not a rewritten blob)."""
    one, two, _ = replicas
    one.ingest([Memory(id="seed", content="The kumquat ledger moved to bucket four.")])
    result = one.disclose("Where did the kumquat ledger move?", level="detailed", now=NOW)
    assert result.items
    rounds = 15
    errors: list[BaseException] = []

    def work(controller: DisclosureController, tag: str) -> None:
        try:
            for n in range(rounds):
                controller.participants.add([f"{tag}speaker{n}"])
                controller.feedback(result, f"[{result.items[0].citation}]")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c, t)) for c, t in ((one, "a"), (two, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    wanted = {f"{tag}speaker{n}" for tag in "ab" for n in range(rounds)}
    assert wanted <= set(one.participants) and wanted <= set(two.participants)
    assert one.citations(top=1)[0].cited == 2 * rounds == two.citations(top=1)[0].cited
    assert len(two.citation_log.replies(1000)) == 2 * rounds


def test_an_embedded_namespace_keeps_its_side_files(tmp_path: Path, profile: Profile) -> None:
    with DisclosureController(profile, data_dir=tmp_path / "lite") as controller:
        controller.ingest(hand_made())
        result = controller.disclose("Where is the team offsite?", level="detailed", now=NOW)
        controller.feedback(result, f"[{result.items[0].citation}]")
        controller.consolidate(include_working_set=True)
        assert controller.citation_log.engine == "sqlite"
        assert controller.consolidation.summaries.engine == "sqlite"
        files = _side_files(controller)
    assert {"participants.json", "citations.sqlite3", "summaries.sqlite3"} <= set(files)


def test_a_namespace_stored_before_the_names_were_shared_gets_them_from_its_archive(
    replicas: tuple[DisclosureController, DisclosureController, str],
    pg_url: str,
    tmp_path: Path,
    profile: Profile,
) -> None:
    """A schema written by a version that kept participants in files (no participants tables):
    the first replica to open it fills the table from the archive's speakers, once."""
    one, _, namespace = replicas
    one.ingest(hand_made())
    schema = schema_name(namespace)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{schema}".participants, "{schema}".participants_meta')
    with DisclosureController(profile, data_dir=tmp_path / "three" / namespace) as three:
        assert set(three.participants) == {"Dana", "Marco", "Priya"}
        assert three.participants.named_in("what did Marco plan?") == {"Marco"}
    with psycopg.connect(pg_url) as conn:
        marker = conn.execute(f'SELECT key FROM "{schema}".participants_meta').fetchall()
    assert marker == [("backfilled",)]


def test_two_replicas_consolidating_at_once_agree(
    replicas: tuple[DisclosureController, DisclosureController, str],
) -> None:
    """Both replicas rebuild the same sessions at the same moment: each session's rewrite is
    one transaction, one writer at a time, so neither fails and both read one set."""
    one, two, _ = replicas
    one.ingest(hand_made())
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(controller: DisclosureController) -> None:
        try:
            start.wait()
            for _ in range(3):
                controller.consolidation.consolidator.run(include_working_set=True)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,)) for c in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    mine = [(s.id, s.full_text, s.sources) for s in one.consolidation.summaries.all()]
    theirs = [(s.id, s.full_text, s.sources) for s in two.consolidation.summaries.all()]
    assert mine == theirs and len(mine) == 5  # 3 topics and 2 sessions
    assert one.stats()["summaries"]["memories"] == 8 == two.stats()["summaries"]["memories"]


def test_a_nul_character_does_not_fail_a_write_the_archive_took(
    replicas: tuple[DisclosureController, DisclosureController, str],
) -> None:
    """PostgreSQL's text refuses NUL; the archive keeps memories as JSON, so a memory with one
    is stored: its speaker's name, a query and a summary holding it are kept too (the NUL as
    U+FFFD), never an error after the memory was written."""
    one, two, _ = replicas
    report = one.ingest(
        [Memory(id="z1", content="the zebra\x00 plan moved", speaker="Ze\x00bra", session_id="s1")]
    )
    assert list(report.ids) == ["z1"]
    assert "Ze\ufffdbra" in set(two.participants)
    result = one.disclose("zebra\x00 plan?", level="detailed", now=NOW)
    one.feedback(result, f"[{result.items[0].citation}]")
    assert two.citations(top=1)[0].memory_id == "z1"
    assert one.consolidate(include_working_set=True).written > 0
    assert any("zebra\ufffd plan" in s.full_text for s in two.consolidation.summaries.all())


def test_side_files_left_in_a_replicas_directory_are_named_in_a_warning(
    pg_url: str,
    tmp_path: Path,
    profile: Profile,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Files an earlier version kept per replica are not read any more, nor reached by a
    forget: opening the namespace says which, so the operator can remove them."""
    monkeypatch.setenv(DATABASE_URL_VARIABLE, pg_url)
    directory = tmp_path / unique_namespace()
    directory.mkdir()
    (directory / "participants.json").write_text('["Old Name"]', encoding="utf-8")
    with caplog.at_level("WARNING"), DisclosureController(profile, data_dir=directory) as c:
        assert "Old Name" not in set(c.participants)
    warned = [r.getMessage() for r in caplog.records if "no longer uses" in r.getMessage()]
    assert len(warned) == 1 and "participants.json" in warned[0]
    assert (directory / "participants.json").exists()  # left to the operator


def test_a_speaker_whose_every_memory_is_forgotten_leaves_the_shared_names(
    replicas: tuple[DisclosureController, DisclosureController, str], pg_url: str
) -> None:
    """Forgetting all a speaker said removes their name, for every replica and from the table;
    a speaker with memories left keeps theirs."""
    one, two, namespace = replicas
    one.ingest(hand_made())
    said_by_marco = [m.id for m in hand_made() if m.speaker == "Marco"]
    assert said_by_marco and "Marco" in set(two.participants)
    two.forget(ids=said_by_marco[:-1])
    assert "Marco" in set(one.participants)  # one memory of his is left
    two.forget(ids=said_by_marco[-1:])
    assert "Marco" not in set(one.participants) and "Marco" not in set(two.participants)
    assert one.participants.named_in("What did Marco say?") == set()
    assert {"Dana", "Priya"} <= set(one.participants)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(f'SELECT name FROM "{schema_name(namespace)}".participants').fetchall()
    assert ("Marco",) not in rows

"""Consolidation: topics by session, three detail levels checked line by line, idempotence,
the working set, triggers, forget propagation, and summaries in disclosure."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from disclosure import DisclosureController
from disclosure.consolidation.grouping import files_in
from tests.disclosure.consolidation.conftest import START, hand_made, profile_with


def cite(controller: DisclosureController, memory_id: str) -> str:
    return "mem:" + controller.store.citation_of([memory_id])[memory_id]


def test_a_hand_made_session_splits_into_its_two_topics_line_by_line(
    controller: DisclosureController,
) -> None:
    report = controller.consolidate(include_working_set=True)
    assert report.sessions == ("s1", "s2") and report.memories == 8 and report.written == 5
    s1 = controller.consolidation.of_session("s1")
    assert [(s.kind, s.sources) for s in s1] == [
        ("session", ("m1", "m2", "m3", "m4", "m5", "m6", "m7")),
        ("topic", ("m1", "m2", "m3", "m4")),
        ("topic", ("m5", "m6", "m7")),
    ]
    session, migration, offsite = s1
    c = {i: cite(controller, i) for i in ("m1", "m2", "m3", "m4", "m5", "m6", "m7")}
    assert migration.index_line == (
        "s1 · 2 Mar 2026 · Dana, Priya · migration, postgres, billing, database: "
        "I will write the Postgres migration in billing/migrations/0007.py."
    )
    assert migration.paragraph == (
        f"Dana: We move the billing database from SQLite to Postgres 16. [{c['m1']}] "
        f"Priya: I will write the Postgres migration in billing/migrations/0007.py. [{c['m2']}] "
        f"Dana: The Postgres migration must keep every invoice id stable. [{c['m3']}]"
    )
    assert migration.full_text.splitlines() == [
        f"[{c['m1']}] Dana: We move the billing database from SQLite to Postgres 16.",
        f"[{c['m2']}] Priya: I will write the Postgres migration in billing/migrations/0007.py.",
        f"[{c['m3']}] Dana: The Postgres migration must keep every invoice id stable.",
        f"[{c['m4']}] Priya: Migration dry run on the staging database passed.",
    ]
    assert offsite.index_line == (
        "s1 · 2 Mar 2026 · Marco, Dana · offsite, lisbon, agenda, boat: "
        "The team offsite is in Lisbon on May 20."
    )
    assert offsite.full_text.count("\n") == 2 and c["m7"] in offsite.full_text
    assert session.index_line == (
        "s1 · 2 Mar 2026 · Dana, Priya, Marco · 7 memories, 2 topics · "
        "migration, postgres, billing, database; offsite, lisbon, agenda, boat"
    )
    assert session.paragraph.splitlines() == [migration.index_line, offsite.index_line]
    assert [session.layer(n) for n in (1, 2, 3)] == [
        session.index_line,
        session.paragraph,
        session.full_text,
    ]
    # the sources stay untouched and citable
    assert controller.show(c["m5"]).count("The team offsite is in Lisbon on May 20.") == 1
    assert controller.consolidation.citing("m5") == [session, offsite]


def test_rerunning_is_idempotent(controller: DisclosureController) -> None:
    controller.consolidate(include_working_set=True)
    before = controller.consolidation.summaries.all()
    again = controller.consolidate(include_working_set=True)
    assert (again.written, again.memories, again.sessions) == (0, 0, ())
    assert controller.consolidation.summaries.all() == before
    # a memory with new content rebuilds its session only; the same content again changes nothing
    controller.ingest([hand_made()[5].replace(content="Book the Lisbon hotel by the station.")])
    changed = controller.consolidate(include_working_set=True)
    assert changed.sessions == ("s1",) and changed.memories == 1
    assert "by the station" in controller.consolidation.of_session("s1")[2].full_text
    assert controller.consolidate(include_working_set=True).written == 0


def test_only_memories_that_left_the_working_set_are_consolidated(tmp_path: Path) -> None:
    profile = profile_with(tiers={"hot": {"max_items": 3}})
    with DisclosureController(profile, data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        hot = set(controller.store.hot.ids())
        assert len(hot) == 3
        assert controller.consolidation.consolidator.waiting() == 5
        report = controller.consolidate()
        covered = set(controller.consolidation.summaries.consolidated())
        assert report.memories == 5 and covered == {m.id for m in hand_made()} - hot
        assert controller.consolidation.consolidator.waiting() == 0


def test_triggers_come_from_the_profile(tmp_path: Path) -> None:
    profile = profile_with(
        tiers={"hot": {"max_items": 3}},
        consolidation={
            "triggers": {"every_seconds": 0, "idle_seconds": 600, "working_set_size": 0}
        },
    )
    with DisclosureController(profile, data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        consolidator = controller.consolidation.consolidator
        consolidator.wrote(START)
        assert consolidator.due(START + timedelta(seconds=599)) is None
        assert consolidator.due(START + timedelta(seconds=600)) == "idle"
        report = controller.consolidation.run_if_due(START + timedelta(seconds=601))
        assert report is not None and report.trigger == "idle" and report.memories == 5
        # nothing waits any more: no trigger fires
        assert consolidator.due(START + timedelta(days=1)) is None
    size = profile_with(
        tiers={"hot": {"max_items": 3}},
        consolidation={"triggers": {"every_seconds": 0, "idle_seconds": 0, "working_set_size": 3}},
    )
    with DisclosureController(size, data_dir=tmp_path / "b") as controller:
        controller.ingest(hand_made()[:3])
        assert controller.consolidation.consolidator.due() is None  # full, but nothing left it
        controller.ingest(hand_made()[3:])
        assert controller.consolidation.consolidator.due() == "working set holds 3 memories"


def test_forgetting_a_source_rebuilds_its_summaries_and_leaves_no_trace(
    controller: DisclosureController,
) -> None:
    controller.consolidate(include_working_set=True)
    secret = "river"
    assert any(secret in s.full_text for s in controller.consolidation.summaries.all())
    controller.forget(ids=["m6"])
    summaries = controller.consolidation.summaries.all()
    assert all("m6" not in s.sources for s in summaries)
    assert not any(secret in f"{s.index_line}{s.paragraph}{s.full_text}" for s in summaries)
    assert controller.consolidation.of_session("s1")[2].sources == ("m5", "m7")
    assert not any(secret in h.summary.full_text for h in controller.search_summaries(secret))
    controller.forget(session_id="s1")
    assert [s.session_id for s in controller.consolidation.summaries.all()] == ["s2", "s2"]
    assert set(controller.consolidation.summaries.consolidated()) == {"n1"}
    # nor on disk: deleted rows are overwritten and the log checkpointed
    files = list(controller.data_dir.glob("summaries.sqlite3*"))
    assert files and not any(b"Lisbon" in f.read_bytes() for f in files)


def test_file_paths_count_towards_topic_continuity() -> None:
    assert files_in("see billing/migrations/0007.py and README.md, not e.g. this") == {
        "billing/migrations/0007.py",
        "readme.md",
    }


def test_summaries_are_searchable_and_lead_to_their_sources(
    controller: DisclosureController,
) -> None:
    controller.consolidate(include_working_set=True)
    hits = controller.search_summaries("where is the offsite?")
    assert hits[0].summary.sources == ("m5", "m6", "m7")
    assert [m.id for m in controller.store.get(list(hits[0].summary.sources))] == [
        "m5",
        "m6",
        "m7",
    ]
    assert controller.search_summaries("zebra crossing") == []
    shown = controller.show(f"[{hits[0].summary.id}]")
    assert shown.startswith(hits[0].summary.index_line) and shown.endswith(
        hits[0].summary.full_text
    )


def test_comprehensive_queries_get_the_overview_first_within_the_budget(tmp_path: Path) -> None:
    profile = profile_with(consolidation={"serve": {"enabled": True}})
    with DisclosureController(profile, data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        controller.consolidate(include_working_set=True)
        result = controller.disclose("Give me the full context on everything about the offsite")
        assert result.level.value == "comprehensive"
        assert result.text.startswith("## Overview")
        overview = result.text.split("\n\n")[0]
        assert "Lisbon" in overview and cite(controller, "m5") in overview
        assert result.tokens_used == controller.counter(result.text) <= result.budget
        small = controller.disclose("everything about the offsite", level="standard")
        assert not small.text.startswith("## Overview")  # only the levels the profile names


def test_an_index_shows_a_consolidated_sessions_line_instead_of_many_turns(
    controller: DisclosureController,
) -> None:
    from disclosure.consolidation.service import CollapsedSession
    from disclosure.core.workflow import search_index

    controller.consolidate(include_working_set=True)
    entries = search_index(controller, "Postgres migration database offsite revenue", limit=10)
    assert len([e for e in entries if e.session_id == "s1"]) >= 3
    shown = controller.consolidation.collapse(entries)
    collapsed = [s for s in shown if isinstance(s, CollapsedSession)]
    assert len(collapsed) == 1 and collapsed[0].summary.kind == "session"
    assert collapsed[0].summary.session_id == "s1"
    assert {h.session_id for h in collapsed[0].hits} == {"s1"}
    rest = [s for s in shown if not isinstance(s, CollapsedSession)]
    assert (
        all(e.session_id != "s1" for e in rest)
        and len(shown) == len(entries) - len(collapsed[0].hits) + 1
    )

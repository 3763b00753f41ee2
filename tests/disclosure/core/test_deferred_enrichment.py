"""The service's write path: ingest acknowledges before entities and summaries are worked out,
the drain worker fills them in before embedding, and once it is done every answer is what an
inline ingest gives (real analyzer, embedder and tiers)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from disclosure import DisclosureLevel
from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import load_profile
from disclosure.sample import load_sample_conversation
from disclosure.service.host import service_profile
from tiers.memory import Memory

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
QUERIES = (
    "Why did we move billing off SQLite?",
    "What did Priya say about the invoices?",
    "What happened with the nightly batch?",
)


def _stored(c: DisclosureController) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    return {m.id: (m.summary, m.entities) for m in c.store.iter_memories()}


def _answers(c: DisclosureController) -> list[tuple[str, list[tuple[str, str, str]]]]:
    out = []
    for query in QUERIES:
        for level in (DisclosureLevel.MINIMAL, DisclosureLevel.DETAILED):
            result = c.disclose(query, now=NOW, level=level)
            out.append((result.text, [(i.id, i.layer, i.tier) for i in result.items]))
    return out


def test_enrichment_after_ack_ends_where_inline_enrichment_does(tmp_path: Path) -> None:
    sample = load_sample_conversation()
    with DisclosureController.from_profile("default", data_dir=tmp_path / "inline") as inline:
        assert not inline.store.defers_enrichment
        inline.ingest(sample)
        expected_records = _stored(inline)
        expected_answers = _answers(inline)
    assert any(entities for _, entities in expected_records.values())  # there is something to fill

    enriched_in: list[str] = []
    deferred_profile = service_profile(load_profile("default"))
    with DisclosureController(deferred_profile, data_dir=tmp_path / "deferred") as deferred:
        assert deferred.store.defers_enrichment
        enricher = deferred.store._enricher
        assert enricher is not None

        def recording(memories: list[Memory]) -> list[Memory]:
            enriched_in.append(threading.current_thread().name)
            return enricher(memories)

        deferred.store._enricher = recording
        report = deferred.ingest(sample)
        assert report.added == len(sample)
        assert threading.current_thread().name not in enriched_in  # not on the ingest's thread
        assert deferred.store.flush(timeout=300) == 0
        assert enriched_in  # the drain enriched them
        assert _stored(deferred) == expected_records
        hot = deferred.store.hot.get(list(expected_records))
        assert hot and all((m.summary, m.entities) == expected_records[m.id] for m in hot)
        assert _answers(deferred) == expected_answers


def test_a_detail_cached_before_the_enrichment_is_not_served_after_it(tmp_path: Path) -> None:
    sample = load_sample_conversation()
    with DisclosureController.from_profile("default", data_dir=tmp_path / "inline") as inline:
        inline.ingest(sample)
        expected = {m.id: inline.show(m.id) for m in sample}
    assert any("entities:" in text for text in expected.values())
    background = service_profile(load_profile("default"))
    with DisclosureController(background, data_dir=tmp_path / "d") as deferred:
        assert deferred.store.defers_enrichment
        enricher = deferred.store._enricher
        deferred.store._enricher = lambda memories: memories  # hold the enrichment back
        deferred.ingest(sample)
        assert deferred.store.flush(timeout=300) == 0  # embedded, not enriched
        assert not any(entities for _, entities in _stored(deferred).values())
        before = {m.id: deferred.show(m.id) for m in sample}  # cached without entities
        assert before != expected
        deferred.store._enricher = enricher
        deferred.store.outbox.requeue_missing([m.id for m in sample])
        assert deferred.store.flush(timeout=300) == 0
        assert {m.id: deferred.show(m.id) for m in sample} == expected


def test_forget_before_the_enrichment_leaves_nothing_to_enrich(tmp_path: Path) -> None:
    sample = load_sample_conversation()
    with DisclosureController(
        service_profile(load_profile("default")), data_dir=tmp_path / "d"
    ) as c:
        c.ingest(sample)
        gone = c.forget(ids=[sample[0].id])
        assert gone.ids == (sample[0].id,)
        assert c.store.flush(timeout=300) == 0
        assert c.store.get([sample[0].id]) == []
        assert sample[0].id not in {m.id for m in c.store.iter_memories()}


def test_what_a_crash_left_unenriched_is_enriched_after_a_restart(tmp_path: Path) -> None:
    """The state a killed service leaves (records archived without entities or summaries, their
    outbox rows still queued) is finished by the next one."""
    sample = load_sample_conversation()
    with DisclosureController.from_profile("default", data_dir=tmp_path / "inline") as inline:
        inline.ingest(sample)
        expected = _stored(inline)
    profile = service_profile(load_profile("default"))
    manual = profile.tiers.model_copy(
        update={"outbox": profile.tiers.outbox.model_copy(update={"drain": "manual"})}
    )
    data = tmp_path / "d"
    with DisclosureController(profile.model_copy(update={"tiers": manual}), data_dir=data) as acked:
        acked.store.ingest(sample)  # archived as the service acknowledges it, nothing drained
        assert acked.store.pending() == len(sample)
        assert not any(entities for _, entities in _stored(acked).values())
    with DisclosureController(profile, data_dir=data) as restarted:
        deadline = time.monotonic() + 300
        while restarted.store.pending() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert restarted.store.pending() == 0
        assert _stored(restarted) == expected

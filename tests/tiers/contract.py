"""The contract every Tier passes. Subclass ``TierContract`` and provide a ``tier`` fixture
that yields an empty tier of your kind (closing it afterwards)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tiers.base import Tier
from tiers.errors import TierUnavailableError
from tiers.memory import Memory

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXTS = [
    "Priya moved the billing service from SQLite to Postgres 16.",
    "Marco configured the payments gateway to retry failed charges three times.",
    "The nightly batch sent duplicate invoice emails because two cron runs overlapped.",
    "We picked ReportLab for PDF rendering because WeasyPrint needs system fonts.",
    "Invoice totals drifted by a cent because amounts were floats, not Decimal.",
    "The rate limiter throttled the mailer at fifty messages per second.",
]


def corpus() -> list[Memory]:
    return [
        Memory(
            id=f"c{i}",
            content=text,
            session_id=f"s{i % 2}",
            timestamp=BASE + timedelta(minutes=i),
            kind="response",
        )
        for i, text in enumerate(TEXTS)
    ]


class TierContract:
    """Behaviour shared by the hot, warm and cold tiers."""

    @pytest.fixture
    def tier(self) -> Tier:  # pragma: no cover - overridden
        raise NotImplementedError

    def test_is_a_tier(self, tier: Tier) -> None:
        """The object satisfies the Tier protocol and has a name."""
        assert isinstance(tier, Tier)
        assert tier.name

    def test_add_count_and_get_in_order(self, tier: Tier) -> None:
        """get returns memories in the order asked, skipping unknown ids."""
        tier.add(corpus())
        assert tier.count() == len(TEXTS)
        got = tier.get(["c3", "nope", "c0"])
        assert [m.id for m in got] == ["c3", "c0"]
        assert got[0] == corpus()[3]

    def test_search_ranks_the_relevant_memory_first(self, tier: Tier) -> None:
        """A query about one memory finds it first; scores lie in [0, 1]; ranks count from 0."""
        tier.add(corpus())
        hits = tier.search("why did invoice totals drift by a cent? floats versus Decimal", k=3)
        assert hits and hits[0].id == "c4"
        assert len(hits) <= 3
        assert [h.rank for h in hits] == list(range(len(hits)))
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.tier == tier.name for h in hits)

    def test_search_respects_k_and_empty_tiers(self, tier: Tier) -> None:
        """An empty tier finds nothing; k bounds the number of hits."""
        assert tier.search("billing", k=5) == []
        tier.add(corpus())
        assert len(tier.search("billing invoices Postgres", k=1)) <= 1

    def test_re_adding_the_same_memory_changes_nothing(self, tier: Tier) -> None:
        """Same id and content again: no duplicate."""
        tier.add(corpus())
        tier.add(corpus()[:2])
        assert tier.count() == len(TEXTS)
        assert len({h.id for h in tier.search("billing Postgres", k=6)}) == len(
            tier.search("billing Postgres", k=6)
        )

    def test_new_content_replaces_the_old_version(self, tier: Tier) -> None:
        """Same id with new content: the new text is found, the old one is gone."""
        tier.add(corpus())
        tier.add([corpus()[0].replace(content="Billing stays on SQLite in WAL mode after all.")])
        assert tier.count() == len(TEXTS)
        assert tier.get(["c0"])[0].content.startswith("Billing stays on SQLite")
        hits = tier.search("SQLite WAL mode", k=2)
        assert hits and hits[0].id == "c0"
        assert "Postgres" not in hits[0].memory.content

    def test_forget_removes_everywhere_in_the_tier(self, tier: Tier) -> None:
        """A forgotten memory is neither returned by get nor found by search."""
        tier.add(corpus())
        assert tier.forget(["c4", "unknown"]) == 1
        assert tier.count() == len(TEXTS) - 1
        assert tier.get(["c4"]) == []
        assert all(h.id != "c4" for h in tier.search("invoice totals cent Decimal floats", k=6))

    def test_k_zero_and_blank_queries_find_nothing(self, tier: Tier) -> None:
        """k <= 0 and a blank query return no hits, without error."""
        tier.add(corpus())
        assert tier.search("invoice totals", 0) == []
        assert tier.search("   ", 3) == []

    def test_a_forgotten_id_can_come_back(self, tier: Tier) -> None:
        """Adding a forgotten id again stores and finds it again."""
        tier.add(corpus())
        tier.forget(["c3"])
        tier.add([corpus()[3]])
        assert tier.count() == len(TEXTS)
        assert [m.id for m in tier.get(["c3"])] == ["c3"]
        assert tier.search("ReportLab PDF rendering WeasyPrint fonts", k=1)[0].id == "c3"

    def test_any_script_round_trips(self, tier: Tier) -> None:
        """Content in any script, with emoji and newlines, comes back exactly from get."""
        text = "Déploiement 🚀 reporté\n数据库迁移完成; 데이터베이스 이전 — done"
        memory = Memory(id="u1", content=text, timestamp=BASE, metadata={"k": ["ü", 1]})
        tier.add([memory])
        assert tier.get(["u1"]) == [memory]

    def test_a_closed_tier_refuses_work(self, tier: Tier) -> None:
        """After close, search raises TierUnavailableError (closing twice is fine)."""
        tier.close()
        tier.close()
        with pytest.raises(TierUnavailableError):
            tier.search("billing", k=1)

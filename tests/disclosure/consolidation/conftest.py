"""Fixtures for consolidation: a lean profile with a small working set, and a hand-made session."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure import DisclosureController, Memory, Profile, load_profile

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def profile_with(**sections: Any) -> Profile:
    """The default profile without a warm tier, with ``sections`` merged in (one level deep)."""
    data = load_profile("default").model_dump(mode="json")
    data["name"] = "consolidation-test"
    data["tiers"]["warm"]["embedder"] = "none"
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            for inner, setting in value.items():
                if isinstance(setting, dict) and isinstance(data[key].get(inner), dict):
                    data[key][inner] = {**data[key][inner], **setting}
                else:
                    data[key][inner] = setting
        else:
            data[key] = value
    return Profile.model_validate(data)


def hand_made() -> list[Memory]:
    """One session, two topics three hours apart (a database migration, then a team offsite),
    and a second short session."""
    rows = [
        ("m1", 0, "Dana", "We move the billing database from SQLite to Postgres 16."),
        ("m2", 2, "Priya", "I will write the Postgres migration in billing/migrations/0007.py."),
        ("m3", 4, "Dana", "The Postgres migration must keep every invoice id stable."),
        ("m4", 6, "Priya", "Migration dry run on the staging database passed."),
        ("m5", 190, "Marco", "The team offsite is in Lisbon on May 20."),
        ("m6", 192, "Dana", "Book the Lisbon hotel near the river for the offsite."),
        ("m7", 194, "Marco", "Offsite agenda: roadmap review, then a boat trip."),
    ]
    memories = [
        Memory(id=i, session_id="s1", speaker=who, content=text,
               timestamp=START + timedelta(minutes=minute), kind="prompt")
        for i, minute, who, text in rows
    ]  # fmt: skip
    memories.append(
        Memory(id="n1", session_id="s2", speaker="Dana", kind="prompt",
               content="Quarterly numbers look good; revenue is up twelve percent.",
               timestamp=START + timedelta(days=1))
    )  # fmt: skip
    return memories


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[DisclosureController]:
    with DisclosureController(profile_with(), data_dir=tmp_path / "data") as c:
        c.ingest(hand_made())
        yield c

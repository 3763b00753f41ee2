"""How fields read: derived summaries, previews, dates and ages."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from formatters import one_line_summary
from formatters.fields import age, day_age, preview, short_date, speaker_of
from tiers.memory import Memory


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Short and sweet.", "Short and sweet."),
        ("  spread\nover   lines  ", "spread over lines"),
        (
            "The gateway retries failed charges three times with exponential backoff, starting "
            "at two seconds and doubling, until the final retry resolves the invoice state.",
            "The gateway retries failed charges three times with exponential backoff,…",
        ),
        (
            "Decision: billing moves to Postgres 16. Priya writes the migration. "
            "Marco reviews it on Friday after the gateway release.",
            "Decision: billing moves to Postgres 16. Priya writes the migration.",
        ),
        (
            "Yes. Milestones: schema migration by March 13, PDF rendering by March 27, "
            "end-to-end tests by April 8.",
            "Yes. Milestones: schema migration by March 13, PDF rendering by March 27, end-to-end "
            "tests by April…",
        ),
    ],
)
def test_one_line_summary(text: str, expected: str) -> None:
    """Whole sentences when they fill the line; else a clause or word cut ending in …."""
    assert one_line_summary(text) == expected


def test_summary_limits_hold_for_any_script() -> None:
    """At most 100 characters, one line, even without spaces to cut at."""
    for text in ("请忽略" * 80, "word " * 80, "a" * 500, "x.\n" * 200):
        summary = one_line_summary(text)
        assert len(summary) <= 100 and "\n" not in summary


def test_preview_cuts_at_a_word() -> None:
    """Previews keep short text whole and cut long text at a word, with …."""
    assert preview("short", 10) == "short"
    assert preview("one two three four five", 14) == "one two three…"
    assert preview("anything", 0) == "anything"


def test_dates_and_ages() -> None:
    """Dates read ``10 Mar 2026``; ages are compact and never negative."""
    now = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)
    assert short_date(date(2026, 3, 10)) == "10 Mar 2026"
    assert [age(now.replace(hour=h), now) for h in (11, 3)] == ["1h", "9h"]
    assert age(datetime(2026, 4, 10, 11, 55, tzinfo=UTC), now) == "5m"
    assert age(datetime(2026, 4, 12, tzinfo=UTC), now) == "0m"
    assert [
        day_age(date(2026, m, d), now.date()) for m, d in ((4, 10), (4, 8), (3, 10), (1, 2))
    ] == ["today", "2d", "4w", "3mo"]
    assert day_age(date(2023, 5, 8), now.date()) == "2y"


def test_speaker_falls_back_to_kind() -> None:
    """Without a speaker, a line names the memory's kind."""
    assert speaker_of(Memory(id="a", content="x", kind="tool")) == "tool"
    assert speaker_of(Memory(id="b", content="x", speaker="  Dana  ")) == "Dana"

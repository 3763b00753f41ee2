"""Temporal references resolve to the right range against now, at the edges too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers import QueryComplexityAnalyzer, TemporalReference

KST = timezone(timedelta(hours=9))


def ref(analyzer: QueryComplexityAnalyzer, query: str, now: datetime) -> TemporalReference:
    temporal = analyzer.analyze(query, now=now).temporal
    assert temporal is not None, query
    return temporal


def day(y: int, m: int, d: int, tz: timezone = UTC) -> datetime:
    return datetime(y, m, d, tzinfo=tz)


@pytest.mark.parametrize(
    ("query", "now", "start", "end"),
    [
        # month boundaries
        ("yesterday?", datetime(2025, 3, 1, 0, 30, tzinfo=UTC), day(2025, 2, 28), day(2025, 3, 1)),
        ("yesterday?", datetime(2024, 3, 1, 8, tzinfo=UTC), day(2024, 2, 29), day(2024, 3, 1)),
        ("two days ago", datetime(2025, 3, 1, 9, tzinfo=UTC), day(2025, 2, 27), day(2025, 2, 28)),
        ("last month", datetime(2025, 1, 15, tzinfo=UTC), day(2024, 12, 1), day(2025, 1, 1)),
        ("last month", datetime(2025, 3, 31, tzinfo=UTC), day(2025, 2, 1), day(2025, 3, 1)),
        # "in March": the most recent March not in the future
        ("in March", datetime(2025, 2, 10, tzinfo=UTC), day(2024, 3, 1), day(2024, 4, 1)),
        (
            "in March",
            datetime(2025, 3, 12, 15, tzinfo=UTC),
            day(2025, 3, 1),
            datetime(2025, 3, 12, 15, tzinfo=UTC),
        ),
        ("in March", datetime(2025, 4, 2, tzinfo=UTC), day(2025, 3, 1), day(2025, 4, 1)),
        ("last March", datetime(2025, 3, 12, tzinfo=UTC), day(2024, 3, 1), day(2024, 4, 1)),
        ("in December", datetime(2025, 1, 5, tzinfo=UTC), day(2024, 12, 1), day(2025, 1, 1)),
        ("since March", datetime(2025, 5, 2, tzinfo=UTC), day(2025, 3, 1), day(2025, 5, 2)),
        ("3월에", datetime(2025, 2, 10, tzinfo=UTC), day(2024, 3, 1), day(2024, 4, 1)),
        # weeks are ISO weeks starting on Monday
        ("last week", datetime(2025, 3, 10, 9, tzinfo=UTC), day(2025, 3, 3), day(2025, 3, 10)),
        ("last week", datetime(2025, 3, 16, 23, tzinfo=UTC), day(2025, 3, 3), day(2025, 3, 10)),
        (
            "this week",
            datetime(2025, 3, 12, 9, tzinfo=UTC),
            day(2025, 3, 10),
            datetime(2025, 3, 12, 9, tzinfo=UTC),
        ),
        ("2 weeks ago", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 2, 24), day(2025, 3, 3)),
        # weekdays: "on" includes today, "last" does not
        (
            "on Monday",
            datetime(2025, 3, 10, 9, tzinfo=UTC),
            day(2025, 3, 10),
            datetime(2025, 3, 10, 9, tzinfo=UTC),
        ),
        ("last Monday", datetime(2025, 3, 10, 9, tzinfo=UTC), day(2025, 3, 3), day(2025, 3, 4)),
        ("on Friday", datetime(2025, 3, 10, 9, tzinfo=UTC), day(2025, 3, 7), day(2025, 3, 8)),
        ("지난 금요일", datetime(2025, 3, 10, 9, tzinfo=UTC), day(2025, 3, 7), day(2025, 3, 8)),
        # ranges never end after now
        (
            "this morning",
            datetime(2025, 3, 12, 9, tzinfo=UTC),
            day(2025, 3, 12),
            datetime(2025, 3, 12, 9, tzinfo=UTC),
        ),
        (
            "this morning",
            datetime(2025, 3, 12, 18, tzinfo=UTC),
            day(2025, 3, 12),
            datetime(2025, 3, 12, 12, tzinfo=UTC),
        ),
        (
            "last night",
            datetime(2025, 3, 12, 18, tzinfo=UTC),
            datetime(2025, 3, 11, 18, tzinfo=UTC),
            datetime(2025, 3, 12, 6, tzinfo=UTC),
        ),
        (
            "2 hours ago",
            datetime(2025, 3, 12, 15, tzinfo=UTC),
            datetime(2025, 3, 12, 12, tzinfo=UTC),
            datetime(2025, 3, 12, 14, tzinfo=UTC),
        ),
        (
            "the last 3 days",
            datetime(2025, 3, 12, 15, tzinfo=UTC),
            datetime(2025, 3, 9, 15, tzinfo=UTC),
            datetime(2025, 3, 12, 15, tzinfo=UTC),
        ),
        (
            "the past month",
            datetime(2025, 3, 31, 15, tzinfo=UTC),
            datetime(2025, 2, 28, 15, tzinfo=UTC),
            datetime(2025, 3, 31, 15, tzinfo=UTC),
        ),
        (
            "earlier",
            datetime(2025, 3, 12, 15, tzinfo=UTC),
            datetime(2025, 3, 11, 15, tzinfo=UTC),
            datetime(2025, 3, 12, 15, tzinfo=UTC),
        ),
        # explicit days
        ("on 2025-03-05", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 5), day(2025, 3, 6)),
        ("March 5th", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 5), day(2025, 3, 6)),
        ("the 5th of March", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 5), day(2025, 3, 6)),
        ("Dec 24", datetime(2025, 3, 12, tzinfo=UTC), day(2024, 12, 24), day(2024, 12, 25)),
        ("3월 5일", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 5), day(2025, 3, 6)),
        ("3일 전", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 9), day(2025, 3, 10)),
        ("이틀 전", datetime(2025, 3, 12, tzinfo=UTC), day(2025, 3, 10), day(2025, 3, 11)),
    ],
)
def test_ranges(
    analyzer: QueryComplexityAnalyzer, query: str, now: datetime, start: datetime, end: datetime
) -> None:
    """Each phrase resolves to [start, end) against now."""
    temporal = ref(analyzer, f"what happened {query}", now)
    assert (temporal.start, temporal.end) == (start, end)


def test_ranges_follow_the_timezone_of_now(analyzer: QueryComplexityAnalyzer) -> None:
    """Days start at midnight in now's timezone, not in UTC."""
    now = datetime(2025, 3, 12, 1, 30, tzinfo=KST)  # still March 11 in UTC
    temporal = ref(analyzer, "yesterday", now)
    assert (temporal.start, temporal.end) == (day(2025, 3, 11, KST), day(2025, 3, 12, KST))


@pytest.mark.parametrize(
    "query",
    [
        "What's left before the April 15 deadline?",  # a day ahead
        "Schedule it for Friday",
        "Let's meet next Monday",
        "This may take a while",
        "We ship on 2025-04-01",  # after now
        "Which tests broke before the merge?",  # "before" alone is too common a word
    ],
)
def test_days_ahead_and_lookalikes_are_not_references(
    analyzer: QueryComplexityAnalyzer, query: str
) -> None:
    """Days to come, a modal "may" and a bare "before" name no memory."""
    assert analyzer.analyze(query, now=datetime(2025, 3, 12, tzinfo=UTC)).temporal is None


def test_when_we_discussed_names_a_topic(analyzer: QueryComplexityAnalyzer) -> None:
    """ "when we discussed X" gives about=X and no range; a date beside it gives both."""
    now = datetime(2025, 3, 12, 15, tzinfo=UTC)
    topic = ref(analyzer, "What did we pick when we discussed the archive engine?", now)
    assert (topic.kind, topic.about, topic.start, topic.end) == (
        "topic",
        "the archive engine",
        None,
        None,
    )
    both = ref(analyzer, "When we talked about caching yesterday, which TTL won?", now)
    assert (both.kind, both.about, both.start) == ("yesterday", "caching", day(2025, 3, 11))
    korean = ref(analyzer, "결제 모듈에 대해 얘기했을 때 뭐라고 했지?", now)
    assert korean.about == "결제 모듈"


def test_the_first_reference_is_kept_and_every_kind_is_signalled(
    analyzer: QueryComplexityAnalyzer,
) -> None:
    """With two references the first in the text is the range; both are signals."""
    result = analyzer.analyze(
        "compare yesterday with last week", now=datetime(2025, 3, 12, tzinfo=UTC)
    )
    assert result.temporal is not None and result.temporal.kind == "yesterday"
    assert {"temporal:yesterday", "temporal:last_week"} <= set(result.detected_signals)


PHRASES = [
    "today",
    "yesterday",
    "this morning",
    "last night",
    "this week",
    "last week",
    "this month",
    "last month",
    "this year",
    "last year",
    "earlier",
    "recently",
    "in March",
    "in December",
    "on Monday",
    "last Sunday",
    "two days ago",
    "3 weeks ago",
    "a month ago",
    "2 hours ago",
    "the last 10 days",
    "March 1st",
    "Feb 28",
    "2024-02-29",
    "어제",
    "지난주",
    "5월",
    "2일 전",
]


@settings(max_examples=60, deadline=None)
@given(
    now=st.datetimes(
        min_value=datetime(2001, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC)
    ),
    phrase=st.sampled_from(PHRASES),
)
def test_a_range_never_ends_after_now_nor_before_it_starts(
    analyzer: QueryComplexityAnalyzer, now: datetime, phrase: str
) -> None:
    """Whatever now is, a resolved range satisfies start <= end <= now."""
    temporal = analyzer.analyze(f"what happened {phrase}", now=now).temporal
    if temporal is None or temporal.start is None:  # e.g. Feb 29 in a year without one
        return
    assert temporal.end is not None
    assert temporal.start <= temporal.end <= now


def test_a_weekday_naming_a_thing_is_no_time() -> None:
    """'the Sunday mass' and 'my Sunday group rides' name events, not last Sunday; a counted
    phrase places 'the Wednesday two months ago'; 'last Friday' and 'Sunday morning' are days."""
    from datetime import UTC, datetime

    from analyzers import QueryComplexityAnalyzer

    analyzer = QueryComplexityAnalyzer()
    now = datetime(2023, 4, 1, 12, tzinfo=UTC)

    def span(query: str) -> tuple[datetime | None, datetime | None] | None:
        temporal = analyzer.analyze(query, now=now).temporal
        return None if temporal is None else (temporal.start, temporal.end)

    assert span("How long between the Sunday mass and the Ash Wednesday service?") is None
    assert span("Why are my Sunday group rides faster?") is None
    assert span("What did I do on the Wednesday two months ago?") == (
        datetime(2023, 2, 1, tzinfo=UTC),
        datetime(2023, 3, 1, tzinfo=UTC),
    )
    assert span("What happened last Friday?") == (
        datetime(2023, 3, 31, tzinfo=UTC),
        datetime(2023, 4, 1, tzinfo=UTC),
    )
    assert span("Sunday morning we met, right?") == (
        datetime(2023, 3, 26, tzinfo=UTC),
        datetime(2023, 3, 27, tzinfo=UTC),
    )

"""The expansion rules on normalised confidences."""

from __future__ import annotations

from datetime import UTC, datetime

from analyzers import QueryAnalysis, TemporalReference
from disclosure.core.pipeline.expansion import decide
from disclosure.core.pipeline.fusion import Candidate
from disclosure.core.profiles import ExpansionConfig
from formatters.base import Layer
from tiers.memory import Memory

CONFIG = ExpansionConfig()


def cands(*scores: float, day: int = 1) -> list[Candidate]:
    return [
        Candidate(
            Memory(id=f"m{i}", content="x", timestamp=datetime(2026, 3, day + i, tzinfo=UTC)),
            score,
            1.0 / (i + 1),
            "warm",
            ("warm",),
        )
        for i, score in enumerate(scores)
    ]


def analysis(**fields: object) -> QueryAnalysis:
    return QueryAnalysis(query="q", level="standard", **fields)  # type: ignore[arg-type]


def test_high_confidence_alone_expands_to_detail() -> None:
    """One candidate at >= 0.92 and no other: detail for it."""
    e = decide(cands(0.95, 0.5, 0.4), analysis(), CONFIG)
    assert e.reason == "high_confidence" and e.layers == {"m0": Layer.DETAIL}


def test_clear_winner_needs_the_gap() -> None:
    """>= 0.85 and 0.10 ahead of the second: detail; a smaller gap is not a clear winner."""
    assert decide(cands(0.88, 0.70), analysis(), CONFIG).reason == "clear_winner"
    assert decide(cands(0.88, 0.82), analysis(), CONFIG).reason == "low_confidence"


def test_ambiguity_shows_the_timeline_of_the_top_three() -> None:
    """Three near-equal strong candidates: the timeline layer for the top three."""
    e = decide(cands(0.93, 0.93, 0.85, 0.2), analysis(), CONFIG)
    assert e.reason == "ambiguous_results"
    assert e.layers == {f"m{i}": Layer.TIMELINE for i in range(3)}


def test_low_confidence_stays_an_index() -> None:
    """Weak candidates expand nothing."""
    e = decide(cands(0.5, 0.4, 0.3), analysis(), CONFIG)
    assert e.reason == "low_confidence" and not e.layers


def test_explicit_ids_come_on_top_of_the_automatic_rules() -> None:
    """Named memories always go to detail, and do not use up the automatic expansions."""
    e = decide(cands(0.95, 0.1), analysis(explicit_ids=["m9"]), CONFIG, explicit=["m9"])
    assert e.layers == {"m9": Layer.DETAIL, "m0": Layer.DETAIL}
    assert e.reason == "explicit_id+high_confidence"


def test_tell_me_more_expands_what_it_points_at_within_the_limit() -> None:
    """'tell me more' details the previous items, at most max_auto_expansions of them."""
    e = decide(
        cands(0.3), analysis(expansion_request=True), CONFIG, requested=["p1", "p2", "p3", "p4"]
    )
    assert e.reason == "user_request"
    assert list(e.layers) == ["p1", "p2", "p3"]


def test_a_named_time_shows_the_timeline_around_a_hit_in_range() -> None:
    """With no stronger rule, the first candidate inside the named range gets a timeline."""
    when = TemporalReference(
        phrase="on March 3",
        start=datetime(2026, 3, 3, tzinfo=UTC),
        end=datetime(2026, 3, 4, tzinfo=UTC),
    )
    e = decide(cands(0.5, 0.4, 0.3), analysis(temporal=when), CONFIG)
    assert e.reason == "temporal_proximity" and e.layers == {"m2": Layer.TIMELINE}


def test_max_auto_expansions_zero_turns_the_rules_off() -> None:
    """With no automatic expansions allowed, only explicit ids expand."""
    config = ExpansionConfig(max_auto_expansions=0)
    assert decide(cands(0.99), analysis(), config).reason == "low_confidence"

"""The documented precedence: overrides, then the base, keywords, and floors; the complexity."""

from __future__ import annotations

from datetime import UTC, datetime

from analyzers import AnalyzerConfig, DisclosureLevel, QueryComplexityAnalyzer
from analyzers.precedence import Vote, complexity, decide

M, S, D, C = DisclosureLevel
NOW = datetime(2025, 3, 12, 15, 30, tzinfo=UTC)


def kw(level: DisclosureLevel, phrase: str) -> Vote:
    return Vote(f"keyword:{level}:{phrase}", level, phrase)


def ov(level: DisclosureLevel, phrase: str) -> Vote:
    return Vote(f"override:{level}:{phrase}", level, phrase)


def test_nothing_fired_gives_the_default() -> None:
    """No votes: the profile's default level."""
    assert decide(default=S).level is S
    assert decide(default=D).level is D


def test_the_highest_override_wins_over_everything() -> None:
    """Overrides beat keywords, the inherited level and floors; the highest override wins."""
    decision = decide(
        default=S,
        overrides=[ov(M, "brief"), ov(C, "full context")],
        keywords=[kw(D, "explain")],
        inherited=D,
        floors=[Vote("long_query", D)],
    )
    assert (decision.level, decision.override) == (C, "full context")
    lone = decide(default=S, overrides=[ov(M, "brief")], floors=[Vote("temporal:yesterday", D)])
    assert lone.level is M
    assert "override 'brief' wins" in lone.reason


def test_minimal_keywords_soften_next_to_stronger_ones() -> None:
    """'just' with 'explain' is detailed; 'just' alone is minimal."""
    assert decide(default=S, keywords=[kw(M, "just"), kw(D, "explain")]).level is D
    alone = decide(default=S, keywords=[kw(M, "just")])
    assert alone.level is M
    assert "asks for less" in alone.reason


def test_the_highest_keyword_wins() -> None:
    """The first tricky case, as votes: everything about > explain > just."""
    decision = decide(
        default=S, keywords=[kw(M, "just"), kw(D, "explain"), kw(C, "everything about")]
    )
    assert decision.level is C
    assert "'just' read as a softener" in decision.reason


def test_a_keyword_never_lowers_an_inherited_level_but_minimal_narrows_it() -> None:
    """Inherited comprehensive stays with 'explain'; 'just' alone narrows it to minimal."""
    kept = decide(default=S, inherited=C, keywords=[kw(D, "explain")])
    assert kept.level is C
    assert "does not lower it" in kept.reason
    assert decide(default=S, inherited=C, keywords=[kw(M, "just")]).level is M


def test_floors_lift_but_never_lower() -> None:
    """Floors raise a lower level and leave a higher one alone."""
    lifted = decide(default=S, keywords=[kw(M, "quick")], floors=[Vote("temporal:yesterday", D)])
    assert lifted.level is D
    assert lifted.reason == "temporal:yesterday lifts the level to detailed"
    assert (
        decide(
            default=S, keywords=[kw(C, "everything about")], floors=[Vote("long_query", D)]
        ).level
        is C
    )


def test_floors_come_from_the_profile() -> None:
    """A null floor lifts nothing: temporal references can be left at standard."""
    config = AnalyzerConfig(floors={"temporal": None})
    analyzer = QueryComplexityAnalyzer(config)
    result = analyzer.analyze("what did we decide yesterday?", now=NOW)
    assert result.level is S
    assert "temporal:yesterday" in result.detected_signals


def test_seed_tricky_cases_through_the_analyzer(analyzer: QueryComplexityAnalyzer) -> None:
    """'Just explain everything about the authentication system' and 'Debug the issue'."""
    everything = analyzer.analyze("Just explain everything about the authentication system")
    assert everything.level is C
    assert everything.votes == {
        "keyword:minimal:just": M,
        "keyword:detailed:explain": D,
        "keyword:comprehensive:everything about": C,
    }
    debug = analyzer.analyze("Debug the issue")
    assert debug.level is D
    assert debug.reason == "keyword 'debug': detailed"


def test_complexity_bands_and_bounds() -> None:
    """Each level owns a quarter of [0, 1]; the extremes are 0 and 1."""
    config = AnalyzerConfig()
    floor = complexity(
        M, config, words=0, entities=0, temporal=False, continuation=False, triggers=0
    )
    ceiling = complexity(
        C, config, words=500, entities=50, temporal=True, continuation=True, triggers=9
    )
    assert (floor, ceiling) == (0.0, 1.0)
    for level in DisclosureLevel:
        low = complexity(
            level, config, words=1, entities=0, temporal=False, continuation=False, triggers=0
        )
        high = complexity(
            level, config, words=40, entities=9, temporal=True, continuation=True, triggers=3
        )
        assert level.rank / 4 <= low < high <= (level.rank + 1) / 4


def test_complexity_weights_come_from_the_profile() -> None:
    """Only length weighs: a long query tops its band, a short one sits at its bottom."""
    config = AnalyzerConfig(
        complexity={"length": 1, "entities": 0, "temporal": 0, "continuation": 0, "keywords": 0}
    )
    kwargs = {"entities": 9, "temporal": True, "continuation": True, "triggers": 5}
    assert complexity(S, config, words=0, **kwargs) == 0.25  # type: ignore[arg-type]
    assert complexity(S, config, words=30, **kwargs) == 0.5  # type: ignore[arg-type]

"""The ``enumeration`` signal: a query that asks for a set or a count, not one fact."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from analyzers import AnalyzerConfig, DisclosureLevel, QueryComplexityAnalyzer
from analyzers.config import EnumerationConfig
from analyzers.enumeration import asks_for_set

D = DisclosureLevel


@pytest.mark.parametrize(
    "query",
    [
        "Which cities has John been to?",
        "What video games does Nate play?",
        "What musical artists/bands has Melanie seen?",
        "What are the skills that Nate has helped others learn?",
        "What were some changes she went through?",
        "How many plants did I acquire in the last month?",
        "What kinds of yoga has Maria practised?",
        "Which city have both Jean and John visited?",
        "List the services we migrated",
        "지난달에 몇 번 갔어?",
    ],
)
def test_sets_and_counts_are_enumerations(query: str) -> None:
    assert asks_for_set(query, EnumerationConfig())


@pytest.mark.parametrize(
    "query",
    [
        "What is the name of my cat?",
        "What does John like about Lebron James?",
        "Which activity helps Nate escape?",
        "What status does the deploy have?",  # -us is not a plural ending
        "What class was the address in?",  # nor -ss
        "Where did I complete my Bachelor's degree?",
        "Why does the nightly batch fail?",
    ],
)
def test_one_fact_is_not_an_enumeration(query: str) -> None:
    assert not asks_for_set(query, EnumerationConfig())


def test_the_lists_come_from_the_config() -> None:
    """Phrases, question words and irregular plurals are the profile's, not built in."""
    config = EnumerationConfig(phrases=("in all",), question_words=("quel",), plurals=("gens",))
    assert asks_for_set("how much in all?", config)
    assert not asks_for_set("how many were there?", config)  # no longer a phrase
    assert asks_for_set("quel gens did you meet?", config)
    assert not asks_for_set("which cities has he seen?", config)  # "which" is not listed
    assert not asks_for_set("how much in all?", EnumerationConfig(enabled=False))


def test_blank_phrases_are_rejected() -> None:
    with pytest.raises(ValidationError):
        EnumerationConfig(phrases=("how many", " "))


def test_the_signal_is_reported_and_lifts_only_through_its_floor() -> None:
    """The signal is always reported; the level rises only when the profile gives a floor."""
    query = "Which cities has John been to?"
    plain = QueryComplexityAnalyzer(AnalyzerConfig()).analyze(query)
    assert "enumeration" in plain.detected_signals
    assert plain.level is D.STANDARD
    lifted = QueryComplexityAnalyzer(AnalyzerConfig(floors={"enumeration": "detailed"})).analyze(
        query
    )
    assert lifted.level is D.DETAILED
    assert lifted.votes["enumeration"] is D.DETAILED
    assert "enumeration lifts the level to detailed" in lifted.reason
    one = QueryComplexityAnalyzer(AnalyzerConfig(floors={"enumeration": "detailed"})).analyze(
        "What is the name of my cat?"
    )
    assert one.level is D.STANDARD
    assert "enumeration" not in one.detected_signals


def test_an_override_still_wins_over_the_floor() -> None:
    analyzer = QueryComplexityAnalyzer(AnalyzerConfig(floors={"enumeration": "detailed"}))
    assert analyzer.analyze("briefly: how many plants did I buy?").level is D.MINIMAL

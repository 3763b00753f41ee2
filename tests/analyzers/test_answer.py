"""What a question asks for: the kind of answer and the noun, with the trained parse and with the
rules alone."""

from __future__ import annotations

import pytest

from analyzers import AnalyzerConfig, QueryComplexityAnalyzer
from analyzers.answer import answer_type
from analyzers.config import AnswerConfig, AnswerKind

CASES = [
    ("What video games does Nate play?", "thing", "video games"),
    ("Which cities has John been to?", "place", "cities"),
    ("What are the names of John's children?", "person", "children"),
    ("How many plants did I buy last month?", "count", "plants"),
    ("Which TV series does Tim mention watching?", "thing", "tv series"),
    ("What are Joanna's hobbies?", None, "hobbies"),
    ("Where did Caroline move from?", "place", None),
    ("When did Melanie go camping?", "date", None),
    ("Who is Nate's favorite author?", "person", None),
    ("Which country do I want to visit next?", "place", "country"),
    ("What tournaments has Nate won?", "event", "tournaments"),
]


@pytest.mark.parametrize("trained", [True, False], ids=["trained", "rules"])
@pytest.mark.parametrize(("query", "kind", "head"), CASES)
def test_the_kind_and_the_noun(
    analyzer: QueryComplexityAnalyzer,
    rules_analyzer: QueryComplexityAnalyzer,
    trained: bool,
    query: str,
    kind: str | None,
    head: str | None,
) -> None:
    answer = (analyzer if trained else rules_analyzer).analyze(query).answer
    assert answer is not None
    assert (answer.kind, answer.head) == (kind, head)


@pytest.mark.parametrize(
    "query",
    ["Remind me about the deploy", "ok thanks", "fix the flaky test in ci.yaml please"],
)
def test_a_request_asks_for_no_kind(analyzer: QueryComplexityAnalyzer, query: str) -> None:
    assert analyzer.analyze(query).answer is None


def test_labels_come_from_the_kind() -> None:
    answer = answer_type("Which cities has John been to?", AnswerConfig())
    assert answer is not None
    assert answer.labels == ("GPE", "LOC", "FAC")


def test_the_profile_names_the_nouns() -> None:
    """A noun listed under a kind of the profile gets that kind (on its stem: "herbs")."""
    kinds = {"plant": AnswerKind(nouns=("herb",), labels=("PLANT",))}
    config = AnswerConfig(kinds=kinds)
    answer = answer_type("Which herbs did I plant?", config)
    assert answer is not None
    assert (answer.kind, answer.labels) == ("plant", ("PLANT",))
    assert answer_type("Which cities has John been to?", config) is not None
    assert answer_type("Which herbs did I plant?", AnswerConfig(enabled=False)) is None


def test_a_blank_noun_is_refused() -> None:
    with pytest.raises(ValueError, match=r"answers -> place -> nouns: phrases must not be blank"):
        AnswerConfig(kinds={"place": AnswerKind(nouns=(" ",))})


def test_the_analyzer_carries_it_in_its_analysis() -> None:
    analysis = QueryComplexityAnalyzer(AnalyzerConfig()).analyze("Which cities has John seen?")
    assert analysis.answer is not None
    assert analysis.answer.kind == "place"
    assert analysis.model_dump()["answer"]["labels"] == ("GPE", "LOC", "FAC")

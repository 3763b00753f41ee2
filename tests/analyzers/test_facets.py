"""A memory's facets: typed entities, quoted titles and noun heads, found at enrichment."""

from __future__ import annotations

import pytest

from analyzers import AnalyzerConfig, enrich_many
from analyzers.facets import labels_of, quoted_titles


@pytest.fixture(scope="module")
def trained_facets() -> list[tuple[str, ...]]:
    texts = [
        "I went to Chicago last week, it was awesome!",
        'I just watched "Little Women" and it was amazing!',
        "We played a few games at the tournament.",
    ]
    return [e.facets for e in enrich_many(texts, config=AnalyzerConfig())]


def test_typed_entities_from_the_trained_pipeline(trained_facets: list[tuple[str, ...]]) -> None:
    chicago, women, games = trained_facets
    assert "GPE:chicago" in chicago
    assert "DATE:last week" in chicago
    assert "QUOTED:little women" in women
    assert {"NOUN:gam", "NOUN:tournament"} <= set(games)  # noun heads, as stems


def test_the_rules_alone_give_gazetteer_names_and_quoted_titles() -> None:
    config = AnalyzerConfig(spacy_pipeline=None)
    seoul, quoted = enrich_many(
        ["We moved to Seoul in May.", 'Have you read "The Wheel of Time" yet?'], config=config
    )
    assert "GPE:seoul" in seoul.facets
    assert not any(f.startswith("NOUN:") for f in seoul.facets)  # no parse, no noun heads
    assert "QUOTED:the wheel of time" in quoted.facets
    assert labels_of(quoted.facets) >= {"QUOTED"}


@pytest.mark.parametrize(
    ("text", "titles"),
    [
        ('I loved "Inception" and “Dune”.', ["Inception", "Dune"]),
        ('she said "no way" twice', []),  # not a title: no capital
        ('"This is a whole quoted sentence that goes on and on and on," he said', []),
    ],
)
def test_quoted_titles(text: str, titles: list[str]) -> None:
    assert quoted_titles(text) == titles

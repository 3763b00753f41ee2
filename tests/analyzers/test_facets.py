"""A memory's facets: typed entities, quoted titles and noun heads, found at enrichment."""

from __future__ import annotations

import pytest

from analyzers import AnalyzerConfig, enrich_many, facets_many
from analyzers.facets import labels_of, quoted_titles
from analyzers.trained import data_dir


@pytest.fixture(scope="module")
def trained_facets() -> list[tuple[str, ...]]:
    texts = [
        "I went to Chicago last week, it was awesome!",
        'I just watched "Little Women" and it was amazing!',
        "We played a few games at the tournament.",
    ]
    return facets_many(texts, config=AnalyzerConfig())


def test_typed_entities_from_the_trained_pipeline(trained_facets: list[tuple[str, ...]]) -> None:
    chicago, women, games = trained_facets
    assert "GPE:chicago" in chicago
    assert "DATE:last week" in chicago
    assert "QUOTED:little women" in women
    assert not any(f.startswith("NOUN:") for f in games)  # the pinned one reads entities only


def test_a_pipeline_of_your_own_that_parses_gives_noun_heads() -> None:
    """Named by its directory, a pipeline is yours: run whole, its noun chunks' heads kept."""
    folder = data_dir()
    assert folder is not None
    (games,) = facets_many(
        ["We played a few games at the tournament."],
        config=AnalyzerConfig(spacy_pipeline=str(folder)),
    )
    assert {"NOUN:gam", "NOUN:tournament"} <= set(games)  # noun heads, as stems


def test_a_long_memory_is_read_on_its_first_characters() -> None:
    text = "I moved to Chicago. " + "Nothing else happened that day. " * 10 + "Then Boston."
    config = AnalyzerConfig()
    cut = config.model_copy(
        update={"entities": config.entities.model_copy(update={"trained_chars": 100})}
    )
    (whole,), (short,) = facets_many([text], config=config), facets_many([text], config=cut)
    assert {"GPE:chicago", "GPE:boston"} <= set(whole)
    assert "GPE:chicago" in short
    assert "GPE:boston" not in short


def test_enrichment_costs_what_the_rules_cost() -> None:
    """The pinned pipeline reads memories off the ingest path (their facets): enrichment's
    entities are the rules' alone, with it and without."""
    text = "My sister Alice flew to Boston on Monday."
    with_it = enrich_many([text], config=AnalyzerConfig())[0]
    rules = enrich_many([text], config=AnalyzerConfig(spacy_pipeline=None))[0]
    assert with_it == rules


def test_the_rules_alone_give_gazetteer_names_and_quoted_titles() -> None:
    config = AnalyzerConfig(spacy_pipeline=None)
    seoul, quoted = facets_many(
        ["We moved to Seoul in May.", 'Have you read "The Wheel of Time" yet?'], config=config
    )
    assert "GPE:seoul" in seoul
    assert not any(f.startswith("NOUN:") for f in seoul)  # no parse, no noun heads
    assert "QUOTED:the wheel of time" in quoted
    assert labels_of(quoted) >= {"QUOTED"}


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

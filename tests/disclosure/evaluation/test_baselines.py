"""Baselines: plain rendering, exact budgets never exceeded, and rankings that make sense."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disclosure.evaluation import BASELINES, Dataset, evidence_found, make_baseline, render_turn
from disclosure.evaluation.baselines import Baseline, baseline_name, render_conversation
from disclosure.evaluation.runner import Discloser
from formatters.tokens import get_token_counter
from tiers.errors import RegistryError

CHEAP = ("full", "recency", "bm25")


def built(name: str, tiny: Dataset, conversation: str = "conv-a") -> Baseline:
    baseline = make_baseline(name)
    baseline.ingest(tiny.conversation(conversation).memories)
    return baseline


def test_every_baseline_is_a_discloser() -> None:
    """The runner drives baselines through the same four calls as the controller."""
    for name in BASELINES:
        assert isinstance(make_baseline(name), Discloser)


def test_names_with_or_without_the_prefix_and_a_miss_lists_them() -> None:
    """'baseline:bm25' and 'BM25' name the same baseline; an unknown name lists the five."""
    assert baseline_name("baseline:bm25") == baseline_name("BM25") == "bm25"
    with pytest.raises(RegistryError, match="available: bm25, dense, full, hybrid, recency"):
        make_baseline("baseline:tfidf")


def test_plain_rendering_is_date_speaker_text(tiny: Dataset) -> None:
    """'[3 March 2024] Ana: ...', the day only (turn times within a session are made up)."""
    memory = tiny.conversation("conv-a").memories[0]
    assert render_turn(memory) == "[3 March 2024] Ana: Morning Ben! How was the weekend?"


def test_full_context_is_every_turn_unbudgeted(tiny: Dataset) -> None:
    """baseline:full discloses the whole conversation; its budget is its own token count."""
    memories = tiny.conversation("conv-a").memories
    result = built("full", tiny).disclose("anything", budget=10)
    assert result.text == render_conversation(memories)
    assert len(result.items) == len(memories)
    assert result.tokens_used == result.budget == result.full_history_tokens
    assert result.tokens_used == get_token_counter()(result.text)


def test_recency_takes_the_latest_turns_as_a_window(tiny: Dataset) -> None:
    """With room for about two turns, recency discloses the last two, in time order."""
    baseline = built("recency", tiny)
    lines = render_conversation(tiny.conversation("conv-a").memories).splitlines()
    budget = get_token_counter()("\n".join(lines[-2:]))
    result = baseline.disclose("where do we celebrate?", budget=budget)
    assert result.text == "\n".join(lines[-2:])
    assert [i.id for i in result.items] == ["conv-a/D3:4", "conv-a/D3:3"]


def test_bm25_puts_the_matching_turn_first(tiny: Dataset) -> None:
    """'chain and brakes' ranks D2:2 first and a small budget still holds its full text."""
    baseline = built("bm25", tiny)
    result = baseline.disclose("When did Ben replace the chain and brakes?", budget=40)
    assert result.items[0].id == "conv-a/D2:2"
    contents = tiny.conversation("conv-a").contents
    assert evidence_found(result.text, {"conv-a/D2:2": contents["conv-a/D2:2"]})


def test_results_render_in_time_order_and_account_for_every_item(tiny: Dataset) -> None:
    """The text lists the chosen turns chronologically; items carry their line's tokens."""
    baseline = built("bm25", tiny)
    result = baseline.disclose("bicycle race cat", budget=120)
    lines = result.text.splitlines()
    everything = render_conversation(tiny.conversation("conv-a").memories).splitlines()
    assert lines == [line for line in everything if line in lines]
    counter = get_token_counter()
    assert sum(i.tokens for i in result.items) == sum(counter(line) for line in lines)


def test_an_empty_store_discloses_nothing() -> None:
    """Before ingest there is nothing to rank, and nothing breaks."""
    for name in CHEAP:
        result = make_baseline(name).disclose("anything", budget=50)
        assert result.text == "" and result.items == () and result.tokens_used == 0


def test_a_budgeted_baseline_needs_a_budget(tiny: Dataset) -> None:
    """Only baseline:full runs without one."""
    with pytest.raises(ValueError, match="needs a token budget"):
        built("bm25", tiny).disclose("x")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(("recency", "bm25")),
    query=st.text(min_size=0, max_size=40),
    budget=st.integers(min_value=1, max_value=400),
)
def test_no_budget_is_ever_exceeded(tiny: Dataset, name: str, query: str, budget: int) -> None:
    """Whatever the query and budget, the exact token count of the text stays within it."""
    baseline = built(name, tiny, "conv-b" if budget % 2 else "conv-a")
    result = baseline.disclose(query, budget=budget)
    assert get_token_counter()(result.text) <= budget
    assert result.tokens_used <= budget == result.budget


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_dense_and_hybrid_find_the_paraphrased_turn(tiny: Dataset, name: str) -> None:
    """With the real MiniLM, 'adopted pet' ranks the cat-adoption turn within the top three."""
    baseline = built(name, tiny)
    result = baseline.disclose("Which pet did Ana adopt from the animal shelter?", budget=400)
    top = [i.id for i in sorted(result.items, key=lambda i: -i.score)[:3]]
    assert "conv-a/D1:3" in top
    assert get_token_counter()(result.text) <= 400


@pytest.mark.slow
def test_the_minilm_adapter_returns_unit_vectors_and_memoises() -> None:
    """384-d L2-normalised float32 vectors; the memo returns the same vector for the same text."""
    from disclosure.evaluation.embedding import default_embedder

    embedder = default_embedder()
    vectors = embedder.embed(["a red kayak", "a red kayak", "tax deadline"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[1])
    assert float(vectors[0] @ vectors[2]) < 0.5

"""Spending by need: a sure leader stops early, a flat curve and a question that gathers go on,
the ceiling bounds it, and the reason says why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analyzers import AnalyzerConfig, QueryComplexityAnalyzer
from disclosure.core.controller import DisclosureController
from disclosure.core.pipeline.spend import (
    FEATURES,
    Shape,
    choose,
    decide,
    need_features,
    packed_shares,
    query_signals,
    reckons,
)
from disclosure.core.profiles import NEED_WEIGHTS, Profile, load_profile

# A model that only reads how much of the candidates' chance a budget holds, and, for the
# question that gathers, wants more of it.
SHARE_ONLY = {"bias": -8.0, "share": 12.0}
GATHERING_WANTS_MORE = {**SHARE_ONLY, "gathers": -3.0}


def shape(chances: list[float], *, cost: int = 40, sessions: int = 1, **query: float) -> Shape:
    n = len(chances)
    return Shape(
        chances=np.array(chances),
        costs=np.full(n, float(cost)),
        groups=[(f"s{i % sessions}", "20240101") for i in range(n)],
        query=query,
    )


def test_packed_shares_follow_the_packing() -> None:
    """40-token lines, a 12-token heading per new group, a 25-token frame: 100 tokens hold one
    line (77), 150 two in one group (117); in 120, a line of a second group (its heading too:
    129) is passed over for the next one of the first group (117)."""
    one_group = shape([0.5, 0.3, 0.2])
    assert packed_shares(one_group, [100, 150, 1000]).tolist() == pytest.approx([0.5, 0.8, 1.0])
    two_groups = shape([0.5, 0.3, 0.2], sessions=2)
    assert packed_shares(two_groups, [120, 130]).tolist() == pytest.approx([0.7, 0.8])


def test_a_sure_leader_stops_early_and_a_flat_curve_goes_on() -> None:
    sure = decide(shape([0.9] + [0.002] * 30), SHARE_ONLY, price=0.1, ceiling=2000)
    flat = decide(shape([0.05] * 31), SHARE_ONLY, price=0.1, ceiling=2000)
    assert sure.tokens <= 150
    assert flat.tokens >= 1000
    assert flat.tokens > 4 * sure.tokens


def test_a_question_that_gathers_is_given_more() -> None:
    curve = [0.4, 0.3] + [0.02] * 30
    plain = decide(shape(curve), GATHERING_WANTS_MORE, price=0.1, ceiling=2000)
    gathering = decide(shape(curve, gathers=1.0), GATHERING_WANTS_MORE, price=0.1, ceiling=2000)
    assert gathering.tokens > plain.tokens
    assert "asks for a kind of thing" in gathering.reason


def test_the_ceiling_bounds_it_and_the_reason_says_why() -> None:
    need = decide(shape([0.05] * 40), SHARE_ONLY, price=0.001, ceiling=700)
    assert need.tokens == 700
    assert "(the ceiling: no more)" in need.reason
    sure = decide(shape([0.9, 0.01, 0.01]), SHARE_ONLY, price=0.1, ceiling=700)
    assert sure.tokens == 100
    assert sure.reason.startswith("by need: 100 tokens, predicted to hold 9")
    assert "(150 would add +" in sure.reason
    assert "leader 90% likely, runner-up 1%, best 3 from 1 session" in sure.reason


@pytest.mark.parametrize("ceiling", [0, -50])
def test_no_room_spends_nothing_and_says_so(ceiling: int) -> None:
    """A prompt that already fills the model's window leaves a ceiling of 0 (or less): the need
    is 0 tokens, not a math error (an HTTP client met it as a 500)."""
    need = decide(shape([0.5, 0.2]), SHARE_ONLY, price=0.1, ceiling=ceiling)
    assert need.tokens == 0 and "nothing to spend" in need.reason
    assert need_features(shape([0.5]), [0, 100]).shape[0] == 2


def test_a_dearer_token_spends_less() -> None:
    curve = shape([0.3, 0.2, 0.1] + [0.03] * 30)
    spent = [decide(curve, SHARE_ONLY, price=p, ceiling=4000).tokens for p in (0.02, 0.1, 0.5)]
    assert spent[0] > spent[1] > spent[2]


def test_choose_takes_the_most_worth_its_price() -> None:
    predicted = np.array([0.5, 0.8, 0.85, 0.86])
    assert choose(predicted, [100, 200, 400, 800], 0.1) == 2  # 0.81 beats 0.78 and 0.78
    assert choose(predicted, [100, 200, 400, 800], 1.0) == 1  # dearer: 0.6 beats 0.45


def test_features_are_one_row_per_budget() -> None:
    rows = need_features(shape([0.5, 0.2], enumeration=1.0, words=0.5), [100, 1000])
    assert rows.shape == (2, len(FEATURES))
    column = dict(zip(FEATURES, rows.T, strict=True))
    assert column["enumeration"].tolist() == [1.0, 1.0]
    assert column["budget"].tolist() == pytest.approx([np.log(0.1), 0.0])
    assert column["enumeration_budget"].tolist() == pytest.approx([np.log(0.1), 0.0])


def test_query_signals_read_the_analysis() -> None:
    analyzer = QueryComplexityAnalyzer(AnalyzerConfig())
    signals = query_signals(analyzer.analyze("Which cities has John been to?"), named=1)
    assert signals["gathers"] == 1.0
    assert signals["one_named"] == 1.0
    assert signals["two_named"] == 0.0
    plain = query_signals(analyzer.analyze("remind me about the deploy"), named=0)
    assert plain["gathers"] == plain["enumeration"] == 0.0


def _lean(**need: object) -> Profile:
    data = load_profile("default").model_dump(mode="json")
    data["tiers"]["warm"]["embedder"] = "none"
    data["budget"]["need"].update(need)
    return Profile.model_validate(data)


TURNS = [
    {"id": f"m{i}", "content": text, "speaker": "Ana", "session_id": f"s{i // 4}"}
    for i, text in enumerate(
        [
            "The staging database password rotates every Monday at noon.",
            "We moved the nightly backup job to 03:00 UTC.",
            "Lunch on Friday is at the Thai place near the office.",
            "The flaky login test fails when the clock crosses midnight.",
            "Ana prefers tea over coffee in the afternoon.",
            "The release train leaves every second Thursday.",
            "Budget review with finance is next week.",
            "Our CI runners are on the small instance type.",
        ]
    )
]


def test_the_result_says_it_spent_by_need(tmp_path: Path) -> None:
    with DisclosureController(_lean(enabled=True), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        result = c.disclose("When does the staging database password rotate?")
        assert result.budget_reason.startswith("by need: ")
        assert result.tokens_used <= result.budget <= 2000
        given = c.disclose("When does the staging database password rotate?", budget=900)
        assert given.budget == 900  # a budget the caller gives is kept
        assert given.budget_reason == "budget 900 given by caller"


def test_off_the_budget_starts_from_the_formula(tmp_path: Path) -> None:
    with DisclosureController(_lean(enabled=False), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        result = c.disclose("When does the staging database password rotate?")
        assert result.budget_reason.startswith("1600 x (0.5 + complexity")


def test_a_query_that_says_how_much_it_wants_keeps_its_starting_budget(tmp_path: Path) -> None:
    """An explicit ask ("give me the full context", "quick:") is not second-guessed by need."""
    with DisclosureController(_lean(enabled=True), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        full = c.disclose("Give me the full context on the staging database password")
        assert full.analysis.override is not None
        assert full.budget_reason.startswith("1600 x (0.5 + complexity")
        assert full.budget_reason.endswith("not spent by need")
        asked = c.disclose("When does the staging database password rotate?")
        assert asked.analysis.override is None
        assert asked.budget_reason.startswith("by need: ")


def test_the_comprehensive_level_keeps_its_starting_budget(tmp_path: Path) -> None:
    """Comprehensive asks for breadth (the overview first): its budget is not spent by need."""
    with DisclosureController(_lean(enabled=True), data_dir=tmp_path) as c:
        c.ingest(TURNS)
        wide = c.disclose("When does the staging database password rotate?", level="comprehensive")
        assert wide.budget_reason.endswith("comprehensive: not spent by need")
        narrow = c.disclose("When does the staging database password rotate?", level="standard")
        assert narrow.budget_reason.startswith("by need: ")


def test_the_default_profile_spends_by_need_and_lean_profiles_do_not() -> None:
    assert load_profile("default").budget.need.enabled
    for name in ("chat", "compact", "coding-agent", "long-memory"):
        assert not load_profile(name).budget.need.enabled, name


def test_the_shipped_weights_name_known_features() -> None:
    assert set(NEED_WEIGHTS) <= {"bias", *FEATURES}


def test_a_set_asked_for_gets_at_least_gather_min(tmp_path: Path) -> None:
    """``budget.need.gather_min`` lifts what the model predicts for a question that asks for a
    set or a count, and says so; other questions keep the model's budget."""
    enumerating = "Which jobs run every week?"
    with DisclosureController(_lean(enabled=True), data_dir=tmp_path / "off") as c:
        c.ingest(TURNS)
        as_predicted = c.disclose(enumerating)
        assert "enumeration" in as_predicted.analysis.detected_signals
        assert as_predicted.budget < 1200
        assert "gather_min" not in as_predicted.budget_reason
    with DisclosureController(_lean(enabled=True, gather_min=1200), data_dir=tmp_path / "on") as c:
        c.ingest(TURNS)
        lifted = c.disclose(enumerating)
        assert lifted.budget == 1200
        assert "raised to 1200: a set or a count is asked for" in lifted.budget_reason
        assert lifted.tokens_used <= lifted.budget
        single = c.disclose("When does the staging database password rotate?")
        assert "enumeration" not in single.analysis.detected_signals
        assert single.budget < 1200 and "gather_min" not in single.budget_reason
        capped = c.disclose(enumerating, level="minimal")  # never above the level's ceiling
        assert capped.budget <= 600


def test_a_set_asked_for_scales_the_chance_floors() -> None:
    from disclosure.core.pipeline.gather import chance_floors
    from disclosure.core.profiles import FusionConfig

    analyzer = QueryComplexityAnalyzer(AnalyzerConfig(spacy_pipeline=None))
    gathering = analyzer.analyze("Which cities has Ana visited?")
    single = analyzer.analyze("When does the staging database password rotate?")
    assert "enumeration" in gathering.detected_signals
    assert "enumeration" not in single.detected_signals
    both = {"warm": [object()], "cold": [object()]}
    fusion = FusionConfig(min_chance=0.004, relative_chance=0.02, gather_floor_scale=0.25)
    assert chance_floors(fusion, single, both) == (0.004, 0.02)
    assert chance_floors(fusion, gathering, both) == (0.001, 0.005)
    assert chance_floors(FusionConfig(gather_floor_scale=0.0), gathering, both) == (0.0, 0.0)
    assert chance_floors(fusion, gathering, {"warm": [object()], "cold": []}) is None
    assert chance_floors(FusionConfig(min_chance=0, relative_chance=0), single, both) is None
    with pytest.raises(ValueError):
        FusionConfig(gather_floor_scale=1.5)


@pytest.mark.parametrize(
    "query",
    [
        "How many days passed between the move and the wedding?",
        "How many weeks have passed since I started running?",
        "How long had I been taking guitar lessons when I bought the amp?",
        "In what order did I visit the three museums?",
        "What is the order of the trips I took this spring?",
        "Which trip happened first, Lisbon or Oslo?",
        "Which came first, the workshop or the webinar?",
    ],
)
def test_questions_that_reckon_time_are_recognised(query: str) -> None:
    assert reckons(query)


@pytest.mark.parametrize(
    "query",
    [
        "When did Ana move to Lisbon?",
        "What did I buy two months ago?",
        "How many plants did I buy?",
        "Which cities has John visited?",
        "How much did the new amp cost?",
    ],
)
def test_questions_that_do_not_reckon_time_are_not(query: str) -> None:
    assert not reckons(query)


def test_a_question_that_reckons_time_is_priced_lower_and_says_so(tmp_path: Path) -> None:
    """``budget.need.reckoning_price`` scales the price for a question that reckons time across
    events (never above the level's ceiling); other questions keep the profile's price."""
    reckoning = "How many weeks passed between the backup move and the release train?"
    plain = "When does the staging database password rotate?"
    budgets = {}
    for share in (1.0, 0.05):
        with DisclosureController(
            _lean(enabled=True, reckoning_price=share), data_dir=tmp_path / str(share)
        ) as c:
            c.ingest(TURNS)
            result = c.disclose(reckoning)
            budgets[share] = result.budget
            assert result.tokens_used <= result.budget <= 2000
            said = "the question reckons time across events" in result.budget_reason
            assert said == (share < 1.0)
            other = c.disclose(plain)
            assert "reckons" not in other.budget_reason
    assert "priced at 0.006 (budget.need.reckoning_price 0.05)" in result.budget_reason
    assert budgets[0.05] > budgets[1.0]
    with pytest.raises(ValueError):
        _lean(reckoning_price=1.5)

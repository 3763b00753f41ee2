"""Questions that weigh two things: both sides found, and each side's best match packed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from disclosure import DisclosureController
from disclosure.core.pipeline.alternatives import lift_sides, sides
from disclosure.core.pipeline.fusion import Candidate
from tests.disclosure.conftest import make_lean_profile
from tiers import Memory, ScoredMemory


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Which event happened first, my cousin's wedding or Michael's engagement party?",
            ("cousin's wedding", "Michael's engagement party"),
        ),
        ("Which mode of transport did I use most recently, a bus or a train?", ("bus", "train")),
        (
            "Which seeds were started first, the tomatoes or the marigolds?",
            ("tomatoes", "marigolds"),
        ),
        ("Who did I meet more recently: Anna or Ben?", ("Anna", "Ben")),
    ],
)
def test_the_two_sides_of_a_comparison_are_found(query: str, expected: tuple[str, str]) -> None:
    assert sides(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "Did Melanie go camping in June or July?",  # asks which, weighs nothing
        "What do you think, tea or coffee?",
        "Which city did John visit?",  # no alternatives
        "Which came first, or was it all at once?",  # one side is empty
        "",
    ],
)
def test_a_question_that_weighs_nothing_has_no_sides(query: str) -> None:
    assert sides(query) is None


def candidate(memory_id: str, fused: float) -> Candidate:
    memory = Memory(id=memory_id, content=memory_id)
    return Candidate(memory=memory, score=fused, fused=fused, tier="cold", tiers=("cold",))


def hit(memory_id: str, score: float) -> ScoredMemory:
    return ScoredMemory(Memory(id=memory_id, content=memory_id), "cold", score)


def test_each_sides_best_candidate_is_raised_to_the_leader() -> None:
    """The first search hit of each side that is a candidate takes the leader's chance and moves
    up behind it; what no side found keeps its chance; a side with no candidate among its hits
    changes nothing."""
    ranked = [
        candidate("lead", 0.8),
        candidate("x", 0.3),
        candidate("a", 0.05),
        candidate("b", 0.01),
    ]
    found = {
        "wedding": [hit("stranger", 1.0), hit("a", 0.9)],
        "party": [hit("b", 0.7)],
        "nothing": [],
    }
    lifted = lift_sides(ranked, ("wedding", "party", "nothing"), lambda side: found[side])
    assert [c.id for c in lifted] == ["lead", "a", "b", "x"]
    assert [c.fused for c in lifted] == [0.8, 0.8, 0.8, 0.3]
    assert lift_sides([], ("wedding",), lambda side: found[side]) == []


def test_the_controller_packs_both_sides_when_one_side_crowds_the_other(tmp_path: Path) -> None:
    """Eight memories about the festival, one about the Spanish lessons that shares a single word
    with the question: without ``fusion.cover_alternatives`` the festival fills a small context;
    with it the lessons are in, at the leader's chance, and the budget holds."""
    weather = [
        {"id": f"w{i}", "speaker": "user", "content": f"The weather on day {i} was mild and grey."}
        for i in range(60)
    ]
    festival = [
        {"id": f"f{i}", "speaker": "user",
         "content": f"The cultural festival was an event that happened with music, part {i}."}
        for i in range(8)
    ]  # fmt: skip
    spanish = {
        "id": "spanish",
        "speaker": "user",
        "content": "Signed up for Spanish lessons at the college.",
    }
    query = "Which event happened first, the cultural festival or the start of my Spanish classes?"
    shown = {}
    for on in (False, True):
        profile = make_lean_profile()
        fusion = profile.fusion.model_copy(update={"method": "learned", "cover_alternatives": on})
        profile = profile.model_copy(update={"fusion": fusion})
        with DisclosureController(profile, data_dir=tmp_path / str(on)) as memory:
            memory.ingest([spanish, *weather, *festival])
            result = memory.disclose(query, budget=150, now=datetime(2024, 1, 1, tzinfo=UTC))
            assert result.tokens_used <= 150
            shown[on] = {i.id: i for i in result.items}
    assert "spanish" not in shown[False] and "f0" in shown[False]
    assert "spanish" in shown[True] and "f0" in shown[True]
    assert shown[True]["spanish"].relative == 1.0

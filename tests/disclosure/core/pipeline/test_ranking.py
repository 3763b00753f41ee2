"""The learned ranking: its features read what they say, and its weights decide the order."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from analyzers import QueryComplexityAnalyzer
from disclosure.core.pipeline.ranking import FEATURES, Ask, asks_assistant, features, floored, rank
from disclosure.core.profiles import LEARNED_WEIGHTS, FusionConfig
from tiers.errors import ProfileError
from tiers.memory import Memory, ScoredMemory

NOW = datetime(2026, 4, 10, 12, tzinfo=UTC)
ANALYZER = QueryComplexityAnalyzer()


def memory(i: str, speaker: str, session: str = "s1", days_ago: int = 30) -> Memory:
    return Memory(
        id=i,
        content=f"turn {i}",
        speaker=speaker,
        session_id=session,
        timestamp=NOW - timedelta(days=days_ago),
    )


def listed(tier: str, *scored: tuple[Memory, float]) -> list[ScoredMemory]:
    return [ScoredMemory(m, tier, s, rank=r) for r, (m, s) in enumerate(scored)]


def ask(query: str, named: tuple[str, ...] = (), depth: int = 10) -> Ask:
    return Ask(query, named, ANALYZER.analyze(query, now=NOW), {"warm": depth, "cold": depth})


def column(table: object, name: str) -> list[float]:
    return [float(v) for v in table.matrix[:, FEATURES.index(name)]]  # type: ignore[attr-defined]


def test_scores_and_ranks_come_from_each_list_and_absence_costs() -> None:
    """A memory a full list did not return takes its last score and a rank past its depth."""
    a, b = memory("a", "Dana"), memory("b", "Dana")
    table = features(
        {"cold": listed("cold", (a, 0.9), (b, 0.4)), "warm": listed("warm", (a, 0.7))},
        ask("x", depth=1),
    )
    assert [m.id for m in table.memories] == ["a", "b"]
    assert column(table, "lexical") == [0.9, 0.4]
    assert column(table, "vector") == [0.7, 0.7]
    assert column(table, "lexical_rank")[0] == 0.0 > column(table, "lexical_rank")[1]
    assert column(table, "vector_rank")[1] == pytest.approx(-math.log1p(1))  # past depth 1


def test_speaker_and_role_features() -> None:
    """Naming one participant marks theirs and the other's; assistant turns count as noise
    unless the query asks what the assistant said."""
    caroline, melanie, bot = (
        memory("c", "Caroline"),
        memory("m", "Melanie"),
        memory("x", "assistant"),
    )
    lists = {"cold": listed("cold", (caroline, 0.5), (melanie, 0.5), (bot, 0.5))}
    table = features(lists, ask("What did Caroline paint?", named=("Caroline",)))
    assert column(table, "named_speaker") == [1.0, 0.0, 0.0]
    assert column(table, "other_speaker") == [0.0, 1.0, 1.0]
    assert column(table, "assistant_unasked") == [0.0, 0.0, 1.0]
    asked = features(lists, ask("Remind me which hotel you recommended in Lisbon"))
    assert column(asked, "assistant_asked") == [0.0, 0.0, 1.0]
    assert column(asked, "assistant_unasked") == [0.0, 0.0, 0.0]
    assert asks_assistant("what was your suggestion?") and not asks_assistant("what did I say?")


def test_time_range_and_session_share() -> None:
    """A memory dated inside the query's range is marked; a session holding the best
    candidates lends them its share."""
    old, recent = memory("old", "Dana", "s1", 60), memory("new", "Dana", "s2", 7)
    lists = {"cold": listed("cold", (recent, 0.8), (old, 0.2))}
    table = features(lists, ask("what did we discuss last week?"))
    assert column(table, "in_time_range") == [1.0, 0.0]
    assert column(table, "session")[0] > column(table, "session")[1]


def test_weights_decide_the_order_and_the_chance() -> None:
    """The same lists ranked with the role weight on and off swap the assistant's turn."""
    user, bot = memory("u", "Dana"), memory("b", "assistant")
    lists = {"cold": listed("cold", (bot, 0.8), (user, 0.6))}
    plain = {"bias": -1.0, "lexical": 3.0}
    assert [c.id for c in rank(lists, ask("hotels in Lisbon"), plain)] == ["b", "u"]
    penalised = rank(lists, ask("hotels in Lisbon"), {**plain, "assistant_unasked": -3.0})
    assert [c.id for c in penalised] == ["u", "b"]
    assert all(0.0 < c.fused < 1.0 for c in penalised)
    assert penalised[0].score == pytest.approx(0.6)  # the tier's own score, for expansion


def test_the_profile_validates_the_weights() -> None:
    """Unknown feature names are refused; missing ones weigh 0; the shipped set is complete."""
    assert set(FusionConfig().learned) == {"bias", *FEATURES} == set(LEARNED_WEIGHTS)
    assert FusionConfig(learned={"lexical": 1.0}).learned["session"] == 0.0
    with pytest.raises(ValueError, match="unknown feature 'lexcial'"):
        FusionConfig(learned={"lexcial": 1.0})
    assert ProfileError  # profile files report the same message through ProfileError


def test_the_chance_floors_drop_the_long_tail_of_a_sure_answer() -> None:
    """Under the absolute floor, or under a share of the best chance, a candidate goes."""
    from disclosure.core.pipeline.fusion import Candidate
    from disclosure.core.pipeline.ranking import floored

    chances = {"sure": 0.9, "maybe": 0.05, "tail": 0.008, "noise": 0.002}
    ranked = [
        Candidate(memory=memory(i, "Dana"), score=c, fused=c, tier="cold", tiers=("cold",))
        for i, c in chances.items()
    ]
    kept = [c.id for c in floored(ranked, absolute=0.003, relative=0.01)]
    assert kept == ["sure", "maybe"]  # 0.008 < 1% of 0.9
    assert [c.id for c in floored(ranked, absolute=0.003, relative=0.0)] == [
        "sure",
        "maybe",
        "tail",
    ]
    alike = [c for c in ranked if c.id != "sure"]  # no sure answer: the tail stays
    assert [c.id for c in floored(alike, absolute=0.003, relative=0.01)] == ["maybe", "tail"]
    assert floored([], absolute=0.003, relative=0.01) == []


def _reference_rank(
    lists: dict[str, list[ScoredMemory]], query: Ask, weights: dict[str, float], priors: dict
) -> list[tuple[str, float, float, str, tuple[str, ...]]]:
    """The ranking written plainly (each hit's fields read where needed), to hold the
    optimised one to the same candidates, values and order."""
    found: dict[str, list[str]] = {}
    best: dict[str, float] = {}
    tier: dict[str, tuple[int, str]] = {}
    for name, hits in lists.items():
        for position, hit in enumerate(hits):
            found.setdefault(hit.id, []).append(name)
            best[hit.id] = max(best.get(hit.id, 0.0), hit.score)
            if hit.id not in tier or position < tier[hit.id][0]:
                tier[hit.id] = (position, hit.tier)
    table = features(lists, query)
    assert [m.id for m in table.memories] == list(found)
    assert [float(v) for v in table.confidence] == [best[i] for i in found]
    assert column(table, "recent") == [
        float(bool({"hot", "active"} & set(found[i]))) for i in found
    ]
    coef = [weights.get(name, 0.0) for name in FEATURES]
    out = []
    for row, memory_id in enumerate(found):
        logit = float(table.matrix[row] @ coef) + weights.get("bias", 0.0)
        chance = 1.0 / (1.0 + math.exp(-min(max(logit, -40.0), 40.0)))
        score = min(max(best[memory_id], 0.0), 1.0)
        fused = chance * priors.get(memory_id, 1.0)
        out.append(
            (memory_id, score, fused, tier[memory_id][1], tuple(dict.fromkeys(found[memory_id])))
        )
    out.sort(key=lambda c: (-c[2], -c[1], c[0]))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_the_ranking_keeps_its_candidates_values_and_order(seed: int) -> None:
    """Random lists with shared memories, repeated scores (ties), every list kind, priors."""
    import random

    rng = random.Random(seed)
    pool = [
        memory(f"m{i:02d}", rng.choice(["Dana", "Lee", "assistant", ""]), f"s{i % 4}", i % 9)
        for i in range(40)
    ]
    lists = {}
    for name in ("hot", "warm", "cold", "active"):
        chosen = rng.sample(pool, rng.randint(0, 25))
        scores = sorted((rng.choice([0.0, 0.25, 0.5, rng.random()]) for _ in chosen), reverse=True)
        lists[name] = listed(name, *zip(chosen, scores, strict=True))
    priors = {m.id: rng.choice([0.5, 1.0, 1.3]) for m in rng.sample(pool, 10)}
    query = ask(rng.choice(["what did Dana say last week", "hotels in Lisbon", "you said what"]))
    weights = {**LEARNED_WEIGHTS, "recent": 0.7, "session": 1.1}
    ranked = rank(lists, query, weights, priors=priors)
    got = [(c.id, c.score, c.fused, c.tier, c.tiers) for c in ranked]
    want = _reference_rank(lists, query, weights, priors)
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g[1] == w[1] and g[3:] == w[3:]
        assert g[2] == pytest.approx(w[2], rel=1e-12)  # numpy's exp and math's may differ in ulp
    for absolute, relative in ((0.003, 0.01), (0.0, 0.5), (0.2, 0.0), (0.99, 0.99)):
        kept = rank(lists, query, weights, priors=priors, floor=(absolute, relative))
        assert kept == floored(ranked, absolute=absolute, relative=relative)


def test_answer_label_marks_memories_naming_what_the_question_asks_for() -> None:
    """A question asking for places marks the memories whose facets name a place; a
    participant's name answers no question about people, and a plain question marks none."""
    a, b, c = memory("a", "John"), memory("b", "John"), memory("c", "John")
    lists = {"cold": listed("cold", (a, 0.5), (b, 0.4), (c, 0.3))}
    facets = {"a": {"GPE:chicago", "NOUN:local"}, "b": {"PERSON:tim"}, "c": {"PERSON:kyle"}}
    query = "Which cities has John been to?"
    base = ask(query)
    places = Ask(base.query, base.named, base.analysis, base.depths, facets, {"john", "tim"})
    assert column(features(lists, places), "answer_label") == [1.0, 0.0, 0.0]
    people = ask("What are the names of John's children?")
    named = Ask(people.query, people.named, people.analysis, people.depths, facets, {"tim"})
    assert column(features(lists, named), "answer_label") == [0.0, 0.0, 1.0]
    plain = ask("remind me about the deploy")
    unasked = Ask(plain.query, plain.named, plain.analysis, plain.depths, facets, ())
    assert column(features(lists, unasked), "answer_label") == [0.0, 0.0, 0.0]

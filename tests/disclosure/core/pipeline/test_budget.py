"""The adaptive budget: the start formula, bounds, and the use model learned from feedback."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import DisclosureLevel
from disclosure.core.pipeline.budget import PG_SCHEMA, AdaptiveBudget, BudgetDecision, Usage
from disclosure.core.pipeline.usemodel import UseSignals
from disclosure.core.profiles import BudgetConfig, LevelConfig, load_profile
from tiers.errors import InvalidInputError

STANDARD = DisclosureLevel.STANDARD
LEVEL = LevelConfig(hot_items=5, warm_items=2, formatter="index", max_tokens=1500)
CANDIDATES = 30


def budget(tmp_path: Path | None = None, **changes: object) -> AdaptiveBudget:
    # The formula's figures below assume a start of 1,000 tokens, whatever the default profile says.
    config = BudgetConfig(**{"default": 1000, **changes})  # type: ignore[arg-type]
    return AdaptiveBudget(config, profile="test", path=tmp_path / "usage.db" if tmp_path else None)


def curve(rank: int) -> UseSignals:
    """A candidate of a query whose fused values fall off as one list's reciprocal ranks do."""
    return UseSignals(
        rank=rank,
        relative=61 / (61 + rank),
        score=max(0.8 - 0.02 * rank, 0.0),
        top_score=0.8,
        lead_score=0.8,
        agree=rank < 5,
    )


def shown(decided: BudgetDecision) -> list[UseSignals]:
    """The candidates a decision discloses: the learned cut's picks, or all of them."""
    everything = [curve(rank) for rank in range(CANDIDATES)]
    return [s for s in everything if decided.use_model is None or decided.use_model.keeps(s)]


def reply(b: AdaptiveBudget, used_ranks: Collection[int]) -> BudgetDecision:
    """One query and its reply, which uses the disclosed candidates at ``used_ranks``."""
    decided = b.decide(STANDARD, LEVEL, 0.5)
    rows = tuple((s, s.rank in used_ranks) for s in shown(decided))
    used = sum(u for _, u in rows)
    usage = Usage(
        budget=decided.tokens,
        tokens_used=decided.tokens,
        depth=100 if used else 0,
        used=used,
        disclosed=len(rows),
        truncated=True,
        signals=rows,
    )
    b.record(STANDARD, usage)
    return decided


def feed(b: AdaptiveBudget, n: int, used_ranks: Collection[int] = (0,)) -> None:
    for _ in range(n):
        reply(b, used_ranks)


def test_seed_formula_before_any_history() -> None:
    """With no history the budget is default x (0.5 + complexity), within min and the ceiling."""
    b = budget()
    assert b.decide(STANDARD, LEVEL, 0.5).tokens == 1000
    assert b.decide(STANDARD, LEVEL, 0.2).tokens == 700
    assert b.decide(STANDARD, LEVEL, 1.0).tokens == 1500  # level ceiling
    small = LevelConfig(hot_items=2, warm_items=0, formatter="index", max_tokens=200)
    assert b.decide(DisclosureLevel.MINIMAL, small, 1.0).tokens == 200


def test_the_context_window_keeps_its_reply_share() -> None:
    """A small window caps the budget at the share not kept for the reply."""
    b = budget(reply_share=0.5)
    decided = b.decide(STANDARD, LEVEL, 0.5, context_window=1200, prompt_tokens=400)
    assert decided.tokens == 400
    assert decided.ceiling == 400


def test_override_wins_and_must_be_positive() -> None:
    """A caller's budget is used as given; zero or negative is an error."""
    b = budget()
    assert b.decide(STANDARD, LEVEL, 0.1, override=321).tokens == 321
    with pytest.raises(InvalidInputError, match="positive"):
        b.decide(STANDARD, LEVEL, 0.1, override=0)


def test_non_adaptive_profiles_use_the_level_ceiling() -> None:
    """With adaptive off the budget is the level's max_tokens (within the window)."""
    b = budget(adaptive=False)
    feed(b, 10)
    assert b.decide(STANDARD, LEVEL, 0.0).tokens == 1500


@given(
    complexity=st.floats(0, 1),
    deep=st.booleans(),
    n=st.integers(0, 12),
    shallow=st.booleans(),
    window=st.integers(1, 100_000),
    prompt=st.integers(0, 100_000),
)
def test_budget_never_leaves_its_bounds(
    complexity: float, deep: bool, n: int, shallow: bool, window: int, prompt: int
) -> None:
    """Whatever the history, the budget stays within [min, ceiling] (ceiling wins over min)."""
    b = budget()
    feed(b, n, used_ranks=(0, 20) if deep else (0,) if shallow else ())
    decided = b.decide(STANDARD, LEVEL, complexity, context_window=window, prompt_tokens=prompt)
    assert 0 <= decided.tokens <= decided.ceiling
    assert decided.ceiling <= min(LEVEL.max_tokens, 4000)
    if decided.ceiling >= 100:
        assert decided.tokens >= 100


def test_shallow_use_learns_a_cut_that_stops_early() -> None:
    """Replies that only use the leader teach a cut that keeps it and drops the deep tail; the
    learned budget is the ceiling, the cut sets the length, and the reason says so."""
    b = budget(learning={"probe_every": 0})
    feed(b, 20)
    model, observations = b.model(STANDARD)
    assert model is not None and observations == 20
    assert model.keeps(curve(0)) and not model.keeps(curve(20))
    assert model.probability(curve(0)) > model.probability(curve(5)) > model.probability(curve(25))
    decided = b.decide(STANDARD, LEVEL, 0.5)
    assert decided.use_model is model and decided.tokens == decided.ceiling == 1500
    assert "learned cut from 20 replies" in decided.reason
    assert len(shown(decided)) < CANDIDATES / 2


def test_use_past_the_cut_is_seen_by_probes_and_deepens_the_cut() -> None:
    """After shallow use the cut keeps ranks 0-4 and drops rank 8; then replies start using rank
    8 too, just past the cut. Probes show it, label it used, and the cut deepens to keep it;
    without probes it is never shown again, never labelled, and stays cut."""
    for every, keeps in ((4, True), (0, False)):
        b = budget(learning={"probe_every": every})
        feed(b, 40)
        model, _ = b.model(STANDARD)
        assert model is not None and not model.keeps(curve(8))
        feed(b, 120, used_ranks=(0, 8))
        model, _ = b.model(STANDARD)
        assert model is not None and model.keeps(curve(8)) is keeps


def test_every_nth_budget_of_a_learned_level_is_a_probe() -> None:
    """Once learned, every 4th budget is the unlearned cut at the ceiling, and says so."""
    b = budget(learning={"probe_every": 4})
    feed(b, 10)
    decisions = [b.decide(STANDARD, LEVEL, 0.5) for _ in range(8)]
    assert [i for i, d in enumerate(decisions) if d.probe] == [3, 7]
    probe = decisions[3]
    assert probe.use_model is None and probe.tokens == 1500 and "probe" in probe.reason
    assert all(d.use_model is not None for d in decisions if not d.probe)


def test_no_learning_before_enough_replies_that_used_something() -> None:
    """Below min_observations replies that used something, or with learning off, budgets stay
    at their start and the level's own cut-off decides."""
    b = budget()
    feed(b, 9)
    feed(b, 20, used_ranks=())  # replies that used nothing teach no cut
    model, observations = b.model(STANDARD)
    assert model is None and observations == 29
    decided = b.decide(STANDARD, LEVEL, 0.5)
    assert (
        decided.use_model is None and decided.tokens == 1000 and "not learned yet" in decided.reason
    )
    off = budget(learning={"enabled": False})
    feed(off, 20)
    assert off.model(STANDARD)[0] is None
    assert "learning off" in off.decide(STANDARD, LEVEL, 0.5).reason


def test_history_persists_per_profile(tmp_path: Path) -> None:
    """A reopened budget remembers the replies and their signals and learns the same model;
    the levels share it (pooled); other profiles are unaffected."""
    b = budget(tmp_path)
    feed(b, 12)
    learned, _ = b.model(STANDARD)
    b.close()
    again = budget(tmp_path)
    model, observations = again.model(STANDARD)
    assert learned is not None and model is not None and observations == 12
    assert model.weights == pytest.approx(learned.weights)
    assert again.history(STANDARD)[0].signals[0] == (curve(0), True)
    assert again.model(DisclosureLevel.DETAILED) == (model, 12)
    other = AdaptiveBudget(BudgetConfig(), profile="other", path=tmp_path / "usage.db")
    assert other.model(STANDARD) == (None, 0)


def test_unpooled_levels_learn_apart(tmp_path: Path) -> None:
    """With ``pool_levels: false`` each level learns from its own replies only."""
    b = budget(tmp_path, learning={"pool_levels": False})
    feed(b, 12)
    assert b.model(STANDARD)[0] is not None
    assert b.model(DisclosureLevel.DETAILED) == (None, 0)
    assert b.history(DisclosureLevel.DETAILED) == []


def test_budgets_sharing_a_store_learn_from_each_other(tmp_path: Path) -> None:
    """Two budgets on one file (two namespaces, or two processes): the replies one records
    teach the other before its next decision."""
    first, second = budget(tmp_path), budget(tmp_path)
    assert second.decide(STANDARD, LEVEL, 0.5).use_model is None
    feed(first, 12)
    model, observations = second.model(STANDARD)
    assert model is not None and observations == 12
    assert second.decide(STANDARD, LEVEL, 0.5).use_model is model
    feed(second, 3)
    assert first.model(STANDARD)[1] == second.model(STANDARD)[1] == 15


def test_probe_rows_the_cut_would_drop_weigh_probe_every(tmp_path: Path) -> None:
    """Probes are the only replies that show what the learned cut drops, one budget in
    ``probe_every``: those rows are stored with weight ``probe_every`` (inverse propensity),
    the rows the cut keeps with weight 1, and every row of an ordinary reply with 1."""
    b = budget(tmp_path, learning={"probe_every": 4})
    feed(b, 10)
    model, _ = b.model(STANDARD)
    assert model is not None
    everything = tuple((curve(rank), rank == 0) for rank in range(CANDIDATES))
    shown = dict(budget=1500, tokens_used=1400, depth=100, used=1, disclosed=CANDIDATES)
    b.record(STANDARD, Usage(**shown, truncated=False, signals=everything, probe=True))
    b.record(STANDARD, Usage(**shown, truncated=False, signals=everything))
    probe, ordinary = b._db.execute(
        "SELECT reply, group_concat(weight, ' ') FROM signals GROUP BY reply ORDER BY reply"
    ).fetchall()[-2:]
    weights = [float(w) for w in probe[1].split()]
    expected = [1.0 if model.keeps(s) else 4.0 for s, _ in everything]
    assert weights == expected and 1.0 in weights and 4.0 in weights
    assert {float(w) for w in ordinary[1].split()} == {1.0}


def test_replies_without_candidates_are_kept_and_learning_goes_on() -> None:
    """A reply to a disclosure of named memories only carries no signals: it counts as a kept
    reply, teaches nothing, and breaks nothing."""
    b = budget()
    named_only = Usage(budget=1000, tokens_used=200, depth=0, used=0, disclosed=1, truncated=False)
    b.record(STANDARD, named_only)
    assert b.model(STANDARD) == (None, 1)
    feed(b, 10)
    model, observations = b.model(STANDARD)
    assert model is not None and observations == 11


def test_a_store_from_before_weights_opens_and_learns(tmp_path: Path) -> None:
    """A usage file written before rows carried weights gains the column (every row 1)."""
    path = tmp_path / "usage.db"
    b = budget(tmp_path)
    feed(b, 12)
    b.close()
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE old AS SELECT reply, rank, relative, score, top_score, lead_score, agree,"
        " used FROM signals; DROP TABLE signals; ALTER TABLE old RENAME TO signals;"
    )
    db.close()
    again = budget(tmp_path)
    model, observations = again.model(STANDARD)
    assert model is not None and observations == 12
    assert {w for (w,) in again._db.execute("SELECT DISTINCT weight FROM signals")} == {1.0}


def test_history_is_bounded() -> None:
    """Only the last `history` replies, and their candidates' signals, are kept."""
    b = budget(learning={"history": 7})
    feed(b, 20)
    history = b.history(STANDARD)
    assert len(history) == 7
    rows = b._db.execute("SELECT COUNT(*) FROM signals").fetchone()[0]
    assert rows == sum(len(u.signals) for u in history)


def test_default_profile_carries_the_learning_policy() -> None:
    """The learning knobs are profile settings."""
    learning = load_profile("default").budget.learning
    assert (learning.threshold, learning.probe_every, learning.enabled) == (0.014, 8, True)


def test_replicas_on_one_postgres_archive_learn_from_each_others_replies(pg_url: str) -> None:
    """Two replicas' budgets on one namespace's PostgreSQL archive share the reply history: one
    learns from what the other recorded; only the last `history` replies are kept there too."""
    from tests.pg_server import unique_namespace
    from tiers.pg_archive import PgArchive

    namespace = unique_namespace()
    archives = [PgArchive(pg_url, namespace) for _ in range(2)]
    config = BudgetConfig(default=1000, learning={"history": 11, "min_observations": 10})  # type: ignore[arg-type]
    first, second = (
        AdaptiveBudget(config, profile="test", db=a.side_connection(PG_SCHEMA)) for a in archives
    )
    assert second.model(STANDARD) == (None, 0)
    feed(first, 12)
    model, observations = second.model(STANDARD)
    assert model is not None and observations == 11
    assert model.weights == pytest.approx(first.model(STANDARD)[0].weights)  # type: ignore[union-attr]
    history = second.history(STANDARD)
    assert len(history) == 11 and history[0].signals[0] == (curve(0), True)
    rows = archives[0].query("SELECT COUNT(*) FROM signals")[0][0]
    assert rows == sum(len(u.signals) for u in history)
    for archive in archives:
        archive.close()

"""The adaptive budget: seed 002's formula, bounds, and learning from how deep used items sat."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import DisclosureLevel
from disclosure.budget import AdaptiveBudget, Usage, truncated_quantile
from disclosure.profiles import BudgetConfig, LevelConfig, load_profile
from tiers.errors import InvalidInputError

STANDARD = DisclosureLevel.STANDARD
LEVEL = LevelConfig(hot_items=5, warm_items=2, formatter="index", max_tokens=1500)


def budget(tmp_path: Path | None = None, **changes: object) -> AdaptiveBudget:
    config = BudgetConfig(**changes)  # type: ignore[arg-type]
    return AdaptiveBudget(config, profile="test", path=tmp_path / "usage.db" if tmp_path else None)


def feed(b: AdaptiveBudget, n: int, *, depth_share: float, cut: bool = False) -> None:
    for _ in range(n):
        decided = b.decide(STANDARD, LEVEL, 0.5)
        depth = int(decided.tokens * depth_share)
        usage = Usage(decided.tokens, decided.tokens, depth, 1, 5, cut, start=b.start(0.5))
        b.record(STANDARD, usage)


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


def test_budgets_shrink_where_used_items_sit_shallow() -> None:
    """Replies that only use the first fifth of the context bring the budget down."""
    b = budget(learning={"probe_every": 0})
    before = b.decide(STANDARD, LEVEL, 0.5).tokens
    feed(b, 20, depth_share=0.2)
    after = b.decide(STANDARD, LEVEL, 0.5)
    assert after.tokens < 0.5 * before
    assert after.factor < 0.5
    assert "learned" in after.reason and "20 replies" in after.reason


def test_budgets_grow_where_the_useful_item_sat_at_the_cut() -> None:
    """Replies that keep using the last item of a cut context grow the budget."""
    b = budget()
    before = b.decide(STANDARD, LEVEL, 0.2).tokens
    feed(b, 10, depth_share=0.97, cut=True)
    assert b.decide(STANDARD, LEVEL, 0.2).tokens > before
    assert b.factor(STANDARD)[0] > 1.0


def test_no_learning_before_enough_observations_and_nothing_from_unused_replies() -> None:
    """Fewer than min_observations, or replies that used nothing, leave the factor at 1."""
    b = budget()
    feed(b, 4, depth_share=0.1)
    assert b.factor(STANDARD)[0] == 1.0
    for _ in range(10):
        b.record(STANDARD, Usage(1000, 900, 0, 0, 5, True))
    assert b.factor(STANDARD) == (1.0, 14)


def test_history_persists_per_profile_and_level(tmp_path: Path) -> None:
    """A reopened budget remembers; other levels and profiles are unaffected."""
    b = budget(tmp_path)
    feed(b, 10, depth_share=0.2)
    learned = b.factor(STANDARD)[0]
    b.close()
    again = budget(tmp_path)
    assert again.factor(STANDARD)[0] == pytest.approx(learned)
    assert again.factor(DisclosureLevel.DETAILED)[0] == 1.0
    other = AdaptiveBudget(BudgetConfig(), profile="other", path=tmp_path / "usage.db")
    assert other.factor(STANDARD)[0] == 1.0


def test_history_is_bounded() -> None:
    """Only the last `history` observations are kept."""
    b = budget(learning={"history": 7})
    feed(b, 20, depth_share=0.5)
    assert len(b.history(STANDARD)) == 7


def test_non_adaptive_profiles_use_the_level_ceiling() -> None:
    """With adaptive off the budget is the level's max_tokens (within the window)."""
    b = budget(adaptive=False)
    feed(b, 10, depth_share=0.1)
    assert b.decide(STANDARD, LEVEL, 0.0).tokens == 1500


@given(
    complexity=st.floats(0, 1),
    depth_share=st.floats(0, 1),
    n=st.integers(0, 12),
    cut=st.booleans(),
    window=st.integers(1, 100_000),
    prompt=st.integers(0, 100_000),
)
def test_budget_never_leaves_its_bounds(
    complexity: float, depth_share: float, n: int, cut: bool, window: int, prompt: int
) -> None:
    """Whatever the history, the budget stays within [min, ceiling] (ceiling wins over min)."""
    b = budget()
    feed(b, n, depth_share=depth_share, cut=cut)
    decided = b.decide(STANDARD, LEVEL, complexity, context_window=window, prompt_tokens=prompt)
    assert 0 <= decided.tokens <= decided.ceiling
    assert decided.ceiling <= min(LEVEL.max_tokens, 4000)
    if decided.ceiling >= 100:
        assert decided.tokens >= 100


def test_default_profile_carries_the_learning_policy() -> None:
    """The learning knobs are profile settings."""
    learning = load_profile("default").budget.learning
    assert (learning.quantile, learning.probe_every) == (0.95, 4)


def test_with_equal_windows_the_truncated_quantile_is_the_plain_one() -> None:
    """Every reply could show every depth: the smallest cut keeping at least q of them."""
    seen = [(x / 10, 1.0) for x in range(1, 11)]  # 0.1 ... 1.0
    assert truncated_quantile(seen, 0.95) == pytest.approx(1.0)
    assert truncated_quantile(seen, 0.9) == pytest.approx(0.9)
    assert truncated_quantile(seen, 0.5) == pytest.approx(0.5)


def test_the_truncated_quantile_counts_a_depth_only_against_replies_that_could_show_it() -> None:
    """(0.5, 1), (0.1, 1), (0.1, 0.2) x2: only 2 replies could show 0.5 and one did, so half the
    mass sits there; the plain quantile (1 in 4) would cut at 0.1 for q = 0.6."""
    seen = [(0.5, 1.0), (0.1, 1.0), (0.1, 0.2), (0.1, 0.2)]
    assert truncated_quantile(seen, 0.6) == pytest.approx(0.5)
    assert truncated_quantile([(x, 1.0) for x, _ in seen], 0.6) == pytest.approx(0.1)


def test_every_nth_budget_of_a_learned_level_is_a_probe_past_the_cut() -> None:
    """Once learned, every 4th budget is max(1, factor x 1.25) x the start, and says so."""
    b = budget(learning={"probe_every": 4})
    feed(b, 10, depth_share=0.2)
    factor = b.factor(STANDARD)[0]
    decisions = [b.decide(STANDARD, LEVEL, 0.5) for _ in range(8)]
    probes = [i for i, d in enumerate(decisions) if d.probe]
    assert probes == [3, 7]
    assert decisions[3].tokens == 1000 and "probe x1.00" in decisions[3].reason
    assert decisions[0].tokens == round(1000 * factor)


def test_a_reply_records_the_factor_its_own_budget_amounted_to() -> None:
    """With the start given, a probe's observation is stored at budget / start."""
    b = budget()
    b.record(STANDARD, Usage(1500, 1400, 300, 1, 5, True, start=1000.0))
    assert b.history(STANDARD)[0][1] == pytest.approx(1.5)


def replies(b: AdaptiveBudget, n: int, *, deep_every: int) -> None:
    """Every ``deep_every``-th reply (0: none) needs an item at 0.9 x the start, unused when the
    budget cut it off; the others use one at 0.1 x the start."""
    start = b.start(0.5)
    for i in range(n):
        decided = b.decide(STANDARD, LEVEL, 0.5)
        deep = bool(deep_every) and i % deep_every == 0
        depth = int(start * (0.9 if deep else 0.1))
        seen = depth <= decided.tokens
        usage = Usage(decided.tokens, decided.tokens, depth if seen else 0, int(seen), 5, True,
                      start=start)  # fmt: skip
        b.record(STANDARD, usage)


def test_probes_see_use_moving_past_a_shrunken_cut_and_grow_the_budget() -> None:
    """After 100 shallow replies the budget has shrunk; then a fifth of the replies need 0.9 x
    the start. With probes the factor grows to cover them; without, nothing past the cut is
    ever seen and the budget stays shrunk."""
    for every, covers in ((4, True), (0, False)):
        b = budget(learning={"probe_every": every})
        replies(b, 100, deep_every=0)
        assert b.factor(STANDARD)[0] < 0.5
        replies(b, 200, deep_every=5)
        assert (b.factor(STANDARD)[0] >= 0.9) is covers

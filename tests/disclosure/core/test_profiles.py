"""Profiles: built-ins validate, extends merges, a bad profile names file, path and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzers import DisclosureLevel
from disclosure import Profile, ProfileError, builtin_profiles, load_profile
from disclosure.evaluation.experiment import load_experiment

REPO = Path(__file__).resolve().parents[3]
CONFIG_YAMLS = sorted((REPO / "configs").rglob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("path", CONFIG_YAMLS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_yaml_under_configs_validates(path: Path) -> None:
    """Profiles load as Profiles, A/B experiment files as Experiments; nothing else lives there."""
    kind = path.parent.name
    assert kind in ("profiles", "ab"), f"{path}: configs/ holds only profiles/ and ab/"
    if kind == "profiles":
        assert isinstance(load_profile(path), Profile)
    else:
        experiment = load_experiment(path)
        assert experiment.profiles or experiment.baselines


def test_the_builtins_ship_and_include_the_required_four() -> None:
    """default, chat, coding-agent and large-archive are built in and load by name."""
    assert {"default", "chat", "coding-agent", "large-archive"} <= set(builtin_profiles())
    for name in builtin_profiles():
        assert load_profile(name).name == name


def test_default_levels_all_reach_the_archive() -> None:
    """Every level of default searches cold; the levels keep their order of disclosure."""
    p = load_profile("default")
    levels = [p.levels[level] for level in DisclosureLevel]
    assert all(cfg.cold_search for cfg in levels)
    assert [cfg.max_tokens for cfg in levels] == sorted(cfg.max_tokens for cfg in levels)
    assert levels[0].max_tokens < levels[-1].max_tokens
    assert p.fusion.method == "learned"


def test_compact_keeps_the_small_level_table() -> None:
    """compact is the lean table for small chat contexts; its minimal still reaches the archive."""
    p = load_profile("compact")
    table = {
        level: (cfg.hot_items, cfg.warm_items, cfg.formatter, cfg.max_tokens)
        for level, cfg in p.levels.items()
    }
    assert table == {
        DisclosureLevel.MINIMAL: (2, 0, "summary_only", 200),
        DisclosureLevel.STANDARD: (5, 2, "summary_with_entities", 500),
        DisclosureLevel.DETAILED: (5, 4, "full_content", 1500),
        DisclosureLevel.COMPREHENSIVE: (5, 6, "full_with_context", 3000),
    }
    assert all(cfg.cold_search for cfg in p.levels.values())


def test_default_carries_the_budget_expansion_and_cache_values() -> None:
    """The expansion thresholds, the budget, the caches and citations."""
    p = load_profile("default")
    assert (p.budget.default, p.budget.min, p.budget.max) == (1600, 100, 4000)
    assert 0 < p.budget.reply_share < 1
    e = p.expansion
    assert (e.high_confidence, e.clear_winner, e.clear_winner_gap, e.ambiguity) == (
        0.92,
        0.85,
        0.10,
        0.80,
    )
    assert e.max_auto_expansions == 3
    c = p.caches
    assert [(x.ttl_seconds, x.max_items) for x in (c.index, c.timeline, c.detail)] == [
        (60, 100),
        (300, 500),
        (1800, 200),
    ]
    assert p.citations.enabled
    assert "explain" in p.analyzer.keywords[DisclosureLevel.DETAILED]
    assert "full context" in p.analyzer.keywords[DisclosureLevel.COMPREHENSIVE]
    assert p.tokens.encoding == "cl100k_base"


def test_default_yaml_spells_out_the_code_defaults() -> None:
    """The default profile file and the library's defaults are the same policy."""
    loaded = load_profile("default")
    assert loaded == Profile(name="default", description=loaded.description)


def test_extends_overrides_only_what_it_names(tmp_path: Path) -> None:
    """A child changes one value of one level; everything else comes from its parent."""
    path = write(tmp_path, "extends: chat\nlevels:\n  detailed: {max_tokens: 777}\n")
    child, chat = load_profile(path), load_profile("chat")
    assert child.name == "p"
    assert child.level("detailed").max_tokens == 777
    assert child.level("detailed").formatter == chat.level("detailed").formatter
    assert child.budget == chat.budget
    assert child.level("minimal") == chat.level("minimal")


def test_extends_a_sibling_file_and_detects_cycles(tmp_path: Path) -> None:
    """extends resolves relative paths from the file; a cycle is an error, not a hang."""
    write(tmp_path, "extends: b.yaml\nbudget: {default: 900}\n", "a.yaml")
    write(tmp_path, "extends: default\nbudget: {max: 3000}\n", "b.yaml")
    a = load_profile(tmp_path / "a.yaml")
    assert (a.budget.default, a.budget.max) == (900, 3000)
    write(tmp_path, "extends: a.yaml\n", "b.yaml")
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(tmp_path / "a.yaml")


BAD_PROFILES = [
    ("levels:\n  detailed: {max_tokns: 10}\n", "levels -> detailed -> max_tokns: unknown key"),
    ("budget: {default: fast}\n", "budget -> default: Input should be a valid integer"),
    ("budget: {default: 0}\n", "budget -> default: Input should be greater than 0"),
    ("budget: {min: -5}\n", "budget -> min: Input should be greater than 0"),
    ("budget: {min: 500, max: 200, default: 300}\n", "budget: min (500) must not exceed max (200)"),
    (
        "levels:\n  detailed: {formatter: tabel}\n",
        "levels -> detailed -> formatter: unknown formatter 'tabel'; available: detail,",
    ),
    (
        "levels:\n  ultra: {hot_items: 1, warm_items: 1, formatter: index, max_tokens: 9}\n",
        "levels -> ultra: Input should be 'minimal', 'standard', 'detailed' or 'comprehensive'",
    ),
    ("analyzer:\n  default_level: loud\n", "analyzer -> default_level: Input should be"),
    ("levels:\n  minimal: {max_tokens: 0}\n", "levels -> minimal -> max_tokens: Input should be"),
    ("extends: nosuch\n", "unknown profile 'nosuch'"),
    ("- a list\n", "a profile must be a mapping"),
    ("budget: {default: 100\n", "line 2, column 1"),
    ("colour: red\n", "colour: unknown key"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_PROFILES, ids=[e for _, e in BAD_PROFILES])
def test_bad_profiles_fail_with_file_path_and_reason(
    tmp_path: Path, text: str, expected: str
) -> None:
    """Each mistake raises ProfileError with the file name, the path inside it and the reason."""
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    message = str(info.value)
    assert message.startswith(str(path)) or str(path) in message
    assert expected in message
    assert "\n" not in message


def test_unknown_names_and_missing_files() -> None:
    """A name that is no built-in lists the built-ins; a missing file says so."""
    with pytest.raises(ProfileError, match="built-in: chat, coding-agent, compact, default"):
        load_profile("nope")
    with pytest.raises(ProfileError, match="no such profile file"):
        load_profile("missing/profile.yaml")


def test_profiles_are_immutable() -> None:
    """A loaded profile cannot be changed in place."""
    profile = load_profile("default")
    with pytest.raises(ValueError, match="frozen"):
        profile.budget.default = 5  # type: ignore[misc]

"""Disclosure levels are ordered by rank, and parse from their names."""

from __future__ import annotations

import pytest

from analyzers import DisclosureLevel, QueryAnalysis


def test_levels_order_by_rank_not_alphabet() -> None:
    """minimal < standard < detailed < comprehensive, whatever the spelling sorts as."""
    m, s, d, c = DisclosureLevel
    assert m < s < d < c
    assert max(DisclosureLevel) is c
    assert sorted([c, m, d, s]) == [m, s, d, c]
    assert c >= d and not c < d
    assert [level.rank for level in DisclosureLevel] == [0, 1, 2, 3]


def test_levels_are_strings_and_parse() -> None:
    """Levels serialise as their names; parse is lenient on case and lists valid names on a miss."""
    assert DisclosureLevel.DETAILED == "detailed"
    assert DisclosureLevel.parse(" Detailed ") is DisclosureLevel.DETAILED
    with pytest.raises(ValueError, match="valid: minimal, standard, detailed, comprehensive"):
        DisclosureLevel.parse("ultra")


def test_levels_compare_with_names_by_rank_and_reject_other_strings() -> None:
    """A level name compares by rank ('detailed' > 'comprehensive' alphabetically, not here)."""
    assert DisclosureLevel.COMPREHENSIVE > "detailed"
    assert not DisclosureLevel.DETAILED > "comprehensive"
    assert DisclosureLevel.MINIMAL <= "minimal"
    with pytest.raises(TypeError, match="cannot order"):
        _ = DisclosureLevel.MINIMAL < "loud"
    with pytest.raises(TypeError):
        _ = DisclosureLevel.MINIMAL < 3  # type: ignore[operator]


def test_query_analysis_is_frozen_and_bounded() -> None:
    """Complexity must lie in [0, 1]; the analysis is immutable."""
    analysis = QueryAnalysis(query="q", level="detailed", complexity=0.4)
    assert analysis.level is DisclosureLevel.DETAILED
    assert not analysis.has_temporal_reference
    with pytest.raises(ValueError, match="complexity"):
        QueryAnalysis(query="q", level="standard", complexity=1.2)

"""The plug-in registry: decorator and call registration, conflicts, helpful misses."""

from __future__ import annotations

import pytest

from formatters import FORMATTERS, Registry
from tiers.errors import RegistryError


def test_register_by_decorator_and_by_call() -> None:
    """Both forms register; the decorator returns its target unchanged."""
    registry: Registry[object] = Registry("widget", group="tiered_disclosure.test_widgets")

    @registry.register("round")
    class Round:
        pass

    square = object()
    assert registry.register("square", square) is square
    assert registry.get("round") is Round
    assert registry.get("square") is square
    assert registry.names() == ["round", "square"]
    assert "round" in registry and "oval" not in registry


def test_registering_a_name_twice_to_another_object_fails() -> None:
    """Same object again is fine; a different object under a taken name is an error."""
    registry: Registry[object] = Registry("widget", group="tiered_disclosure.test_widgets")
    first = object()
    registry.register("w", first)
    registry.register("w", first)
    with pytest.raises(RegistryError, match="already registered"):
        registry.register("w", object())


def test_a_miss_lists_the_available_names() -> None:
    """Unknown names name what is available."""
    registry: Registry[object] = Registry("widget", group="tiered_disclosure.test_widgets")
    registry.register("b", object())
    registry.register("a", object())
    with pytest.raises(RegistryError, match=r"unknown widget 'c'; available: a, b"):
        registry.get("c")
    with pytest.raises(LookupError):
        registry.get("c")


def test_builtin_formatter_names_are_known() -> None:
    """The seven built-in formatters and json are named in the formatter registry."""
    assert {
        "summary_only",
        "summary_with_entities",
        "full_content",
        "full_with_context",
        "index",
        "timeline",
        "detail",
        "json",
    } <= set(FORMATTERS.names())

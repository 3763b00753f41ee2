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


def test_get_formatter_configures_a_copy_and_lists_names_on_a_miss() -> None:
    """get_formatter applies options to a copy; an unknown name lists the available ones."""
    from formatters import FormattingConfig, get_formatter

    plain = get_formatter("timeline")
    tuned = get_formatter("timeline", FormattingConfig(preview_chars=20))
    assert plain is FORMATTERS.get("timeline") and tuned is not plain
    assert tuned.options.preview_chars == 20  # type: ignore[attr-defined]
    with pytest.raises(RegistryError, match=r"unknown formatter 'tabel'; available: detail, "):
        get_formatter("tabel")


def test_a_registered_object_that_is_not_a_formatter_is_refused() -> None:
    """A plug-in without name/render/cost is reported as such when it is asked for."""
    from formatters import get_formatter

    FORMATTERS.register("not-a-formatter", object())
    try:
        with pytest.raises(RegistryError, match="has no name, render"):
            get_formatter("not-a-formatter")
    finally:
        FORMATTERS.unregister("not-a-formatter")

"""The plug-in registry: decorator and call registration, conflicts, helpful misses, lazy
built-ins and entry points, and the one variable that switches entry points off."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from tiers import registry as registry_module
from tiers.errors import RegistryError
from tiers.registry import AUTOLOAD_ENV, Registry

GROUP = "tiered_disclosure.test_widgets"


def test_register_by_decorator_and_by_call() -> None:
    """Both forms register; the decorator returns its target unchanged."""
    registry: Registry[object] = Registry("widget", group=GROUP)

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
    registry: Registry[object] = Registry("widget", group=GROUP)
    first = object()
    registry.register("w", first)
    registry.register("w", first)
    with pytest.raises(RegistryError, match="already registered"):
        registry.register("w", object())


def test_a_miss_lists_the_available_names() -> None:
    """Unknown names name what is available."""
    registry: Registry[object] = Registry("widget", group=GROUP)
    registry.register("b", object())
    registry.register("a", object())
    with pytest.raises(RegistryError, match=r"unknown widget 'c'; available: a, b"):
        registry.get("c")
    with pytest.raises(LookupError):
        registry.get("c")


def test_builtins_are_imported_on_first_use() -> None:
    """A built-in named as module:attribute is imported when first asked for."""
    registry: Registry[object] = Registry("widget", builtins={"path": "pathlib:PurePosixPath"})
    import pathlib

    assert registry.names() == ["path"]
    assert registry.get("path") is pathlib.PurePosixPath


def _plugins(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Entry points of GROUP: one good plug-in, one broken; records each lookup of the group."""
    looked_up: list[str] = []
    found = (
        EntryPoint("fraction", "fractions:Fraction", GROUP),
        EntryPoint("broken", "no_such_module_here:thing", GROUP),
    )

    def entry_points(*, group: str) -> tuple[EntryPoint, ...]:
        looked_up.append(group)
        return found if group == GROUP else ()

    monkeypatch.setattr(registry_module, "entry_points", entry_points)
    return looked_up


def test_entry_points_load_on_the_first_miss_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registered names never look at entry points; the first miss loads the group once; a
    broken plug-in is skipped (logged), not raised."""
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    looked_up = _plugins(monkeypatch)
    registry: Registry[object] = Registry("widget", group=GROUP)
    registry.register("own", own := object())
    assert registry.get("own") is own and looked_up == []
    import fractions

    assert registry.get("fraction") is fractions.Fraction
    assert registry.names() == ["fraction", "own"]
    assert looked_up == [GROUP]
    with pytest.raises(RegistryError, match="available: fraction, own"):
        registry.get("broken")


def test_the_autoload_variable_switches_entry_points_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """With TIERED_DISCLOSURE_DISABLE_PLUGIN_AUTOLOAD set, no entry point is read."""
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    looked_up = _plugins(monkeypatch)
    registry: Registry[object] = Registry("widget", group=GROUP)
    with pytest.raises(RegistryError, match="unknown widget 'fraction'"):
        registry.get("fraction")
    assert looked_up == []

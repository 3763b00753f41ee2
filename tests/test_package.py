"""Package-wide rules: curated public surfaces, imports that run one way, and no import cycles."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

from tests.imports import REPO, cycle, import_graph

PACKAGES = ("analyzers", "tiers", "safeguards", "formatters", "disclosure")

# Which of our packages each package may import (docs/layout.md).
ALLOWED = {
    "tiers": {"tiers"},
    "analyzers": {"analyzers"},
    "safeguards": {"safeguards", "tiers"},
    "formatters": {"formatters", "tiers", "safeguards"},
    "disclosure": {"disclosure", "tiers", "formatters", "analyzers", "safeguards"},
}


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_complete(name: str) -> None:
    """Each package re-exports its public names in a sorted __all__ that misses none."""
    package = importlib.import_module(name)
    exported = list(package.__all__)
    assert exported == sorted(exported, key=_isort_key)
    public = {
        attr
        for attr, value in vars(package).items()
        if not attr.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public <= set(exported), f"missing from __all__: {sorted(public - set(exported))}"
    for attr in exported:
        assert hasattr(package, attr)


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_imports_run_one_way(name: str) -> None:
    """analyzers and tiers import neither each other nor the rest; safeguards only tiers;
    formatters only tiers and safeguards; none of them disclosure (only user code does)."""
    offenders = {
        str(path.relative_to(REPO)): sorted(_imported_packages(path) - ALLOWED[name])
        for path in (REPO / name).rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_import_cycles() -> None:
    """No module of our packages or benchmarks imports, directly or through others, a module
    that imports it back: each one can be read, and imported, after the ones below it."""
    found = cycle(import_graph(*PACKAGES, "benchmarks"))
    assert found is None, "import cycle: " + " -> ".join(found or [])


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    """The check above can fail: two modules importing each other, one inside a function."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg.a import x\n", encoding="utf-8")
    graph = import_graph("pkg", root=tmp_path)
    assert graph == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert cycle({"pkg.a": {"pkg.b"}, "pkg.b": set()}) is None

"""Package-wide rules: curated public surfaces, and imports that run one way."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("analyzers", "tiers", "formatters", "disclosure")

# Which of our packages each package may import (ARCHITECTURE.md).
ALLOWED = {
    "tiers": {"tiers"},
    "analyzers": {"analyzers"},
    "formatters": {"formatters", "tiers"},
    "disclosure": {"disclosure", "tiers", "formatters", "analyzers"},
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
    """analyzers and tiers import neither each other nor the rest; formatters only tiers."""
    offenders = {
        str(path.relative_to(REPO)): sorted(_imported_packages(path) - ALLOWED[name])
        for path in (REPO / name).rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}

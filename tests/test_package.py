"""Package-wide rules: curated public surfaces, imports that run one way, and no import cycles."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("analyzers", "tiers", "formatters", "safety", "disclosure")

# Which of our packages each package may import (the README's Layout).
ALLOWED = {
    "tiers": {"tiers"},
    "analyzers": {"analyzers"},
    "formatters": {"formatters", "tiers"},
    "safety": {"safety"},
    "disclosure": {"disclosure", "tiers", "formatters", "analyzers", "safety"},
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, name: str, modules: set[str]) -> set[str]:
    """Our modules that ``path`` imports anywhere (top level, in functions, for type checking).

    ``from a import b`` names the module ``a.b`` when there is one, else ``a``. The parent
    packages that Python runs on the way (``a/__init__.py`` for ``import a.b``) are left out:
    every submodule would otherwise depend on its package's ``__init__``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            found.update(
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            )
    return (found & modules) - {name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` (its modules in import order, the first repeated), or None."""
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> list[str] | None:
        if module in trail:
            return [*trail[trail.index(module) :], module]
        if module in done:
            return None
        for target in sorted(graph[module]):
            if found := visit(target, [*trail, module]):
                return found
        done.add(module)
        return None

    return next(filter(None, (visit(m, []) for m in sorted(graph))), None)


def test_no_import_cycles() -> None:
    """No module of the four packages imports, directly or through others, a module that
    imports it back: each one can be read, and imported, after the ones below it."""
    paths = {_module_name(p): p for name in PACKAGES for p in (REPO / name).rglob("*.py")}
    graph = {name: _imported_modules(path, name, set(paths)) for name, path in paths.items()}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    """The check above can fail: two modules importing each other, one inside a function."""
    (tmp_path / "a.py").write_text("from pkg import b\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("def f():\n    from pkg.a import x\n", encoding="utf-8")
    modules = {"pkg.a", "pkg.b"}
    graph = {
        "pkg.a": _imported_modules(tmp_path / "a.py", "pkg.a", modules),
        "pkg.b": _imported_modules(tmp_path / "b.py", "pkg.b", modules),
    }
    assert graph == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert _cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert _cycle({"pkg.a": {"pkg.b"}, "pkg.b": set()}) is None

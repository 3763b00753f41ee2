"""The import graph of this repository's code, read from the source (nothing is imported), for
the tests that keep the import rules (tests/test_package.py, tests/test_layout.py)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def module_name(path: Path, root: Path = REPO) -> str:
    """The dotted name of the module at ``path`` (a package's name for its ``__init__.py``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, name: str, modules: set[str]) -> set[str]:
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


def import_graph(*packages: str, root: Path = REPO) -> dict[str, set[str]]:
    """Every module of ``packages`` (directories under ``root``) and the ones it imports."""
    paths = {module_name(p, root): p for name in packages for p in (root / name).rglob("*.py")}
    return {name: imported_modules(path, name, set(paths)) for name, path in paths.items()}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
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

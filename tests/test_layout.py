"""The house's layout: old module paths still give the very modules at the new ones."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from disclosure._moved import MOVED, new_name

REPO = Path(__file__).resolve().parents[1]


def _path_of(dotted: str) -> Path:
    return REPO.joinpath(*dotted.split("."))


def _below(package: str) -> list[str]:
    """Every module below ``package``'s directory, as dotted paths relative to it."""
    root = _path_of(package)
    if not root.is_dir():
        return []
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return [n for n in names if n]


def _aliases() -> list[tuple[str, str]]:
    """Every old path of the table, and every module below an old package, with its new path."""
    pairs = []
    for old, new in sorted(MOVED.items()):
        pairs.append((old, new))
        pairs += [(f"{old}.{rest}", f"{new}.{rest}") for rest in _below(new)]
    return pairs


@pytest.mark.parametrize(("old", "new"), _aliases())
def test_an_old_path_is_the_module_at_its_new_path(old: str, new: str) -> None:
    """Importing an old path gives the one module object, under both names, with its own spec."""
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is sys.modules[new]
    assert module.__name__ == new and module.__spec__ is not None and module.__spec__.name == new


def test_the_table_maps_only_paths_that_are_gone_to_paths_that_exist() -> None:
    """An old path must not shadow a module that exists; a new path must exist."""
    for old, new in MOVED.items():
        assert not _path_of(old).is_dir() and not _path_of(old).with_suffix(".py").exists(), old
        assert _path_of(new).is_dir() or _path_of(new).with_suffix(".py").exists(), new


def test_the_longest_old_path_decides() -> None:
    """A module below an old package follows it, unless it has an entry of its own."""
    assert new_name("disclosure.pipeline.ranking") == "disclosure.core.pipeline.ranking"
    assert new_name("disclosure.core.pipeline.ranking") is None
    assert new_name("disclosure.errors") is None
    assert new_name("disclosure") is None


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_old_paths_work_in_a_fresh_process_and_import_disclosure_stays_cheap() -> None:
    """In a process of its own (nothing imported before): ``import disclosure`` loads no moved
    module, and ``from OLD import submodule`` gives the module at the new path, warning-free."""
    out = _run(
        "import sys, disclosure\n"
        "print(sorted(m for m in sys.modules if m.startswith('disclosure')))\n"
        "from disclosure.pipeline import ranking\n"
        "import disclosure.pipeline.ranking as old\n"
        "import disclosure.core.pipeline.ranking as new\n"
        "assert ranking is new and old is new\n"
    )
    assert out.split("\n")[0] == "['disclosure', 'disclosure._moved', 'disclosure._version']"

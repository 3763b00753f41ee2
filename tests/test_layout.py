"""The house's layout: rooms in disclosure/ that import one way, a short root, and old module
paths that still give the very modules at the new ones."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import disclosure
from disclosure._moved import MOVED, new_name
from tests.imports import REPO, import_graph

# The rooms of disclosure/, bottom to top: a module imports its own room and the rooms below.
# Rooms of one rank stand side by side and import neither each other.
RANKS = {
    "root": 0,
    "storage": 1,
    "consolidation": 2,
    "core": 3,
    "service": 4,
    "evaluation": 4,
    "faces": 5,
}
ORDER = "root < storage < consolidation < core < service, evaluation < faces"
MAX_ROOT_MODULES = 8
NOT_COUNTED = {"__init__", "__main__", "_version"}  # the package itself, ``python -m``, version


# Every module path under disclosure/ before the house move (``python -m disclosure`` aside):
# each must still import, as the module at its new path.
BEFORE_THE_MOVE = [
    "disclosure",
    "disclosure._version",
    "disclosure.api",
    "disclosure.api.app",
    "disclosure.api.errors",
    "disclosure.api.guards",
    "disclosure.api.hosts",
    "disclosure.api.keys",
    "disclosure.api.memory_routes",
    "disclosure.api.models",
    "disclosure.api.observability",
    "disclosure.api.proxy",
    "disclosure.api.queries",
    "disclosure.api.summaries",
    "disclosure.citation_styles",
    "disclosure.citation_usage",
    "disclosure.cli",
    "disclosure.cli.common",
    "disclosure.cli.consolidate",
    "disclosure.cli.demo",
    "disclosure.cli.doctor",
    "disclosure.cli.evaluate",
    "disclosure.cli.forget",
    "disclosure.cli.importers",
    "disclosure.cli.ingest",
    "disclosure.cli.profiles",
    "disclosure.cli.query",
    "disclosure.cli.serve",
    "disclosure.cli.service",
    "disclosure.cli.stats",
    "disclosure.cli.tokens",
    "disclosure.cli.transfer",
    "disclosure.client",
    "disclosure.client_wire",
    "disclosure.consolidation",
    "disclosure.consolidation.config",
    "disclosure.consolidation.consolidator",
    "disclosure.consolidation.faces",
    "disclosure.consolidation.grouping",
    "disclosure.consolidation.search",
    "disclosure.consolidation.service",
    "disclosure.consolidation.store",
    "disclosure.consolidation.summarize",
    "disclosure.controller",
    "disclosure.empty",
    "disclosure.error_codes",
    "disclosure.errors",
    "disclosure.evaluation",
    "disclosure.evaluation.adaptive",
    "disclosure.evaluation.baselines",
    "disclosure.evaluation.dataset",
    "disclosure.evaluation.embedding",
    "disclosure.evaluation.experiment",
    "disclosure.evaluation.jsonl",
    "disclosure.evaluation.loading",
    "disclosure.evaluation.locomo",
    "disclosure.evaluation.longmemeval",
    "disclosure.evaluation.metrics",
    "disclosure.evaluation.oracle",
    "disclosure.evaluation.plots",
    "disclosure.evaluation.reader",
    "disclosure.evaluation.report",
    "disclosure.evaluation.runner",
    "disclosure.evaluation.sections",
    "disclosure.evaluation.stats",
    "disclosure.extras",
    "disclosure.limits",
    "disclosure.mcp",
    "disclosure.mcp.server",
    "disclosure.mcp.workflow",
    "disclosure.memories",
    "disclosure.middleware",
    "disclosure.middleware.chat",
    "disclosure.middleware.langchain",
    "disclosure.middleware.messages",
    "disclosure.namespaces",
    "disclosure.pipeline",
    "disclosure.pipeline.budget",
    "disclosure.pipeline.caches",
    "disclosure.pipeline.compose",
    "disclosure.pipeline.excerpts",
    "disclosure.pipeline.expansion",
    "disclosure.pipeline.feedback",
    "disclosure.pipeline.fusion",
    "disclosure.pipeline.gather",
    "disclosure.pipeline.ingest",
    "disclosure.pipeline.participants",
    "disclosure.pipeline.ranking",
    "disclosure.pipeline.trace",
    "disclosure.pipeline.usemodel",
    "disclosure.pool",
    "disclosure.profiles",
    "disclosure.records",
    "disclosure.result",
    "disclosure.safe_yaml",
    "disclosure.sample",
    "disclosure.scan_verdicts",
    "disclosure.service",
    "disclosure.service_config",
    "disclosure.service_host",
    "disclosure.sidefiles",
    "disclosure.sidetables",
    "disclosure.transfer",
    "disclosure.transfer_summaries",
    "disclosure.vector_server",
    "disclosure.viewer",
    "disclosure.viewer.docs",
    "disclosure.viewer.html",
    "disclosure.viewer.routes",
    "disclosure.viewer.views",
]


def room_of(module: str) -> str | None:
    """The room of a module of disclosure/ (``root`` for a module loose at the package root);
    None for the package itself and ``__main__``, which stand above every room."""
    parts = module.split(".")
    if parts[0] != "disclosure" or module in {"disclosure", "disclosure.__main__"}:
        return None
    return parts[1] if len(parts) > 2 or parts[1] in RANKS else "root"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a module of disclosure/ that runs to a room not below its own (or to the
    package itself, whose ``__init__`` loads every room), as ``module -> target``."""
    found = []
    for module, targets in sorted(graph.items()):
        room = room_of(module)
        if room is None:
            continue
        assert room in RANKS, f"{module}: a room not in RANKS ({room}); place it in the order"
        for target in sorted(t for t in targets if t.split(".")[0] == "disclosure"):
            other = room_of(target)
            if other is None or (other != room and RANKS[other] >= RANKS[room]):
                found.append(f"{module} ({room}) -> {target} ({other or 'the package'})")
    return found


def test_no_import_runs_up_a_room() -> None:
    """Every import inside disclosure/ runs within a room or down to a lower one."""
    assert upward_imports(import_graph("disclosure")) == []


def test_the_room_check_sees_an_import_up_or_across() -> None:
    """The check above can fail: up a room, across to a room of the same rank, to the package."""
    graph = {
        "disclosure.storage.a": {"disclosure.core.b", "disclosure.errors"},
        "disclosure.service.c": {"disclosure.evaluation.d", "disclosure.core.b"},
        "disclosure.safe_yaml": {"disclosure"},
        "disclosure.faces.e": {"disclosure.faces.f", "disclosure.service.c", "tiers.memory"},
    }
    assert upward_imports(graph) == [
        "disclosure.safe_yaml (root) -> disclosure (the package)",
        "disclosure.service.c (service) -> disclosure.evaluation.d (evaluation)",
        "disclosure.storage.a (storage) -> disclosure.core.b (core)",
    ]


def test_the_package_docstring_states_the_order_of_the_rooms() -> None:
    """disclosure's docstring draws the rooms in the order this test holds them to."""
    assert ORDER in " ".join((disclosure.__doc__ or "").split())
    rooms = {p.parent.name for p in (REPO / "disclosure").glob("*/__init__.py")}
    assert rooms == set(RANKS) - {"root"}


def test_few_modules_are_loose_at_the_root() -> None:
    """At most eight modules lie loose at disclosure/'s root; the rest live in rooms."""
    loose = sorted(p.stem for p in (REPO / "disclosure").glob("*.py") if p.stem not in NOT_COUNTED)
    assert len(loose) <= MAX_ROOT_MODULES, loose
    assert "errors" in loose  # a public path: disclosure.errors


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


@pytest.mark.parametrize("old", BEFORE_THE_MOVE)
def test_every_module_path_from_before_the_move_still_imports(old: str) -> None:
    """A path users could import before the move gives the module at its new path (itself,
    when it did not move), so code written against any of them keeps working."""
    assert importlib.import_module(old) is importlib.import_module(new_name(old) or old)


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
        "from disclosure.service import ServiceLock, find_service, start_service\n"
        "from disclosure.mcp import workflow\n"
        "import disclosure.core.workflow\n"
        "assert workflow is disclosure.core.workflow\n"
    )
    assert out.split("\n")[0] == "['disclosure', 'disclosure._moved', 'disclosure._version']"

"""What the pages under docs/ (and the README) state about the code stays true of it: the levels
table, the example profile, the full layout, and every file path they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from disclosure import DisclosureLevel, load_profile
from tests.markdown_blocks import DOCS, REPO, blocks, code_spans, pages, prose

TOP_PACKAGES = sorted(p.parent.name for p in REPO.glob("*/__init__.py"))
_PATH = re.compile(
    r"^(?:analyzers|tiers|formatters|safeguards|disclosure|tests|benchmarks|configs|docs)/"
    r"[\w./{},*-]*$"
)


def test_the_example_profile_is_valid(tmp_path: Path) -> None:
    """The profiles page's example profile loads and does what its comments say."""
    block = next(b for b in blocks(DOCS / "profiles.md") if b.code.startswith("# my-assistant"))
    path = tmp_path / "my-assistant.yaml"
    path.write_text(block.code, encoding="utf-8")
    profile = load_profile(path)
    assert profile.level("detailed").max_tokens == 1200
    assert profile.budget.max == 2500
    assert profile.budget.default == load_profile("chat").budget.default
    assert "자세히" in profile.analyzer.keywords[DisclosureLevel.DETAILED]


def test_levels_table_matches_the_default_profile() -> None:
    """The levels table of How it works states the default profile's values."""
    text = (DOCS / "how-it-works.md").read_text(encoding="utf-8")
    profile = load_profile("default")
    for level, cfg in profile.levels.items():
        row = re.search(rf"^\| {level.value} \|.*$", text, flags=re.M)
        assert row is not None, level
        cells = [c.strip() for c in row.group(0).strip("|").split("|")]
        assert cells[2:] == [
            str(cfg.hot_items),
            str(cfg.warm_items),
            "yes" if cfg.cold_search else "no",
            cfg.formatter,
            str(cfg.max_tokens),
        ]


def _layout_block() -> str:
    return next(b.code for b in blocks(DOCS / "layout.md") if b.language == "")


def test_the_layout_page_names_every_package_module_and_stage() -> None:
    """The full layout keeps up with the tree: every top-level package, every package below
    disclosure/ (the rooms and the packages in them), every module loose at disclosure/'s root,
    and every stage module of disclosure/core/pipeline/."""
    layout = _layout_block()
    assert {p for p in TOP_PACKAGES if not re.search(rf"^{p}/", layout, re.M)} == set()
    packages = {p.parent.name for p in (REPO / "disclosure").glob("*/**/__init__.py")}
    assert {"core", "pipeline", "service", "faces"} <= packages
    assert {p for p in packages if f"  {p}/" not in layout} == set()
    loose = {p.name for p in (REPO / "disclosure").glob("*.py")}
    loose -= {"__init__.py", "__main__.py", "_version.py"}
    assert {"errors.py", "_moved.py"} <= loose
    assert {m for m in loose if m not in layout} == set()
    stages = {p.stem for p in (REPO / "disclosure" / "core" / "pipeline").glob("*.py")}
    stages -= {"__init__"}
    assert "gather" in stages
    pipeline = layout.split("pipeline/", 1)[1].split("\n  service/", 1)[0]
    assert {s for s in stages if s not in pipeline} == set()


def _named_paths(page: Path) -> list[str]:
    return [span for span in code_spans(prose(page)) if _PATH.match(span)]


def _exists(path: str) -> bool:
    """Whether the repository has ``path``; ``{a,b}`` must each exist, ``*`` at least once."""
    braces = re.search(r"\{([^{}]*)\}", path)
    if braces:
        options = braces.group(1).split(",")
        return all(_exists(path.replace(braces.group(0), option, 1)) for option in options)
    return any(REPO.glob(path.rstrip("/")))


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_file_path_a_page_names_exists(page: Path) -> None:
    """A path named in code (`disclosure/core/controller.py`, `configs/ab/*.yaml`) is in the
    repository, so a move that leaves a page behind fails here."""
    named = _named_paths(page)
    assert [path for path in named if not _exists(path)] == []


def test_the_path_check_sees_a_stale_path() -> None:
    """The path check itself: a path from before the house move is not found, and brace and
    star patterns are expanded."""
    assert not _exists("disclosure/controller.py")
    assert not _exists("disclosure/core/{controller,nowhere}.py")
    assert _exists("disclosure/core/pipeline/{budget,usemodel}.py")
    assert _exists("benchmarks/results/whole-if-room-*.md")
    assert _PATH.match("tiers/store.py") and not _PATH.match("results/<name>/report.md")
    assert len(_named_paths(REPO / "README.md")) >= 20

"""The README's promises: a first read (short), its set-up commands, CI running the same test
command, results that agree with docs/results.md, a layout picture true to the rooms, and the
way into the code. Its examples run in tests/test_docs_examples.py with the docs' ones."""

from __future__ import annotations

import re

import disclosure
from tests.markdown_blocks import DOCS, README, REPO, blocks, code_spans, section, tables

TEXT = README.read_text(encoding="utf-8")
TOP_PACKAGES = sorted(p.parent.name for p in REPO.glob("*/__init__.py"))
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?x?")


def _bash_lines() -> list[str]:
    return [
        line
        for block in blocks(README)
        if block.language == "bash"
        for line in block.code.splitlines()
    ]


def test_the_readme_is_a_first_read() -> None:
    """At most 300 lines, with the sections a newcomer needs, in the order they need them."""
    assert len(TEXT.splitlines()) <= 300
    headings = re.findall(r"^## (.+)$", TEXT, flags=re.M)
    assert headings[:3] == ["Set up", "Quick start", "Results"]
    assert {"Shapes it runs in", "Find your way in the code", "Layout", "Read on"} <= set(headings)


def test_two_setup_commands_one_for_the_demo_one_for_the_tests() -> None:
    """One command installs and runs `disclosure demo`; one installs and runs pytest."""
    installs = [c for c in _bash_lines() if "pip install -c constraints.txt" in c]
    assert any(c.endswith("disclosure demo") for c in installs)
    assert any(c.endswith("&& pytest") for c in installs)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """.ci/run contains the README's test command verbatim, and builds the docs after it."""
    test_command = next(line for line in _bash_lines() if line.endswith("&& pytest"))
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci
    assert any("mkdocs build --strict" in line for line in ci[ci.index(test_command) :])


def test_the_docs_give_the_same_setup_commands() -> None:
    """Every install command on a docs page is one of the README's, character for character."""
    readme = {c for c in _bash_lines() if "pip install" in c}
    for page in DOCS.rglob("*.md"):
        for block in blocks(page):
            lines = [line for line in block.code.splitlines() if "pip install" in line]
            assert set(lines) <= readme, page


def test_constraints_pin_the_cpu_torch() -> None:
    """The install route pins torch, so no CUDA wheels are pulled."""
    lines = (REPO / "constraints.txt").read_text(encoding="utf-8").split()
    assert "torch==2.13.0" in lines


def test_results_tables_are_those_of_docs_results() -> None:
    """Each results table of the README is, row for row, the one in docs/results.md, and every
    figure the README's Results section states is stated there too: one re-measurement, two
    places, and this test says when one was left behind."""
    readme = section(README, "Results")
    results_page = (DOCS / "results.md").read_text(encoding="utf-8")
    full = tables(results_page)
    shown = tables(readme)
    assert set(shown) == {"LoCoMo dev", "LongMemEval S dev"}
    for name, rows in shown.items():
        assert rows == full[name], name
    figures = set(_NUMBER.findall(readme)) - {"1", "2", "4"}
    assert {f for f in figures if f not in results_page} == set()


def test_the_layout_picture_shows_every_package_and_room_in_order() -> None:
    """The README's Layout picture names each top-level package, each room of disclosure/ and
    its public root modules, and lists the rooms bottom to top as disclosure's docstring does."""
    layout = next(b.code for b in blocks(README) if b.language == "" and "disclosure/" in b.code)
    assert {p for p in TOP_PACKAGES if not re.search(rf"^{p}/", layout, re.M)} == set()
    rooms = {p.parent.name for p in (REPO / "disclosure").glob("*/__init__.py")}
    assert {r for r in rooms if f"  {r}/" not in layout} == set()
    loose = {p.name for p in (REPO / "disclosure").glob("[!_]*.py")}
    assert {m for m in loose if m not in layout} == set()
    doc = disclosure.__doc__ or ""
    order = re.search(r"Bottom to top: (.+?)\.", doc, flags=re.S)
    assert order is not None
    expected = re.split(r"\s*[<,]\s*", " ".join(order.group(1).split()))
    assert expected[0] == "root"
    shown = re.findall(r"^  (\(root\)|\w+)/? ", layout, flags=re.M)
    assert [r.strip("()") for r in shown] == expected


def test_the_way_into_the_code_names_the_files() -> None:
    """The four questions a newcomer asks are answered with the files that answer them."""
    way = section(README, "Find your way in the code")
    named = set(code_spans(way))
    for question, files in {
        "Where a memory goes on ingest": {"disclosure/core/pipeline/ingest.py", "tiers/store.py"},
        "How a query becomes context": {"disclosure/core/pipeline/", "formatters/"},
        "Where the local service lives": {"disclosure/service/"},
        "Where to add a formatter": {"formatters/base.py", "formatters/registry.py"},
    }.items():
        assert f"**{question}.**" in way
        assert files <= named, question

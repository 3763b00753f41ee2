"""The README's promises: its set-up commands, CI running the same test command, its examples."""

from __future__ import annotations

import re
from pathlib import Path

from disclosure import DisclosureLevel, load_profile

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def test_two_setup_commands_one_for_the_demo_one_for_the_tests() -> None:
    """One command installs and runs `disclosure demo`; one installs and runs pytest."""
    commands = [line for block in _bash_blocks() for line in block.splitlines()]
    installs = [c for c in commands if "pip install -c constraints.txt" in c]
    assert any(c.endswith("disclosure demo") for c in installs)
    assert any(c.endswith("&& pytest") for c in installs)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """.ci/run contains the README's test command verbatim."""
    test_command = next(
        line
        for block in _bash_blocks()
        for line in block.splitlines()
        if line.endswith("&& pytest")
    )
    assert test_command in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_constraints_pin_the_cpu_torch() -> None:
    """The install route pins torch, so no CUDA wheels are pulled."""
    lines = (REPO / "constraints.txt").read_text(encoding="utf-8").split()
    assert "torch==2.13.0" in lines


def test_the_sample_profile_in_the_readme_is_valid(tmp_path: Path) -> None:
    """The README's example profile loads and does what its comments say."""
    block = re.search(r"```yaml\n(# my-assistant.yaml\n.*?)```", README, flags=re.S)
    assert block is not None
    path = tmp_path / "my-assistant.yaml"
    path.write_text(block.group(1), encoding="utf-8")
    profile = load_profile(path)
    assert profile.level("detailed").max_tokens == 1200
    assert profile.budget.max == 2500
    assert profile.budget.default == load_profile("chat").budget.default
    assert "자세히" in profile.analyzer.keywords[DisclosureLevel.DETAILED]


def test_levels_table_matches_the_default_profile() -> None:
    """The README's levels table states the default profile's values."""
    profile = load_profile("default")
    for level, cfg in profile.levels.items():
        row = re.search(rf"^\| {level.value} \|.*$", README, flags=re.M)
        assert row is not None, level
        cells = [c.strip() for c in row.group(0).strip("|").split("|")]
        assert cells[2:] == [
            str(cfg.hot_items),
            str(cfg.warm_items),
            "yes" if cfg.cold_search else "no",
            cfg.formatter,
            str(cfg.max_tokens),
        ]


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_every_python_example_runs(capsys: object) -> None:
    """The README's Python examples run as written (quick start, middleware)."""
    blocks = _python_blocks()
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})


def test_the_layout_names_every_package_and_pipeline_stage() -> None:
    """The Layout section keeps up with the tree: every package below disclosure/ (the rooms
    and the packages in them) and every stage module of disclosure/core/pipeline/ is named
    there."""
    layout = README.split("## Layout", 1)[1].split("```")[1]
    packages = {p.parent.name for p in (REPO / "disclosure").glob("*/**/__init__.py")}
    assert {"core", "pipeline"} <= packages
    assert {p for p in packages if f"  {p}/" not in layout} == set()
    stages = {p.stem for p in (REPO / "disclosure" / "core" / "pipeline").glob("*.py")}
    stages -= {"__init__"}
    assert "gather" in stages
    pipeline = layout.split("pipeline/", 1)[1].split("\n  service/", 1)[0]
    assert {s for s in stages if s not in pipeline} == set()

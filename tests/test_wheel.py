"""An installed wheel works without the repository: profiles and sample data ship inside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_profiles_and_data_and_runs_from_elsewhere(tmp_path: Path) -> None:
    """Build the wheel, unpack it away from the repo, and load every built-in profile from it."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(REPO),
            "-w",
            str(tmp_path / "dist"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next((tmp_path / "dist").glob("tiered_disclosure-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for profile in (REPO / "configs" / "profiles").glob("*.yaml"):
        assert f"disclosure/_builtin_profiles/{profile.name}" in names
    assert "disclosure/data/sample_conversation.jsonl" in names
    for data in ("injection_model.json", "injection_lexicon.json", "injection_words.txt"):
        assert f"safeguards/{data}" in names
    assert {
        "disclosure/faces/viewer/static/viewer.css",
        "disclosure/faces/viewer/static/viewer.js",
    } <= set(names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import disclosure, sys; from disclosure import builtin_profiles, load_profile;"
        "assert disclosure.__file__.startswith(sys.argv[1]), disclosure.__file__;"
        "print(sorted(load_profile(n).name for n in builtin_profiles()));"
        "import safeguards as s; assert s.__file__.startswith(sys.argv[1]), s.__file__;"
        "from safeguards.injection_model import load_model; assert load_model().weights"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(site)!r}); {script}",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "'large-archive'" in result.stdout

"""``disclosure eval`` end to end, run as a subprocess like a user would (cheap baselines only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).resolve().parent / "data"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "disclosure", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        check=False,
    )


def test_the_tiny_experiment_runs_end_to_end(tmp_path: Path) -> None:
    """The tiny A/B experiment exits 0, prints the systems table and writes every report file."""
    out = tmp_path / "out"
    done = run("eval", "--experiment", "configs/ab/tiny.yaml", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "| baseline:bm25@80 |" in done.stdout
    assert "| long-memory |" in done.stdout
    assert "Budget violations: 0." in done.stdout
    assert "tiny: 6 systems x 12 questions" in done.stderr
    for name in ("results.json", "records.jsonl", "report.md", "report.html", "latency.png"):
        assert (out / name).is_file(), name
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["experiment"]["seed"] == 7
    assert data["comparisons"][0]["mcnemar_p"] is not None


def test_flags_stand_in_for_a_file_and_override_it(tmp_path: Path) -> None:
    """--dataset/--baseline/--budget run a JSONL dataset (format from the suffix), no file."""
    out = tmp_path / "flags"
    done = run(
        "eval", "--name", "mine", "--dataset", str(DATA / "tiny.jsonl"),
        "--baseline", "bm25", "--baseline", "recency", "--budget", "30", "--seed", "3",
        "--resamples", "200", "--out", str(out), "--no-plots", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert list(data["systems"]) == ["baseline:bm25@30", "baseline:recency@30"]
    assert data["experiment"]["bootstrap"]["resamples"] == 200
    assert data["dataset"]["questions"] == 4
    assert not (out / "latency.png").exists()
    overridden = run(
        "eval", "--experiment", "configs/ab/tiny.yaml", "--baseline", "recency",
        "--limit-questions", "4", "--out", str(tmp_path / "o"), "--no-plots", "--no-progress",
    )  # fmt: skip
    assert overridden.returncode == 1
    assert "reference: 'baseline:bm25@80' is none of long-memory, baseline:recency@40" in (
        overridden.stderr
    )


def test_usage_and_errors_exit_non_zero_with_one_clear_line(tmp_path: Path) -> None:
    """No systems: usage (2). A profile without the controller, or a missing file: one line (1)."""
    usage = run("eval")
    assert usage.returncode == 2 and "give --experiment FILE" in usage.stderr
    missing = run("eval", "--baseline", "bm25", "--dataset", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "no such dataset" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("baselines: [bm25]\nbudget: 100\n", encoding="utf-8")
    invalid = run("eval", "--experiment", str(bad))
    assert invalid.returncode == 1 and "bad.yaml" in invalid.stderr
    assert "budget: unknown key" in invalid.stderr


def test_a_longmemeval_file_is_recognised_by_its_rows(tmp_path: Path) -> None:
    """A .jsonl.gz whose rows carry haystack_sessions runs as longmemeval without --format."""
    from tests.disclosure.evaluation.test_longmemeval import row, write

    path = write(tmp_path / "lme.jsonl.gz", [row("q1"), row("q2")])
    out = tmp_path / "lme"
    done = run(
        "eval", "--dataset", str(path), "--baseline", "bm25", "--budget", "40",
        "--out", str(out), "--no-plots", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["dataset"]["questions"] == 2
    assert data["systems"]["baseline:bm25@40"]["summary"]["recall"] > 0

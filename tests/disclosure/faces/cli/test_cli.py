"""The ``disclosure`` command, run as a subprocess like a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from disclosure import __version__

REPO = Path(__file__).resolve().parents[4]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "disclosure", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )


def test_help_and_version() -> None:
    """--help lists the commands; --version prints the package version."""
    helped = run("--help")
    assert helped.returncode == 0
    for command in (
        "demo",
        "ingest",
        "query",
        "show",
        "stats",
        "forget",
        "serve",
        "profiles",
        "tokens",
        "eval",
    ):
        assert command in helped.stdout
    version = run("--version")
    assert version.returncode == 0
    assert __version__ in version.stdout


def test_tokens_count_from_stdin_and_file(tmp_path: Path) -> None:
    """'hello world' counts 2 tokens from stdin and from a file."""
    counted = run("tokens", "count", stdin="hello world").stdout
    assert counted.startswith("2 tokens (cl100k_base, exact)")
    path = tmp_path / "t.txt"
    path.write_text("hello world", encoding="utf-8")
    assert run("tokens", "count", str(path)).stdout.startswith("2 tokens")


def test_profiles_list_show_validate() -> None:
    """list names the built-ins, show prints YAML, validate passes the shipped profiles."""
    listed = run("profiles", "list").stdout
    assert all(name in listed for name in ("default", "chat", "coding-agent", "large-archive"))
    shown = run("profiles", "show", "chat")
    assert shown.returncode == 0
    assert "name: chat" in shown.stdout
    files = sorted(str(p) for p in (REPO / "configs" / "profiles").glob("*.yaml"))
    validated = run("profiles", "validate", *files)
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.count("ok: ") == len(files)


def test_a_broken_profile_exits_non_zero_with_one_clear_line(tmp_path: Path) -> None:
    """validate reports the file, the path inside it and the reason; no traceback."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("levels:\n  detailed: {max_tokens: -1}\n", encoding="utf-8")
    result = run("profiles", "validate", str(bad))
    assert result.returncode == 1
    assert "levels -> detailed -> max_tokens" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("profiles", "show", "nope"), "unknown profile 'nope'"),
        (("tokens", "count", "/no/such/file.txt"), "No such file"),
        (("tokens", "count", "--encoding", "nonexistent"), "cannot be loaded offline"),
    ],
)
def test_user_mistakes_print_one_line_and_exit_non_zero(args: tuple[str, ...], needle: str) -> None:
    """User errors exit 1 with a single 'disclosure: error:' line and no traceback."""
    result = run(*args, stdin="x")
    assert result.returncode == 1
    assert result.stderr.startswith("disclosure: error:")
    assert needle in result.stderr
    assert result.stderr.count("\n") == 1


def test_usage_errors_exit_two() -> None:
    """An unknown command is a usage error (exit 2)."""
    assert run("frobnicate").returncode == 2


def test_demo_runs_on_the_defaults() -> None:
    """`disclosure demo` ingests the sample and queries it at every level, offline."""
    result = run("demo")
    assert result.returncode == 0, result.stderr
    for level in ("minimal", "standard", "detailed", "comprehensive"):
        assert f"\u2501 {level} \u2501" in result.stdout
    assert result.stdout.count("savings via progressive disclosure") == 4
    assert result.stdout.count("[mem:") > 10
    assert "layer 3" in result.stdout and "Traceback" not in result.stderr


def test_serve_without_the_extra_says_what_to_install(tmp_path: Path) -> None:
    """A missing optional dependency is one line naming the extra to install."""
    blocker = tmp_path / "fastapi"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('blocked for this test')\n")
    result = subprocess.run(
        [sys.executable, "-m", "disclosure", "serve", "--data-dir", str(tmp_path / "h")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"},
        check=False,
    )
    assert result.returncode == 1
    assert "pip install 'tiered-disclosure[server]'" in result.stderr
    assert result.stderr.count("\n") == 1

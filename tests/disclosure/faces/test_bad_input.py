"""Bad input, from the CLI and over HTTP: a clear error, no traceback, no 5xx, nothing created.

The inputs are the ones a careless user or an attacker sends: deep nesting, a memory longer
than the analyzers take, lone surrogates, a transcript header with an impossible date, a device
as a file, a "billion laughs" YAML profile, damaged side files, an archive deleted from under
its vectors, a full disk; and reads of namespaces that do not exist.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from disclosure.core.controller import DisclosureController
from disclosure.faces.cli import main
from disclosure.faces.limits import json_depth, read_bounded
from disclosure.storage.namespaces import NAMESPACES_DIR
from tests.disclosure.conftest import make_lean_profile
from tests.disclosure.faces.cli.test_cli_store import run
from tiers.errors import CorruptDataError, InvalidInputError
from tiers.memory import Memory


def nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": 1}
    for _ in range(depth):
        value = {"a": value}
    return value


def namespaces(root: Path) -> list[Path]:
    base = root / NAMESPACES_DIR
    return list(base.iterdir()) if base.is_dir() else []


@pytest.fixture
def lean_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "lean.yaml"
    path.write_text(make_lean_profile().to_yaml(), encoding="utf-8")
    return path


BAD_FILES = {
    "deep.jsonl": '{"id": "m", "content": "x", "metadata": ' + '{"a": ' * 5000 + "1" + "}" * 5001,
    "deep-array.json": "[" * 100_000 + "]" * 100_000,
    "surrogate.jsonl": '{"id": "m", "content": "bad \\ud800 text"}\n',
    "long.jsonl": json.dumps({"id": "m", "content": "word " * 300_000}) + "\n",
    "bad-date.txt": "# Session kickoff 2026-13-45 09:00\nDana: hello there\n",
    "deep-meta.jsonl": json.dumps({"id": "m", "content": "x", "metadata": nested(40)}) + "\n",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_cli_ingest_of_a_bad_file_is_one_error_line_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_text(BAD_FILES[name], encoding="utf-8", errors="surrogatepass")
    root = tmp_path / "root"
    code, out, err = run(
        capsys, "ingest", str(path), "--data-dir", str(root), "--profile", str(lean_yaml)
    )
    assert code == 1, (out, err)
    assert err.startswith("disclosure: error:") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert namespaces(root) == []


def test_cli_ingest_of_a_device_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path
) -> None:
    code, _, err = run(
        capsys,
        "ingest",
        "/dev/zero",
        "--data-dir",
        str(tmp_path / "r"),
        "--profile",
        str(lean_yaml),
    )
    assert code == 1 and "a device" in err and "Traceback" not in err


def test_bounded_reads_and_depth_counts(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 5000)
    assert read_bounded(path, limit=5000) == b"x" * 5000
    with pytest.raises(InvalidInputError):
        read_bounded(path, limit=4999)
    assert json_depth(b'{"a": [1, {"b": "[[[[["}]}') == 3
    assert json_depth(b'"\\"[[[["') == 0
    assert json_depth(b"[" * 10_000) == 10_000


def test_a_billion_laughs_profile_is_refused_quickly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = ["name: laughs", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "query", "x", "--profile", str(path), "--data-dir", str(tmp_path))
    assert code == 1 and "aliases" in err and "Traceback" not in err


def test_reads_of_an_unknown_namespace_create_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path
) -> None:
    root = tmp_path / "root"
    common = ["--data-dir", str(root), "--profile", str(lean_yaml), "--user", "nobody"]
    for args, exit_code in ((["query", "hello"], 0), (["stats"], 0), (["show", "mem:abcdef"], 1)):
        code, _, err = run(capsys, *args, *common)  # empty answers; show: no such memory
        assert code == exit_code and "nothing is stored" in err, (args, err)
    code, out, _ = run(capsys, "forget", "--id", "x", "--yes", *common)
    assert code == 0 and "nothing to forget" in out
    assert namespaces(root) == []


def test_terminal_output_strips_control_characters(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path
) -> None:
    path = tmp_path / "ansi.jsonl"
    evil = "the deploy key \x1b[2J\x1b[31mis rotated\x1b]0;owned\x07 weekly \u202eevil"
    path.write_text(json.dumps({"id": "ansi", "content": evil}) + "\n", encoding="utf-8")
    common = ["--data-dir", str(tmp_path / "root"), "--profile", str(lean_yaml)]
    assert run(capsys, "ingest", str(path), *common)[0] == 0
    for args in (["query", "deploy key rotated", "--level", "detailed"], ["show", "ansi"]):
        code, out, _ = run(capsys, *args, *common)
        assert code == 0 and "rotated" in out, out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_forget_all_removes_the_namespace_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path
) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"id": "m", "content": "a secret plan"}) + "\n", encoding="utf-8")
    root = tmp_path / "root"
    common = ["--data-dir", str(root), "--profile", str(lean_yaml), "--user", "ann"]
    assert run(capsys, "ingest", str(path), *common)[0] == 0
    assert len(namespaces(root)) == 1
    code, _, err = run(capsys, "forget", "--all", *common, stdin="n\n")
    assert "not confirmed" in err
    assert code == 1 and len(namespaces(root)) == 1  # not confirmed: nothing removed
    code, out, _ = run(capsys, "forget", "--all", "--yes", *common)
    assert code == 0 and "1 memories" in out
    assert namespaces(root) == []


def test_damaged_side_files_are_set_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    profile = make_lean_profile()
    with DisclosureController.from_profile(profile, data_dir=data) as controller:
        controller.ingest([Memory(id="a", content="the staging server moved to berlin")])
        controller.disclose("staging server")
    (data / "cache" / "index" / "cache.db").write_bytes(b"not a database" * 500)
    (data / "usage.sqlite3").write_bytes(b"not a database" * 500)
    with DisclosureController.from_profile(profile, data_dir=data) as controller:
        assert [i.id for i in controller.disclose("staging server").items] == ["a"]
    assert "damaged" in caplog.text
    assert any(p.name.startswith("usage.sqlite3.damaged-") for p in data.iterdir())


def test_an_archive_deleted_from_under_its_vectors_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "warm").mkdir(parents=True)
    sqlite3.connect(data / "warm" / "chroma.sqlite3").execute("CREATE TABLE t (x)").close()
    (data / "archive.sqlite3").write_bytes(b"")
    with pytest.raises(CorruptDataError, match="doctor"):
        DisclosureController.from_profile(make_lean_profile(), data_dir=data)
    assert (data / "archive.sqlite3").stat().st_size == 0  # nothing was written


def test_main_turns_unexpected_errors_into_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import disclosure.faces.cli.tokens as tokens

    def broken(args: object) -> int:
        raise KeyError("surprise")

    monkeypatch.setattr(tokens, "_count", broken)
    code, _, err = run(capsys, "tokens", "count")
    assert code == 1 and "internal error" in err and "--traceback" in err
    assert "Traceback" not in err
    with pytest.raises(KeyError):
        main(["--traceback", "tokens", "count"])


def test_doctor_finds_and_repairs_what_it_safely_can(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lean_yaml: Path
) -> None:
    root = tmp_path / "root"
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"id": "m", "content": "the deploy runs at noon"}) + "\n")
    for user in ("ann", "bob"):
        common = ["--data-dir", str(root), "--profile", str(lean_yaml), "--user", user]
        assert run(capsys, "ingest", str(path), *common)[0] == 0
        assert run(capsys, "query", "deploy", *common)[0] == 0
    code, out, _ = run(capsys, "doctor", "--data-dir", str(root))
    assert code == 0 and "2 namespaces checked" in out and "0 problem(s) left" in out
    ann, bob = sorted(namespaces(root))
    (ann / "usage.sqlite3").write_bytes(b"garbage" * 100)
    (ann / "cache" / "index" / "cache.db").write_bytes(b"garbage" * 100)
    (bob / "warm").mkdir()
    sqlite3.connect(bob / "warm" / "chroma.sqlite3").execute("CREATE TABLE t (x)").close()
    (bob / "archive.sqlite3").unlink()
    code, out, _ = run(capsys, "doctor", "--data-dir", str(root))
    assert code == 1 and "usage.sqlite3 is damaged" in out and "missing or empty" in out
    code, out, _ = run(capsys, "doctor", "--data-dir", str(root), "--repair")
    assert code == 1 and out.count("repaired:") == 3, out  # two side files, one orphaned index
    assert "damaged copies set aside" in out  # reported: they may hold forgotten text
    assert not (bob / "warm").exists()
    common = ["--data-dir", str(root), "--profile", str(lean_yaml), "--user", "ann"]
    code, out, _ = run(capsys, "query", "deploy", *common)
    assert code == 0 and "noon" in out  # the store opens and works after the repair


def test_the_cli_on_a_huge_file_stays_small_and_says_why(tmp_path: Path, lean_yaml: Path) -> None:
    """A 300 MB file (sparse, all zeros) is refused after reading at most the limit: a real
    process, its own peak memory measured (``VmHWM``, the high-water mark of its own address
    space: ``wait4``'s ``ru_maxrss`` also counts the test process's size at the moment it
    started the child, over 1 GB late in a full run), no traceback, nothing created."""
    import os
    import subprocess
    import sys

    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)
    root = tmp_path / "root"
    peak = tmp_path / "peak-kib.txt"
    launch = (  # the CLI, writing its own peak resident memory (KiB) to argv[1] when it exits
        "import atexit, sys; from pathlib import Path; out = Path(sys.argv.pop(1)); "
        "atexit.register(lambda: out.write_text(Path('/proc/self/status').read_text()"
        ".split('VmHWM:')[1].split()[0])); from disclosure.faces.cli import main; sys.exit(main())"
    )
    command = [
        sys.executable,
        "-c",
        launch,
        str(peak),
        "ingest",
        str(huge),
        "--data-dir",
        str(root),
    ]
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as sink:
        child = subprocess.run(
            [*command, "--profile", str(lean_yaml)],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        )
    stderr = errors.read_text()
    assert child.returncode == 1 and "larger than 256 MB" in stderr, stderr
    assert "Traceback" not in stderr
    assert 10_000 < int(peak.read_text()) < 1024 * 1024  # KiB: a Python process, under 1 GB
    assert namespaces(root) == []

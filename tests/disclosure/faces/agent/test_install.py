"""`disclosure agent install|uninstall claude-code`: merged into the user's settings without
touching their entries, idempotent, and undone exactly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from disclosure.faces.agent.install import HOOK_EVENTS
from disclosure.faces.cli import main

LEAN = "extends: coding-agent\nname: lean-agent\ntiers:\n  warm:\n    embedder: none\n"
USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "npx prettier -w"}]}
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./branch-note.sh"}]}],
    },
    "enabledMcpjsonServers": ["github"],
}
USER_MCP = {"mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]}}}


@pytest.fixture
def lean(tmp_path: Path) -> Path:
    path = tmp_path / "lean.yaml"
    path.write_text(LEAN, encoding="utf-8")
    return path


def snapshot(base: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()
    }


def agent(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(["agent", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def install_args(project: Path, tmp_path: Path, lean: Path, *more: str) -> list[str]:
    return ["install", "claude-code", "--project", str(project), "--root",
            str(tmp_path / "data"), "--profile", str(lean), *more]  # fmt: skip


def test_install_merges_keeps_the_users_entries_and_uninstall_restores_every_byte(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    project = tmp_path / "billing"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps(USER_SETTINGS, indent=4) + "\n", encoding="utf-8")
    (project / ".mcp.json").write_text(json.dumps(USER_MCP, indent=2) + "\n", encoding="utf-8")
    (project / "src.py").write_text("print(1)\n", encoding="utf-8")
    before = snapshot(project)

    code, out, err = agent(capsys, *install_args(project, tmp_path, lean))
    assert code == 0, err
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == USER_SETTINGS["permissions"] and merged["env"] == {"FOO": "bar"}
    assert settings.read_text(encoding="utf-8").startswith('{\n    "permissions"')  # indent kept
    for event, (ours, matcher) in HOOK_EVENTS.items():
        groups = merged["hooks"][event]
        assert groups[: len(USER_SETTINGS["hooks"].get(event, []))] == USER_SETTINGS["hooks"].get(
            event, []
        )  # the user's groups first, untouched
        mine = groups[-1]
        assert mine.get("matcher") == matcher and len(mine["hooks"]) == 1
        assert f" hook {ours} --root " in mine["hooks"][0]["command"]
    assert merged["enabledMcpjsonServers"] == ["github", "tiered-disclosure"]
    servers = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["github"] == USER_MCP["mcpServers"]["github"]
    assert servers["tiered-disclosure"]["args"][-6:-2] == ["--root", str(tmp_path / "data"),
                                                           "--profile", str(lean)]  # fmt: skip
    commands = sorted(p.name for p in (project / ".claude" / "commands").iterdir())
    assert commands == ["mem-forget.md", "mem-search.md", "mem-show.md", "mem-stats.md"]
    assert "user=billing-" in out

    installed = snapshot(project)
    code, out, _ = agent(capsys, *install_args(project, tmp_path, lean))
    assert code == 0 and "already installed, nothing changed" in out
    assert snapshot(project) == installed  # idempotent

    code, out, err = agent(capsys, "uninstall", "claude-code", "--project", str(project))
    assert code == 0, err
    assert snapshot(project) == before  # exactly what was added is gone, byte for byte


def test_into_an_empty_project_and_out_again_leaves_nothing(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    assert agent(capsys, *install_args(project, tmp_path, lean))[0] == 0
    assert (project / ".claude" / "settings.json").is_file() and (project / ".mcp.json").is_file()
    assert agent(capsys, "uninstall", "claude-code", "--project", str(project))[0] == 0
    assert list(project.iterdir()) == []


def test_the_users_own_files_of_the_same_name_are_left_alone(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    """A command file of theirs named like ours stays; one of ours they edited stays too."""
    project = tmp_path / "p"
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "mem-search.md").write_text("my own search\n", encoding="utf-8")
    code, out, _ = agent(capsys, *install_args(project, tmp_path, lean))
    assert code == 0 and "mem-search.md: a command file of yours has this name" in out
    assert (commands / "mem-search.md").read_text(encoding="utf-8") == "my own search\n"
    (commands / "mem-show.md").write_text("edited\n", encoding="utf-8")
    code, out, _ = agent(capsys, "uninstall", "claude-code", "--project", str(project))
    assert code == 0 and "mem-show.md: edited since it was installed" in out
    assert sorted(p.name for p in commands.iterdir()) == ["mem-search.md", "mem-show.md"]


def test_reinstalling_with_another_namespace_replaces_its_hooks(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    agent(capsys, *install_args(project, tmp_path, lean))
    agent(capsys, *install_args(project, tmp_path, lean, "--namespace", "tenant=acme,user=dana"))
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    for groups in hooks.values():
        assert len(groups) == 1
        assert groups[0]["hooks"][0]["command"].endswith("--namespace tenant=acme,user=dana")


def test_unreadable_settings_are_refused_and_nothing_is_written(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{ // a comment\n}", encoding="utf-8")
    code, _, err = agent(capsys, *install_args(project, tmp_path, lean))
    assert code == 1 and "settings.json is not valid JSON" in err and "nothing was changed" in err
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json"]
    code, _, err = agent(capsys, "uninstall", "claude-code", "--project", str(project))
    assert code == 1 and "nothing of tiered-disclosure is recorded" in err


def test_user_scope_writes_the_users_settings_and_claude_json(
    tmp_path: Path, lean: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """User scope: ~/.claude/settings.json, ~/.claude/commands, and ~/.claude.json's servers;
    no namespace is fixed (each project gets its own at run time)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    state = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}}
    (home / ".claude.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    before = snapshot(home)
    args = ["install", "claude-code", "--scope", "user", "--root", str(tmp_path / "data"),
            "--profile", str(lean)]  # fmt: skip
    code, out, err = agent(capsys, *args)
    assert code == 0 and "one namespace per project" in out, err
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert "--namespace" not in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["numStartups"] == 3 and "tiered-disclosure" in claude["mcpServers"]
    assert (home / ".claude" / "commands" / "mem-stats.md").is_file()
    assert agent(capsys, "uninstall", "claude-code", "--scope", "user")[0] == 0
    assert snapshot(home) == before


def test_the_installed_hook_commands_run_and_never_fail(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    """Each command line in the settings runs in a shell: malformed input, exit 0, one line."""
    project = tmp_path / "p"
    project.mkdir()
    agent(capsys, *install_args(project, tmp_path, lean))
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    for event, groups in hooks.items():
        command = groups[0]["hooks"][0]["command"]
        done = subprocess.run(command, shell=True, input="not json", capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
        assert done.returncode == 0 and done.stdout == "", (event, done)
        assert len(done.stderr.splitlines()) == 1 and "not JSON" in done.stderr


def test_status_says_what_is_installed_and_where_the_memory_lives(
    tmp_path: Path, lean: Path, capsys: Any
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    code, out, _ = agent(capsys, "status", "claude-code", "--project", str(project))
    assert code == 3 and "not installed" in out
    agent(capsys, *install_args(project, tmp_path, lean))
    code, out, _ = agent(capsys, "status", "claude-code", "--project", str(project))
    assert code == 0 and "no service runs (the first hook starts it)" in out
    record = json.loads(out[: out.rindex("}") + 1])
    assert record["root"] == str(tmp_path / "data") and set(record["hooks"]) == set(HOOK_EVENTS)

"""``disclosure agent install|uninstall claude-code``: what Claude Code reads, written by its
conventions and merged into what the user has.

Project scope (``<project>/``) and user scope (``~/.claude``, or ``$CLAUDE_CONFIG_DIR``):

- hooks in ``.claude/settings.json``: one matcher group per event (SessionStart,
  UserPromptSubmit, PostToolUse, Stop, SessionEnd) whose command runs ``disclosure hook EVENT``;
- slash commands as command files ``.claude/commands/mem-{search,show,forget,stats}.md``;
- the MCP server entry ``tiered-disclosure`` in ``.mcp.json`` (project; listed in the
  settings' ``enabledMcpjsonServers`` so that it starts without a prompt) or ``~/.claude.json``
  (user), running ``disclosure agent mcp``.

Nothing of the user's is overwritten: their hooks, keys and files stay as they are (a command
file or server entry of the same name that is not ours is left alone, and said so), and files
keep their indentation. What was added is recorded in ``.claude/tiered-disclosure.json``; an
install run again changes nothing, and uninstall removes exactly what the record names (a
command file the user edited since is kept).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disclosure.faces.agent.command_files import SERVER_NAME, command_files
from disclosure.faces.agent.state import write_atomically
from tiers.errors import InvalidInputError

__all__ = ["HOOK_EVENTS", "SERVER_NAME", "Layout", "Report", "install", "layout", "uninstall"]

RECORD_NAME = "tiered-disclosure.json"
RECORD_VERSION = 1
HOOK_TIMEOUT = 10  # seconds Claude Code waits; the hook itself ends within one
# Claude Code's event -> (this hook's event, matcher)
HOOK_EVENTS: dict[str, tuple[str, str | None]] = {
    "SessionStart": ("session-start", None),
    "UserPromptSubmit": ("prompt", None),
    "PostToolUse": ("tool-use", "*"),
    "Stop": ("stop", None),
    "SessionEnd": ("session-end", None),
}


@dataclass(frozen=True)
class Layout:
    """Where one scope's files are."""

    scope: str
    base: Path  # the project, or the user's Claude directory's parent
    claude_dir: Path
    mcp_file: Path

    @property
    def settings(self) -> Path:
        return self.claude_dir / "settings.json"

    @property
    def commands(self) -> Path:
        return self.claude_dir / "commands"

    @property
    def record(self) -> Path:
        return self.claude_dir / RECORD_NAME


@dataclass
class Report:
    """What an install or uninstall did, and what it left alone (and why)."""

    changed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def layout(scope: str, project: Path | None = None) -> Layout:
    """The files of ``scope`` (``project``: the project directory, default the current one)."""
    if scope == "project":
        base = (project or Path.cwd()).absolute()
        return Layout("project", base, base / ".claude", base / ".mcp.json")
    if scope != "user":
        raise InvalidInputError(f"unknown scope {scope!r}; use project or user")
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    claude_dir = Path(configured).expanduser() if configured else Path.home() / ".claude"
    mcp_file = claude_dir / ".claude.json" if configured else Path.home() / ".claude.json"
    return Layout("user", claude_dir.parent, claude_dir, mcp_file)


def entry_point() -> list[str]:
    """How to run this installation's ``disclosure``: its script beside the interpreter, else
    the one on PATH, else ``python -m disclosure``."""
    beside = Path(sys.executable).with_name("disclosure")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    import shutil

    found = shutil.which("disclosure")
    return [found] if found else [sys.executable, "-m", "disclosure"]


def hook_commands(root: Path, profile: str, namespace: str | None) -> dict[str, str]:
    """Claude Code event -> the shell command its hook runs."""
    runner = " ".join(shlex.quote(part) for part in entry_point())
    options = f"--root {shlex.quote(str(root))} --profile {shlex.quote(profile)}"
    if namespace is not None:
        options += f" --namespace {shlex.quote(namespace)}"
    return {event: f"{runner} hook {ours} {options}" for event, (ours, _) in HOOK_EVENTS.items()}


def server_entry(root: Path, profile: str, namespace: str | None) -> dict[str, Any]:
    command, *prefix = entry_point()
    args = [*prefix, "agent", "mcp", "--root", str(root), "--profile", profile]
    if namespace is not None:
        args += ["--namespace", namespace]
    return {"type": "stdio", "command": command, "args": args, "env": {}}


def install(
    place: Layout, *, root: Path, profile: str, namespace: str | None, mcp: bool = True
) -> Report:
    """Write (or bring up to date) this memory's entries for ``place``; idempotent."""
    report = Report()
    record = _read_record(place) or {"version": RECORD_VERSION, "scope": place.scope}
    commands = hook_commands(root, profile, namespace)
    settings = _JsonFile(place.settings)
    _install_hooks(settings.data, commands, record, report)
    if mcp and place.scope == "project":
        _enable_server(settings.data, record, report)
    settings.save(record, report)
    _install_command_files(place, record, report)
    if mcp:
        _install_server(place, server_entry(root, profile, namespace), record, report)
    record.update(root=str(root), profile=profile, namespace=namespace)
    _make_dir(place.claude_dir, record)
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    if not place.record.exists() or place.record.read_text(encoding="utf-8") != text:
        write_atomically(place.record, text.encode("utf-8"))
    return report


def uninstall(place: Layout) -> Report:
    """Remove exactly what the record says install added."""
    record = _read_record(place)
    if record is None:
        raise InvalidInputError(
            f"nothing of {SERVER_NAME} is recorded as installed in {place.claude_dir} "
            f"(no {RECORD_NAME}); nothing was changed"
        )
    report = Report()
    settings = _JsonFile(place.settings)
    for event, command in dict(record.get("hooks", {})).items():
        _remove_hook(settings.data, event, command, record)
    _disable_server(settings.data, record)
    settings.save(record, report, removing=True)
    for name, digest in dict(record.get("command_files", {})).items():
        _remove_command_file(place.commands / name, digest, report)
    _remove_server(place, record, report)
    place.record.unlink(missing_ok=True)
    for directory in (place.commands, place.claude_dir):
        if str(directory) in record.get("created_dirs", []):
            _remove_if_empty(directory)
    report.changed.append(f"removed {place.record}")
    return report


# -- settings.json ---------------------------------------------------------------------------


def _install_hooks(
    settings: dict[str, Any], commands: Mapping[str, str], record: dict[str, Any], report: Report
) -> None:
    hooks = _mapping(settings, "hooks", record, "settings.hooks")
    previous = dict(record.get("hooks", {}))
    for event, command in commands.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInputError(f"settings.hooks.{event} is not a list; nothing was changed")
        if event not in previous and not groups:
            record.setdefault("created_keys", []).append(f"hooks.{event}")
        if _has_command(groups, command):
            continue
        old = previous.get(event)
        if old is not None:
            _remove_hook(settings, event, old, record, keep_key=True)
        _, matcher = HOOK_EVENTS[event]
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]
        groups.append(group)
        report.changed.append(f"hook {event}")
    record["hooks"] = dict(commands)


def _has_command(groups: list[Any], command: str) -> bool:
    return any(
        isinstance(group, dict) and isinstance(hook, dict) and hook.get("command") == command
        for group in groups
        for hook in (group.get("hooks") or [] if isinstance(group, dict) else [])
    )


def _remove_hook(
    settings: dict[str, Any],
    event: str,
    command: str,
    record: Mapping[str, Any],
    *,
    keep_key: bool = False,
) -> None:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(event), list):
        return
    groups = hooks[event]
    kept = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            kept.append(group)
            continue
        left = [h for h in inner if not (isinstance(h, dict) and h.get("command") == command)]
        if len(left) == len(inner) or left:
            kept.append({**group, "hooks": left})
    groups[:] = kept
    created = record.get("created_keys", [])
    if not kept and not keep_key and f"hooks.{event}" in created:
        del hooks[event]
    if not hooks and not keep_key and "settings.hooks" in created:
        del settings["hooks"]


def _enable_server(settings: dict[str, Any], record: dict[str, Any], report: Report) -> None:
    disabled = settings.get("disabledMcpjsonServers")
    if isinstance(disabled, list) and SERVER_NAME in disabled:
        report.kept.append(f"{SERVER_NAME} stays in disabledMcpjsonServers, as you set it")
        return
    enabled = settings.get("enabledMcpjsonServers")
    if enabled is None:
        enabled = settings["enabledMcpjsonServers"] = []
        record.setdefault("created_keys", []).append("settings.enabledMcpjsonServers")
    if not isinstance(enabled, list):
        raise InvalidInputError("settings.enabledMcpjsonServers is not a list; nothing was changed")
    if SERVER_NAME not in enabled:
        enabled.append(SERVER_NAME)
        record["enabled_server"] = True
        report.changed.append(f"enabledMcpjsonServers += {SERVER_NAME}")


def _disable_server(settings: dict[str, Any], record: Mapping[str, Any]) -> None:
    enabled = settings.get("enabledMcpjsonServers")
    if not record.get("enabled_server") or not isinstance(enabled, list):
        return
    if SERVER_NAME in enabled:
        enabled.remove(SERVER_NAME)
    if not enabled and "settings.enabledMcpjsonServers" in record.get("created_keys", []):
        del settings["enabledMcpjsonServers"]


def _mapping(data: dict[str, Any], key: str, record: dict[str, Any], label: str) -> dict[str, Any]:
    if key not in data:
        data[key] = {}
        record.setdefault("created_keys", []).append(label)
    value = data[key]
    if not isinstance(value, dict):
        raise InvalidInputError(f"{label} is not a JSON object; nothing was changed")
    return value


class _JsonFile:
    """A JSON object file read whole, written back (atomically, in its own indentation) only
    when its content changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.existed = path.exists()
        text = path.read_text(encoding="utf-8") if self.existed else ""
        self.indent = _indentation(text)
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise InvalidInputError(
                f"{path} is not valid JSON ({exc}); nothing was changed"
            ) from None
        if not isinstance(data, dict):
            raise InvalidInputError(f"{path} does not hold a JSON object; nothing was changed")
        self.data: dict[str, Any] = data
        self.original = json.dumps(data, sort_keys=True)

    def save(self, record: dict[str, Any], report: Report, *, removing: bool = False) -> None:
        if json.dumps(self.data, sort_keys=True) == self.original:
            return
        created = record.setdefault("created_files", [])
        if removing and not self.data and str(self.path) in created:
            self.path.unlink(missing_ok=True)
            report.changed.append(f"removed {self.path}")
            return
        if not self.existed:
            created.append(str(self.path))
            _make_dir(self.path.parent, record)
        text = json.dumps(self.data, indent=self.indent, ensure_ascii=False) + "\n"
        write_atomically(self.path, text.encode("utf-8"))
        report.changed.append(f"wrote {self.path}")


def _indentation(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            space = line[: len(line) - len(stripped)]
            return "\t" if space.startswith("\t") else len(space)
    return 2


def _make_dir(directory: Path, record: dict[str, Any]) -> None:
    missing = [d for d in (directory, *directory.parents) if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    record.setdefault("created_dirs", []).extend(str(d) for d in missing)


def _remove_if_empty(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (the user's files), or gone
        directory.rmdir()


# -- command files ---------------------------------------------------------------------------


def _install_command_files(place: Layout, record: dict[str, Any], report: Report) -> None:
    ours: dict[str, str] = dict(record.get("command_files", {}))
    for name, text in command_files().items():
        path = place.commands / name
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        if path.exists():
            current = hashlib.sha256(path.read_bytes()).hexdigest()
            if current == digest:
                ours.setdefault(name, digest)
                continue
            if ours.get(name) != current:
                report.kept.append(f"{path}: a command file of yours has this name; left alone")
                continue
        _make_dir(place.commands, record)
        write_atomically(path, data)
        path.chmod(0o644)
        ours[name] = digest
        report.changed.append(f"wrote {path}")
    record["command_files"] = ours


def _remove_command_file(path: Path, digest: str, report: Report) -> None:
    try:
        current = hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return
    if current != digest:
        report.kept.append(f"{path}: edited since it was installed; left in place")
        return
    path.unlink()
    report.changed.append(f"removed {path}")


# -- the MCP server entry --------------------------------------------------------------------


def _install_server(
    place: Layout, entry: dict[str, Any], record: dict[str, Any], report: Report
) -> None:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        report.notes.append(
            "no MCP server entry: the mcp package is missing (pip install "
            "'tiered-disclosure[mcp]', then install again)"
        )
        return
    mcp_file = _JsonFile(place.mcp_file)
    servers = _mapping(mcp_file.data, "mcpServers", record, "mcp.mcpServers")
    current = servers.get(SERVER_NAME)
    if current is not None and current != record.get("server") and current != entry:
        report.kept.append(f"{place.mcp_file}: a server named {SERVER_NAME} is yours; left alone")
        return
    servers[SERVER_NAME] = entry
    record["server"] = entry
    mcp_file.save(record, report)


def _remove_server(place: Layout, record: Mapping[str, Any], report: Report) -> None:
    entry = record.get("server")
    if entry is None or not place.mcp_file.exists():
        return
    mcp_file = _JsonFile(place.mcp_file)
    servers = mcp_file.data.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return
    if servers[SERVER_NAME] != entry:
        report.kept.append(f"{place.mcp_file}: the {SERVER_NAME} entry was edited; left in place")
        return
    del servers[SERVER_NAME]
    if not servers and "mcp.mcpServers" in record.get("created_keys", []):
        del mcp_file.data["mcpServers"]
    mcp_file.save(dict(record), report, removing=True)


def _read_record(place: Layout) -> dict[str, Any] | None:
    try:
        data = json.loads(place.record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidInputError(
            f"{place.record} cannot be read ({exc}); nothing was changed"
        ) from None
    return data if isinstance(data, dict) else None

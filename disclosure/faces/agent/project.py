"""Which project an agent works in, which namespace holds its memory, and where the hooks keep
their own small files. Standard library only: every hook imports it.

One namespace per project by default: the ``user`` part is the project directory's name and a
hash of its absolute path (``billing-api-3f1c0a9b2e``), so two checkouts named alike stay apart
and the same directory always finds its memory again. ``--namespace NAME`` (or
``tenant=acme,user=NAME``) chooses another.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "AGENT_DIR",
    "PROJECT_VARIABLE",
    "agent_home",
    "default_root",
    "namespace_key",
    "parse_namespace",
    "project_dir",
    "project_namespace",
]

AGENT_DIR = "agent"  # ROOT/agent/<agent>/: the hooks' state and spool (never memory content)
PROJECT_VARIABLE = "CLAUDE_PROJECT_DIR"  # set by Claude Code for its hooks and MCP servers
# disclosure.storage.namespaces' HOME_VARIABLE and NAMESPACE_PARTS, repeated (a test keeps them
# equal): that module's imports cost a hook a fifth of its start-up
HOME_VARIABLE = "TIERED_DISCLOSURE_HOME"
NAMESPACE_PARTS = ("tenant", "user", "conversation")
_NAME_CHARS = 40
_HASH_CHARS = 10


def project_dir(cwd: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The project the agent works in: ``$CLAUDE_PROJECT_DIR``, else ``cwd`` (the hook input's),
    else this process's working directory; absolute, symbolic links left as they are (the agent
    names the directory the same way in its transcripts)."""
    env = os.environ if environ is None else environ
    chosen = env.get(PROJECT_VARIABLE) or cwd or Path.cwd()
    return Path(os.path.normpath(Path(chosen).expanduser().absolute()))


def project_namespace(directory: Path | str) -> dict[str, str]:
    """The default namespace of a project directory: ``{"user": "<name>-<hash>"}``."""
    path = os.path.normpath(Path(directory).absolute())
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(path).name).strip("-.")[:_NAME_CHARS]
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]
    return {"user": f"{name or 'project'}-{digest}"}


def parse_namespace(text: str) -> dict[str, str]:
    """``NAME`` (the ``user`` part) or ``part=value,part=value``; a NamespaceError names what is
    wrong (an unknown part, an unsafe value)."""
    from disclosure.storage.namespaces import check_part
    from tiers.errors import NamespaceError

    text = text.strip()
    if "=" not in text:
        return {"user": check_part("user", text)}
    parts: dict[str, str] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in NAMESPACE_PARTS:
            raise NamespaceError(
                f"namespace part {name!r} is unknown; use {', '.join(NAMESPACE_PARTS)} "
                "(tenant=acme,user=NAME) or a bare NAME for the user part"
            )
        if name in parts:
            raise NamespaceError(f"namespace part {name!r} is given twice")
        parts[name] = check_part(name, value.strip())
    return parts


def namespace_key(parts: Mapping[str, str]) -> str:
    """A short file name for a namespace's hook files (the same parts, the same name)."""
    text = json.dumps(sorted(parts.items()), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def default_root(environ: Mapping[str, str] | None = None) -> Path:
    """:func:`disclosure.storage.namespaces.default_home`, for a hook run without ``--root``."""
    env = os.environ if environ is None else environ
    explicit = env.get(HOME_VARIABLE)
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "tiered-disclosure"


def agent_home(root: Path, agent: str = "claude-code") -> Path:
    """``ROOT/agent/<agent>``: where the hooks keep their state and spool."""
    return root / AGENT_DIR / agent

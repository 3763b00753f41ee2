"""The slash commands (``/mem-search``, ``/mem-show``, ``/mem-forget``, ``/mem-stats``).

Their command files tell the agent to show what the prompt hook put in its context: the hook
sees the prompt as the user typed it (``/mem-search billing export``), answers it from the
service and adds the answer to the context. The arguments never pass through a shell (a
command file's ``!`` line would substitute them unquoted). Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from disclosure.faces.agent.context import block
from disclosure.faces.agent.wire import ServiceAnswerError, ThinClient, ref_path

__all__ = ["COMMANDS", "PREFIX", "parse_command", "run_command"]

PREFIX = "mem-"
SEARCH_LIMIT = 10
MAX_REFS = 20


def parse_command(prompt: str) -> tuple[str, str] | None:
    """``(name, arguments)`` when ``prompt`` invokes one of these commands, else None."""
    text = prompt.strip()
    if not text.startswith(f"/{PREFIX}"):
        return None
    word, _, arguments = text[1:].partition(" ")
    name = word[len(PREFIX) :]
    return (name, arguments.strip()) if name in COMMANDS else None


def run_command(client: ThinClient, name: str, arguments: str) -> str:
    """The command's answer, in a memory-reference block headed by the command line."""
    header = f"## /{PREFIX}{name} {arguments}".rstrip()
    body = COMMANDS[name](client, arguments)
    return block(f"{header}\n{body}")


def _search(client: ThinClient, arguments: str) -> str:
    if not arguments:
        return "Usage: /mem-search WHAT TO LOOK FOR"
    answer = client.post("/v1/search", {"query": arguments[:4000], "limit": SEARCH_LIMIT})
    results = answer.get("results") or []
    if not results:
        return "No memory matches. " + " ".join(answer.get("warnings") or [])
    lines = [
        f"- [{r.get('citation')}] {r.get('summary') or ''} (score {float(r.get('score', 0)):.2f})"
        for r in results
    ]
    return "\n".join([*lines, "Show one in full: /mem-show mem:xxxxxx"])


def _show(client: ThinClient, arguments: str) -> str:
    refs = _refs(arguments)
    if not refs:
        return "Usage: /mem-show mem:xxxxxx [mem:yyyyyy ...]"
    shown = []
    for ref in refs:
        try:
            answer = client.get(ref_path("/v1/memories", ref))
        except ServiceAnswerError as exc:
            if exc.status != 404:
                raise
            shown.append(f"{ref}: no memory has this id or citation")
            continue
        shown.append(str(answer.get("text") or ""))
    return "\n\n".join(shown)


def _forget(client: ThinClient, arguments: str) -> str:
    refs = _refs(arguments)
    if not refs:
        return "Usage: /mem-forget mem:xxxxxx [mem:yyyyyy ...] (erases them everywhere)"
    answer = client.post("/v1/forget", {"ids": refs})
    erased = {*answer.get("ids", []), *answer.get("citations", [])}
    gone = [r for r in refs if r in erased or r.rpartition(":")[2] in erased]
    missing = [r for r in refs if r not in gone]
    said = f"Forgot {answer.get('count', 0)} memories: {', '.join(gone) or 'none'}."
    return said + (f" Nothing matched {', '.join(missing)}." if missing else "")


def _stats(client: ThinClient, arguments: str) -> str:
    answer = client.get("/v1/stats")
    stats: dict[str, Any] = answer.get("stats") or {}
    store = stats.get("store") or {}
    parts = ", ".join(f"{k}={v}" for k, v in sorted(answer.get("namespace", {}).items()))
    lines = [f"Namespace: {parts or '(shared)'}"]
    for key in ("hot", "warm", "cold", "pending"):
        if key in store:
            lines.append(f"- {key}: {store[key]}")
    lines += [f"- note: {w}" for w in answer.get("warnings") or []]
    return "\n".join(lines)


def _refs(arguments: str) -> list[str]:
    refs = [r.strip(" ,[]") for r in arguments.split()]
    return list(dict.fromkeys(r for r in refs if r))[:MAX_REFS]


COMMANDS: dict[str, Callable[[ThinClient, str], str]] = {
    "search": _search,
    "show": _show,
    "forget": _forget,
    "stats": _stats,
}

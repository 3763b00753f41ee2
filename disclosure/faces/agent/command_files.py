"""The slash commands' files (``.claude/commands/mem-*.md``), as Claude Code reads them: a
prompt with a front matter (``description``, ``argument-hint``).

The prompt hook answers each command before the model sees it (:mod:`.commands`): the file
tells the model to show that answer, and what to do when it is missing (hooks switched off):
use the MCP server's tool instead. Arguments reach no shell: a ``!`` line would splice them
into a command unquoted.
"""

from __future__ import annotations

from disclosure.faces.agent.commands import PREFIX

__all__ = ["SERVER_NAME", "command_files"]

SERVER_NAME = "tiered-disclosure"  # the MCP server's name in the agent's settings

_SHOW = (
    "The {server} prompt hook has answered this command: its answer is the <memory-reference> "
    'block headed "## /{prefix}{name} $ARGUMENTS" in your context. Show the user that answer as '
    "it is, then stop: run no tools and add nothing."
)
_FALLBACK = "If no such block is in your context (the hooks are off), {fallback}"
_COMMANDS = {
    "search": (
        "Search this project's memory and list the matches (citation, summary, score)",
        "WHAT TO LOOK FOR",
        'call the `search` tool of the `{server}` MCP server with the query "$ARGUMENTS" and '
        "show its index.",
    ),
    "show": (
        "Show memories in full, by citation (mem:xxxxxx) or id",
        "mem:xxxxxx [mem:yyyyyy ...]",
        "call the `get_details` tool of the `{server}` MCP server with these references: "
        "$ARGUMENTS.",
    ),
    "forget": (
        "Erase memories everywhere, by citation (mem:xxxxxx) or id",
        "mem:xxxxxx [mem:yyyyyy ...]",
        "call the `forget` tool of the `{server}` MCP server with these references: "
        "$ARGUMENTS, without confirm first; show what it would erase and call it again with "
        "confirm=true only after the user agrees.",
    ),
    "stats": (
        "How much this project's memory holds, per tier",
        "",
        "say that the {server} hooks are not running, and that `disclosure stats` on the "
        "command line shows the same.",
    ),
}


def command_files() -> dict[str, str]:
    """File name -> content of every slash command's file."""
    files = {}
    for name, (description, hint, fallback) in _COMMANDS.items():
        front = [f"description: {description} ({SERVER_NAME})"]
        if hint:
            front.append(f"argument-hint: {hint}")
        show = _SHOW.format(server=SERVER_NAME, prefix=PREFIX, name=name)
        if not hint:
            show = show.replace(" $ARGUMENTS", "")
        rest = _FALLBACK.format(fallback=fallback.format(server=SERVER_NAME))
        files[f"{PREFIX}{name}.md"] = "---\n" + "\n".join(front) + f"\n---\n{show}\n\n{rest}\n"
    return files

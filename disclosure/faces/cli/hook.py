"""``disclosure hook EVENT``: what a coding agent's hooks run (:mod:`disclosure.faces.agent.hooks`).

The console script hands ``disclosure hook ...`` to the hooks before it loads any command
(:func:`disclosure.faces.cli.main`); this parser is for ``--help``, and for a hook given after the
global options (``disclosure -v hook prompt``).
"""

from __future__ import annotations

import argparse

EVENTS = ("session-start", "prompt", "tool-use", "stop", "session-end")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "hook",
        help="what Claude Code's hooks run (its JSON on stdin); always exits 0",
        description="Run one hook of a coding agent with the agent's JSON on standard input: "
        "session-start (a short context: the last session), prompt (the memory for the prompt, "
        "and the /mem-* commands), tool-use (an observation of the tool's use), stop (the turn "
        "stored, feedback on its citations), session-end (consolidation). It always exits 0 "
        "within a second, with at most one line on stderr; `disclosure agent install "
        "claude-code` writes the hooks.",
    )
    parser.add_argument("event", choices=EVENTS)
    parser.add_argument("--root", "--data-dir", help="the data root (default: the usual one)")
    parser.add_argument(
        "--namespace", help="NAME (the user part) or tenant=...,user=... (default: the project's)"
    )
    parser.add_argument(
        "--profile", help="the profile a service started by the hook runs (coding-agent)"
    )
    parser.set_defaults(handler=_hook)


def _hook(args: argparse.Namespace) -> int:
    from disclosure.faces.agent.hooks import main

    argv = [args.event]
    for name in ("root", "namespace", "profile"):
        value = getattr(args, name)
        if value is not None:
            argv += [f"--{name}", value]
    return main(argv)

"""The ``disclosure`` command line.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``handler``
to a function taking the parsed arguments and returning an exit code. User mistakes print one
line on stderr and exit non-zero; tracebacks are for bugs only (``--traceback`` shows them).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from disclosure._version import __version__

if TYPE_CHECKING:
    import argparse

__all__ = ["COMMANDS", "EXIT_ERROR", "EXIT_USAGE", "UsageError", "build_parser", "main"]

# The command modules, in --help order; loaded by build_parser (COMMANDS loads them too), so
# that `disclosure hook ...`, which runs on every prompt of a coding agent, loads none of them.
COMMAND_NAMES = (
    "demo",
    "ingest",
    "query",
    "stats",
    "forget",
    "transfer",
    "consolidate",
    "serve",
    "service",
    "profiles",
    "tokens",
    "evaluate",
    "doctor",
    "agent",
    "hook",
)
EXIT_ERROR = 1
EXIT_USAGE = 2


def _commands() -> tuple[ModuleType, ...]:
    return tuple(import_module(f"disclosure.faces.cli.{name}") for name in COMMAND_NAMES)


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":
        return _commands()
    if name == "UsageError":
        from disclosure.faces.cli.common import UsageError

        return UsageError
    raise AttributeError(f"module 'disclosure.faces.cli' has no attribute {name!r}")


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="disclosure",
        description="Tiered memory disclosure for LLMs: how much past memory each query gets.",
    )
    parser.add_argument(
        "--version", action="version", version=f"disclosure {__version__} (tiered-disclosure)"
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _commands():
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["hook"] and len(given) > 1 and given[1] not in ("-h", "--help"):
        from disclosure.faces.agent.hooks import main as run_hook  # nothing heavy before this

        return run_hook(given[1:])
    return _main(given)


def _main(argv: Sequence[str]) -> int:
    import logging

    from disclosure.faces.cli.common import UsageError
    from tiers.errors import DisclosureError, is_disk_full

    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)],
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args))
    except UsageError as exc:
        parser.exit(EXIT_USAGE, f"disclosure: error: {exc}\n")
    except (DisclosureError, OSError, UnicodeDecodeError) as exc:
        if args.traceback:
            raise
        print(f"disclosure: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("disclosure: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `disclosure ... | head`
        return 0
    except RecursionError:
        if args.traceback:
            raise
        print("disclosure: error: the input nests too deeply to be read", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        if args.traceback:
            raise
        print("disclosure: error: out of memory (is the input too large?)", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line, the traceback only when asked for
        if args.traceback:
            raise
        if is_disk_full(exc):
            print(
                f"disclosure: error: the disk is full ({exc}); free space and retry",
                file=sys.stderr,
            )
            return EXIT_ERROR
        print(
            f"disclosure: internal error: {type(exc).__name__}: {exc} "
            "(run again with --traceback for details, and please report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR

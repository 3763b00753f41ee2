"""``disclosure tokens count [FILE]``: exact token counts of a file or stdin."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("tokens", help="count tokens")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    count = actions.add_parser("count", help="count the tokens of FILE (stdin by default)")
    count.add_argument("file", nargs="?", type=Path, help="a UTF-8 text file; '-' or none: stdin")
    source = count.add_mutually_exclusive_group()
    source.add_argument("--encoding", help="a tiktoken encoding (default: the profile's)")
    source.add_argument("--profile", default="default", help="take the encoding from this profile")
    count.set_defaults(handler=_count)


def _count(args: argparse.Namespace) -> int:
    from disclosure.core.profiles import load_profile
    from formatters.tokens import get_token_counter

    encoding = args.encoding or load_profile(args.profile).tokens.encoding
    counter = get_token_counter(encoding)
    if args.file is None or str(args.file) == "-":
        text = sys.stdin.read()
    else:
        text = args.file.read_text(encoding="utf-8")
    kind = "exact" if counter.exact else "approximate"
    print(f"{counter(text)} tokens ({encoding}, {kind})")
    return 0

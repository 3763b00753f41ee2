"""``disclosure profiles list | show NAME | validate FILE...``"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tiers.errors import ProfileError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("profiles", help="list, show and validate profiles")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="the built-in profiles")
    listing.set_defaults(handler=_list)

    show = actions.add_parser("show", help="a profile, resolved, as YAML")
    show.add_argument("name", help="a built-in name or a YAML path")
    show.set_defaults(handler=_show)

    validate = actions.add_parser("validate", help="check profile files; non-zero if any fails")
    validate.add_argument("files", nargs="+", type=Path, help="YAML files or directories")
    validate.set_defaults(handler=_validate)


def _list(args: argparse.Namespace) -> int:
    from disclosure.core.profiles import builtin_profiles, load_profile

    for name in builtin_profiles():
        print(f"{name:<16} {load_profile(name).description}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from disclosure.core.profiles import load_profile

    sys.stdout.write(load_profile(args.name).to_yaml())
    return 0


def _validate(args: argparse.Namespace) -> int:
    from disclosure.core.profiles import iter_profile_files, load_profile

    failures = 0
    for path in iter_profile_files(args.files):
        try:
            profile = load_profile(path)
        except ProfileError as exc:
            failures += 1
            print(f"invalid: {exc}", file=sys.stderr)
        else:
            print(f"ok: {path} (profile {profile.name!r})")
    return 1 if failures else 0

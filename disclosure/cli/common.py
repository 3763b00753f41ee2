"""What the commands share: the usage error; the data directory, profile and namespace options."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from disclosure.namespaces import HOME_VARIABLE, Namespace, default_home
from tiers.errors import InvalidInputError

if TYPE_CHECKING:
    from disclosure.controller import DisclosureController
    from disclosure.pool import ControllerPool


class UsageError(Exception):
    """A command-line mistake that argparse could not catch; exits 2."""


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--profile``, ``--data-dir`` and the namespace parts."""
    group = parser.add_argument_group("store")
    group.add_argument("--profile", default="default", help="a built-in name or a YAML path")
    group.add_argument(
        "--data-dir",
        type=Path,
        help=f"the root data directory (default: ${HOME_VARIABLE}, else "
        f"~/.local/share/tiered-disclosure); one store per namespace under it",
    )
    for part in ("tenant", "user", "conversation"):
        group.add_argument(f"--{part}", help=f"the namespace's {part} (if in the profile's scope)")


def root_of(args: argparse.Namespace) -> Path:
    return Path(args.data_dir).expanduser() if args.data_dir else default_home()


def pool_of(args: argparse.Namespace, *, max_open: int | None = None) -> ControllerPool:
    from disclosure.pool import ControllerPool

    return ControllerPool(args.profile, root=root_of(args), max_open=max_open)


def namespace_of(pool: ControllerPool, args: argparse.Namespace) -> Namespace:
    return pool.namespace(tenant=args.tenant, user=args.user, conversation=args.conversation)


@contextmanager
def open_store(
    args: argparse.Namespace, *, create: bool = True
) -> Iterator[tuple[DisclosureController, Namespace]]:
    """The controller of the namespace the options name (closed afterwards). ``create``
    False (reads): a namespace nothing was written to is an error, and nothing is created."""
    with pool_of(args, max_open=1) as pool:
        namespace = namespace_of(pool, args)
        if not create and not pool.exists(namespace):
            raise InvalidInputError(
                f"nothing is stored for {namespace} under {pool.root} (check --data-dir and the "
                "namespace options; a namespace is created by its first ingest)"
            )
        with pool.writing(namespace) as controller:
            yield controller, namespace


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` without control characters (ANSI escapes, bidi overrides) that a terminal
    would obey: stored memories are data, they must not move the cursor or recolour the
    screen. Newlines and tabs stay."""
    return _CONTROL.sub("", text)

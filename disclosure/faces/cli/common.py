"""What the commands share: the usage error; the data directory, profile and namespace options;
the memory of a namespace, through the root's running service when there is one."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from disclosure.core.empty import nothing_stored
from disclosure.storage.namespaces import HOME_VARIABLE, NAMESPACE_PARTS, Namespace, default_home
from tiers.errors import InvalidInputError, MemoryNotFoundError

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.core.pipeline.feedback import FeedbackReport
    from disclosure.core.result import DisclosureResult
    from disclosure.service.client import MemoryClient
    from disclosure.service.pool import ControllerPool
    from tiers.memory import Memory
    from tiers.reports import ForgetReport, IngestReport


class UsageError(Exception):
    """A command-line mistake that argparse could not catch; exits 2."""


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--profile``, ``--data-dir`` and the namespace parts."""
    group = parser.add_argument_group("store")
    group.add_argument("--profile", default="default", help="a built-in name or a YAML path")
    group.add_argument(
        "--data-dir",
        "--root",
        type=Path,
        help=f"the root data directory (default: ${HOME_VARIABLE}, else "
        f"~/.local/share/tiered-disclosure); one store per namespace under it",
    )
    for part in ("tenant", "user", "conversation"):
        group.add_argument(f"--{part}", help=f"the namespace's {part} (if in the profile's scope)")
    group.add_argument(
        "--chroma-url",
        metavar="URL",
        help="keep vectors on this Chroma server, http://HOST:PORT (default: "
        "$TIERED_DISCLOSURE_CHROMA_URL, else the profile's tiers.warm)",
    )


def root_of(args: argparse.Namespace) -> Path:
    return Path(args.data_dir).expanduser() if args.data_dir else default_home()


def pool_of(args: argparse.Namespace, *, max_open: int | None = None) -> ControllerPool:
    from disclosure.service.pool import ControllerPool

    return ControllerPool(
        args.profile,
        root=root_of(args),
        max_open=max_open,
        chroma_url=getattr(args, "chroma_url", None),
    )


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
        new = create and not pool.exists(namespace)
        with pool.writing(namespace) as controller:
            yield controller, namespace
        if new:  # said once the write succeeded (a failed write creates nothing)
            created = f"new namespace {describe(namespace)} in {pool.root}"
            print(f"disclosure: {created}", file=sys.stderr)


def describe(namespace: Namespace) -> str:
    """``tenant=default, user=dana``: how the CLI names a namespace it creates."""
    return ", ".join(f"{name}={value}" for name, value in namespace.parts) or "(shared)"


class MemoryApi(Protocol):
    """What a store command needs of a namespace's memory: a controller or a service client."""

    def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport: ...

    def disclose(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] = (),
        now: Any = None,
        level: Any = None,
        budget: int | None = None,
        context_window: int | None = None,
        prompt_tokens: int = 0,
    ) -> DisclosureResult: ...

    def show(self, id_or_citation: str) -> str: ...

    def feedback(self, result: DisclosureResult, reply: str) -> FeedbackReport: ...

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport: ...

    def stats(self) -> dict[str, Any]: ...


@contextmanager
def open_memory(
    args: argparse.Namespace, *, create: bool = True
) -> Iterator[tuple[MemoryApi, Namespace, str | None]]:
    """The memory of the namespace the options name, the namespace, and the service's address:
    the running service of the root when there is one (nothing heavy is loaded then), else the
    store opened here (address None; closed afterwards; ``create`` as for :func:`open_store`)."""
    from disclosure.service import find_service, service_disabled

    root = root_of(args)
    info = None if service_disabled() else find_service(root)
    if info is None:
        if not create:
            with _absent(args) as found:
                if found is not None:  # nothing stored: empty answers, nothing created
                    yield found, found.namespace, None
                    return
        with open_store(args, create=create) as (controller, namespace):
            yield controller, namespace, None
        return
    with _sync_http_only():
        import httpcore  # noqa: F401 - its sync modules, loaded while the async ones look absent

        from disclosure.service.client import MemoryClient

    if args.profile not in ("default", info.profile):
        print(
            f"disclosure: note: the service for {root} runs profile {info.profile!r}; "
            f"--profile {args.profile} applies only to stores opened here",
            file=sys.stderr,
        )
    given = {part: getattr(args, part) for part in NAMESPACE_PARTS}
    namespace = Namespace(tuple((k, v) for k, v in given.items() if v is not None))
    with MemoryClient(info.url, api_key=info.token, namespace=given) as client:
        new = create and not _served_namespace_exists(client)
        yield client, namespace, info.url
        if new:  # said once the write succeeded, as for a store opened here
            print(
                f"disclosure: new namespace {describe(namespace)} (service at {info.url})",
                file=sys.stderr,
            )


@contextmanager
def _sync_http_only() -> Iterator[None]:
    """While the synchronous HTTP client loads, trio, anyio and click count as absent.

    httpcore imports trio and anyio only to see whether they are there (for async use), and
    httpx imports click, rich and pygments for its own command line: together half of a
    served command's start-up (``python -X importtime``). The store commands use neither;
    once loaded, the modules blocked here import as usual again. Only the CLI's short-lived
    commands do this: a process that uses httpx asynchronously must not.
    """
    blocked = [name for name in ("trio", "anyio", "click") if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # "import trio" raises ImportError
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _served_namespace_exists(client: MemoryClient) -> bool:
    """Whether the service holds the client's namespace (a read of one it does not hold
    answers empty with a warning, and creates nothing)."""
    return not client.stats().get("warnings")


@contextmanager
def _absent(args: argparse.Namespace) -> Iterator[EmptyMemory | None]:
    """An :class:`EmptyMemory` when nothing is stored for the namespace the options name,
    else None (the store is then opened as usual)."""
    with pool_of(args, max_open=1) as pool:
        namespace = namespace_of(pool, args)
        yield None if pool.exists(namespace) else EmptyMemory(pool, namespace)


class EmptyMemory:
    """The memory of a namespace nothing is stored in, for the read commands: empty answers
    carrying a warning (``query`` and ``stats``), no memory to ``show`` or ``forget``. It
    creates nothing; only a write does."""

    def __init__(self, pool: ControllerPool, namespace: Namespace) -> None:
        self.namespace = namespace
        self.warning = nothing_stored(namespace, root=pool.root, first="ingest")
        self._empty = pool.empty

    def ingest(self, memories: Iterable[Memory | Mapping[str, Any]]) -> IngestReport:
        raise InvalidInputError("an ingest opens the store: it is not a read")

    def disclose(self, query: str, **options: Any) -> DisclosureResult:
        return self._empty.disclose(query, warning=self.warning, **options)

    def show(self, id_or_citation: str) -> str:
        raise MemoryNotFoundError(f"no memory has the id or citation {id_or_citation!r}: "
                                  f"{self.warning}")  # fmt: skip

    def feedback(self, result: DisclosureResult, reply: str) -> FeedbackReport:
        raise InvalidInputError(f"nothing to give feedback on: {self.warning}")

    def forget(
        self, *, ids: Sequence[str] | None = None, session_id: str | None = None
    ) -> ForgetReport:
        from tiers.reports import ForgetReport

        return ForgetReport()

    def stats(self) -> dict[str, Any]:
        return self._empty.stats(self.warning)


def print_warnings(warnings: Iterable[str]) -> None:
    """Each warning of an answer on stderr (the answer itself stays on stdout)."""
    for warning in warnings:
        print(f"disclosure: warning: {terminal_safe(warning)}", file=sys.stderr)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` without control characters (ANSI escapes, bidi overrides) that a terminal
    would obey: stored memories are data, they must not move the cursor or recolour the
    screen. Newlines and tabs stay."""
    return _CONTROL.sub("", text)

"""A bounded pool of open controllers, one per namespace, under one root directory.

Opening a controller costs about a second and holds its data directory's lock, so a service
keeps the recently used ones open: at most ``isolation.max_open`` idle ones, the least recently
used closed first. A controller in use (leased) is never closed under its user; when every
open one is leased the pool runs over its bound until leases return. Thread-safe.

When a local service owns the root (``disclosure service start``), its process holds the stores:
:meth:`ControllerPool.memory` then hands out a client of that service, with the controller's
method names, instead of a controller, so the pool's user shares the service's memory.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from disclosure.core.empty import EmptyAnswers
from disclosure.core.profiles import Profile, load_profile
from disclosure.service.vector_server import chroma_url_of, drop_server_vectors, with_chroma_url
from disclosure.storage.namespaces import (
    MARKER_FILE,
    Namespace,
    claim_dir,
    make_namespace,
    namespace_dir,
)
from tiers.backends import written_in_database
from tiers.base import Embedder
from tiers.errors import InvalidInputError, StorageError

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.service.client import MemoryClient

log = logging.getLogger(__name__)

__all__ = ["ControllerPool"]


@dataclass
class _Entry:
    ready: threading.Event = field(default_factory=threading.Event)
    controller: DisclosureController | None = None
    error: BaseException | None = None
    leases: int = 0


class ControllerPool:
    """Controllers per namespace under ``root``, opened on demand, LRU-bounded, thread-safe."""

    def __init__(
        self,
        profile: str | Path | Profile,
        *,
        root: Path | str,
        embedder: Embedder | str | None = None,
        max_open: int | None = None,
        chroma_url: str | None = None,
    ) -> None:
        """``chroma_url``: keep vectors on that Chroma server (default
        ``$TIERED_DISCLOSURE_CHROMA_URL``, else the profile's ``tiers.warm``)."""
        self.profile = with_chroma_url(load_profile(profile), chroma_url_of(chroma_url))
        self.root = Path(root).expanduser()
        self.max_open = max_open or self.profile.isolation.max_open
        self._embedder = embedder
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._closing: dict[str, threading.Event] = {}
        self._closed = False
        self._empty: EmptyAnswers | None = None

    def namespace(
        self, parts: Mapping[str, str | None] | None = None, **named: str | None
    ) -> Namespace:
        """The namespace these parts name under the profile's isolation (validated)."""
        return make_namespace(self.profile.isolation, {**(parts or {}), **named})

    def exists(self, namespace: Namespace) -> bool:
        """Whether anything was ever written to ``namespace`` (its directory is claimed)."""
        with self._lock:
            entry = self._entries.get(namespace.key)
            if entry is not None and entry.controller is not None:
                return True
        directory = namespace_dir(self.root, namespace)
        if (directory / MARKER_FILE).is_file():
            return True
        # with a shared PostgreSQL archive, another replica may have created it
        return written_in_database(self.profile.tiers, directory.name)

    @property
    def empty(self) -> EmptyAnswers:
        """The answers of reads of namespaces that do not exist (built on first use): empty,
        with a warning, creating nothing."""
        with self._lock:
            if self._empty is None:
                self._empty = EmptyAnswers(self.profile)
            return self._empty

    @contextmanager
    def lease(self, namespace: Namespace) -> Iterator[DisclosureController]:
        """The namespace's controller, kept open (and unevictable) for the ``with`` block."""
        controller = self.acquire(namespace)
        try:
            yield controller
        finally:
            self.release(namespace)

    @contextmanager
    def memory(self, namespace: Namespace) -> Iterator[DisclosureController | MemoryClient]:
        """The namespace's memory for the ``with`` block: a client of the local service that
        owns the root when one runs (the stores are its), else the leased controller."""
        from disclosure.service import find_service, service_disabled

        info = None if service_disabled() else find_service(self.root)
        if info is None:
            with self.lease(namespace) as controller:
                yield controller
            return
        from disclosure.service.client import MemoryClient

        with MemoryClient(info.url, api_key=info.token, namespace=namespace.as_dict()) as client:
            yield client

    @contextmanager
    def writing(self, namespace: Namespace) -> Iterator[DisclosureController]:
        """Like :meth:`lease`, for a write that may create the namespace: if it creates it and
        the write fails, the new directory is removed again (a failed write creates nothing)."""
        existed = self.exists(namespace)
        try:
            with self.lease(namespace) as controller:
                yield controller
        except BaseException:
            if not existed:
                self._discard(namespace)
            raise

    def acquire(self, namespace: Namespace) -> DisclosureController:
        """Open (or reuse) ``namespace``'s controller; pair with :meth:`release`."""
        key = namespace.key
        with self._lock:
            if self._closed:
                raise InvalidInputError("this ControllerPool is closed")
            entry = self._entries.get(key)
            opener = entry is None
            if entry is None:
                entry = self._entries[key] = _Entry()
            entry.leases += 1
            self._entries.move_to_end(key)
            closing = self._closing.get(key)
        if opener:
            self._open(key, namespace, entry, closing)
        else:
            entry.ready.wait()
        if entry.controller is None:
            self._drop_lease(key, entry)
            raise entry.error or InvalidInputError(f"could not open namespace {namespace}")
        return entry.controller

    def release(self, namespace: Namespace) -> None:
        """Return a lease taken by :meth:`acquire`; idle controllers beyond the bound close."""
        with self._lock:
            entry = self._entries.get(namespace.key)
            if entry is not None and entry.leases > 0:
                entry.leases -= 1
        self._evict()

    def open_controllers(self) -> list[DisclosureController]:
        """The controllers open now (for gauges read in passing; one may close meanwhile)."""
        with self._lock:
            return [e.controller for e in self._entries.values() if e.controller is not None]

    def open_namespaces(self) -> list[str]:
        """The keys of the namespaces with an open controller, least recently used first."""
        with self._lock:
            return [k for k, e in self._entries.items() if e.controller is not None]

    def close(self) -> None:
        """Close every controller (waiting for none: leases in flight see a closed controller)."""
        with self._lock:
            self._closed = True
            entries = list(self._entries.values())
            self._entries.clear()
            empty, self._empty = self._empty, None
        if empty is not None:
            empty.close()
        for entry in entries:
            entry.ready.wait()
            if entry.controller is not None:
                entry.controller.close()

    def __enter__(self) -> ControllerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------

    def _open(
        self, key: str, namespace: Namespace, entry: _Entry, closing: threading.Event | None
    ) -> None:
        from disclosure.core.controller import DisclosureController

        try:
            if closing is not None:
                closing.wait()  # the previous controller of this namespace still holds its lock
            directory = claim_dir(self.root, namespace)
            entry.controller = DisclosureController(
                self.profile, data_dir=directory, embedder=self._embedder
            )
            log.info("opened namespace %s at %s", namespace, directory)
        except BaseException as exc:
            entry.error = self._explained(exc)
            with self._lock:
                if self._entries.get(key) is entry:
                    del self._entries[key]
        finally:
            entry.ready.set()
        self._evict()

    def _explained(self, exc: BaseException) -> BaseException:
        """A store held by the root's local service says so, and what to use instead."""
        if not isinstance(exc, StorageError):
            return exc
        from disclosure.service import find_service

        info = find_service(self.root)
        if info is None:
            return exc
        return StorageError(
            f"{exc}; the local service (pid {info.pid}, {info.url}) owns {self.root}: use "
            "ControllerPool.memory(namespace) or disclosure.service.client.MemoryClient.for_root()"
        )

    def _discard(self, namespace: Namespace) -> None:
        """Close and delete a namespace this pool just created, if it is unused and empty."""
        with self._lock:
            entry = self._entries.get(namespace.key)
            if entry is not None and (entry.leases > 0 or entry.controller is None):
                return
            if entry is not None:
                del self._entries[namespace.key]
        try:
            if entry is not None and entry.controller is not None:
                if entry.controller.store.count() > 0:
                    with self._lock:  # someone else wrote to it meanwhile: keep it
                        self._entries.setdefault(namespace.key, entry)
                    return
                entry.controller.close()
            drop_server_vectors(self.profile, namespace_dir(self.root, namespace))
            shutil.rmtree(namespace_dir(self.root, namespace), ignore_errors=True)
            log.info("removed namespace %s again: its first write failed", namespace)
        except Exception as exc:  # the write's own error matters more
            log.warning("could not remove the new namespace %s: %s", namespace, exc)

    def _drop_lease(self, key: str, entry: _Entry) -> None:
        with self._lock:
            entry.leases -= 1

    def _evict(self) -> None:
        victims: list[tuple[str, _Entry, threading.Event]] = []
        with self._lock:
            opened = [(k, e) for k, e in self._entries.items() if e.controller is not None]
            excess = len(opened) - self.max_open
            for key, entry in opened:  # least recently used first
                if excess <= 0:
                    break
                if entry.leases == 0:
                    del self._entries[key]
                    done = self._closing[key] = threading.Event()
                    victims.append((key, entry, done))
                    excess -= 1
        for key, entry, done in victims:
            try:
                if entry.controller is not None:
                    entry.controller.close()
            finally:
                with self._lock:
                    if self._closing.get(key) is done:
                        del self._closing[key]
                done.set()

"""A registry of named plug-ins, with third-party entry points loaded lazily.

One class serves every kind: formatters (:data:`formatters.FORMATTERS`), embedder factories
(:mod:`tiers.embedders`), and the evaluation's baselines and readers. Register by decorator or
call; a name registered twice to a different object is an error; a miss lists the available
names. Built-ins may be named as ``module:attribute``, imported on first use. Third parties
register through the registry's entry-point group, loaded the first time a name is missed or
listed; set ``TIERED_DISCLOSURE_DISABLE_PLUGIN_AUTOLOAD=1`` (:data:`AUTOLOAD_ENV`) to skip entry
points everywhere (as the test suite does).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar, overload

from tiers.errors import RegistryError

log = logging.getLogger(__name__)

T = TypeVar("T")
AUTOLOAD_ENV = "TIERED_DISCLOSURE_DISABLE_PLUGIN_AUTOLOAD"


class Registry(Generic[T]):
    """Names to objects of one kind. ``group``: the entry-point group third parties register
    in (None: none); ``builtins``: names to ``module:attribute`` strings, imported on first use."""

    def __init__(
        self, kind: str, *, group: str | None = None, builtins: Mapping[str, str] | None = None
    ) -> None:
        self.kind = kind
        self.group = group
        self._lazy: dict[str, str] = dict(builtins or {})
        self._items: dict[str, T] = {}
        self._entry_points_loaded = False
        self._lock = threading.RLock()

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, obj: T) -> T: ...

    def register(self, name: str, obj: T | None = None) -> T | Callable[[T], T]:
        """Register ``obj`` under ``name``; without ``obj``, return a decorator."""
        if obj is None:
            return lambda target: self.register(name, target)
        if not name or not name.strip():
            raise RegistryError(f"a {self.kind} name must not be empty")
        with self._lock:
            current = self._items.get(name)
            if current is not None and current is not obj:
                raise RegistryError(
                    f"{self.kind} {name!r} is already registered to {current!r}; "
                    f"choose another name or unregister it first"
                )
            self._items[name] = obj
            self._lazy.pop(name, None)
        return obj

    def unregister(self, name: str) -> None:
        with self._lock:
            self._items.pop(name, None)
            self._lazy.pop(name, None)

    def get(self, name: str) -> T:
        """The object registered as ``name``; a miss lists the available names."""
        with self._lock:
            if name in self._items:
                return self._items[name]
            if name in self._lazy:
                return self._import(name)
            self._load_entry_points()
            if name in self._items:
                return self._items[name]
        raise RegistryError(f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}")

    def names(self) -> list[str]:
        """Every available name, sorted (built-ins, registered, entry points)."""
        with self._lock:
            self._load_entry_points()
            return sorted({*self._items, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def _import(self, name: str) -> T:
        module_name, _, attribute = self._lazy[name].partition(":")
        obj: T = getattr(importlib.import_module(module_name), attribute)
        self._lazy.pop(name, None)
        self._items[name] = obj
        return obj

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        if self.group is None or os.environ.get(AUTOLOAD_ENV):
            return
        for ep in entry_points(group=self.group):
            if ep.name in self._items or ep.name in self._lazy:
                continue
            try:
                self._items[ep.name] = ep.load()
            except Exception:  # a broken plug-in must not break the library
                log.warning(
                    "could not load %s plug-in %r from %s",
                    self.kind,
                    ep.name,
                    ep.value,
                    exc_info=True,
                )

"""Where the modules of :mod:`disclosure` used to live, and the finder that keeps those paths.

The package was regrouped into rooms (see :mod:`disclosure`). Code written against a module's
old path keeps working, with no warning: importing ``disclosure.controller`` gives the very
module ``disclosure.core.controller`` (``sys.modules`` holds the one object under both names,
so an attribute patched through either name is patched for both), and a module below a moved
package follows its package (``disclosure.pipeline.ranking`` is
``disclosure.core.pipeline.ranking``). :data:`MOVED` is the one table of old and new paths;
the finder that :func:`install` puts first on :data:`sys.meta_path` only maps names, and
imports nothing until an old path is asked for.

The finder and its loader implement the protocols of :class:`importlib.abc.MetaPathFinder`
and :class:`importlib.abc.Loader` (``find_spec``; ``create_module`` and ``exec_module``)
without subclassing them: importing :mod:`importlib.abc` loads :mod:`importlib.resources` and
:mod:`tempfile`, which would double what ``import disclosure`` costs.

New code imports the new paths. The table only grows: a path that was ever public stays.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type checker sees the ABCs; at run time they are not imported
    from importlib.abc import Loader, MetaPathFinder
else:
    Loader = MetaPathFinder = object

#: old dotted path -> new dotted path; a package's entry covers every module below it
MOVED = {
    # the core
    "disclosure.citation_styles": "disclosure.core.citation_styles",
    "disclosure.controller": "disclosure.core.controller",
    "disclosure.empty": "disclosure.core.empty",
    "disclosure.mcp.workflow": "disclosure.core.workflow",
    "disclosure.pipeline": "disclosure.core.pipeline",
    "disclosure.profiles": "disclosure.core.profiles",
    "disclosure.records": "disclosure.core.records",
    "disclosure.result": "disclosure.core.result",
    "disclosure.service_config": "disclosure.core.profile_sections",
    "disclosure.transfer": "disclosure.core.transfer",
    "disclosure.transfer_summaries": "disclosure.core.transfer_summaries",
    # the local service and its clients (disclosure.service itself stays: it is the room's package)
    "disclosure.client": "disclosure.service.client",
    "disclosure.client_wire": "disclosure.service.wire",
    "disclosure.error_codes": "disclosure.service.error_codes",
    "disclosure.pool": "disclosure.service.pool",
    "disclosure.service_host": "disclosure.service.host",
    "disclosure.vector_server": "disclosure.service.vector_server",
    # the faces
    "disclosure.api": "disclosure.faces.api",
    "disclosure.cli": "disclosure.faces.cli",
    "disclosure.extras": "disclosure.faces.extras",
    "disclosure.limits": "disclosure.faces.limits",
    "disclosure.mcp": "disclosure.faces.mcp",
    "disclosure.memories": "disclosure.faces.memories",
    "disclosure.middleware": "disclosure.faces.middleware",
    "disclosure.viewer": "disclosure.faces.viewer",
    # the side stores
    "disclosure.citation_usage": "disclosure.storage.citation_usage",
    "disclosure.namespaces": "disclosure.storage.namespaces",
    "disclosure.scan_verdicts": "disclosure.storage.scan_verdicts",
    "disclosure.sidefiles": "disclosure.storage.sidefiles",
    "disclosure.sidetables": "disclosure.storage.sidetables",
}


def new_name(name: str) -> str | None:
    """The path that ``name`` moved to (an old path, or a module below an old package), or
    None when it did not move. The longest old path that ``name`` starts with decides."""
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        new = MOVED.get(".".join(parts[:end]))
        if new is not None:
            return ".".join([new, *parts[end:]])
    return None


class MovedFinder(MetaPathFinder):
    """Finds an old path and hands over the module at its new path (a meta path finder)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        new = new_name(fullname)
        return None if new is None else ModuleSpec(fullname, _Alias(new))


class _Alias(Loader):
    """Loads an old path as the module at the new one: the same object, not a copy."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the old path's spec on the module: it keeps its own
        module.__spec__ = self.spec


def install() -> None:
    """Put the finder first on :data:`sys.meta_path` (before the one that would find a second
    copy of a moved module through its old package's path); once per process."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())

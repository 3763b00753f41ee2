"""YAML for files people hand us (profiles, experiments), without the ways YAML can explode.

``yaml.safe_load`` builds no objects, but it still follows aliases: nine nested anchors of ten
aliases each (a "billion laughs") make a value whose every walk (validation, dumping) visits a
billion nodes. Here a document may use at most :data:`MAX_ALIASES` aliases, nest at most
:data:`MAX_DEPTH` levels and be at most :data:`MAX_BYTES` long; past a limit it is refused with
a :class:`yaml.YAMLError` saying which, before anything is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_ALIASES = 50
MAX_DEPTH = 50
MAX_BYTES = 1_048_576


class _LimitedLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases (*name) in one document")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(path: Path) -> Any:
    """The document in ``path``, within the limits above. OSError, UnicodeDecodeError and
    yaml.YAMLError pass through for the caller to word."""
    with path.open("rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise yaml.YAMLError(f"larger than {MAX_BYTES // 1024} KB")
    loader = _LimitedLoader(data.decode("utf-8"))
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


__all__ = ["MAX_ALIASES", "MAX_BYTES", "MAX_DEPTH", "load_yaml"]

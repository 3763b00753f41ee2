"""Where a store's vectors live on a Chroma server, and how a server is named by URL.

Every data directory (every namespace) on a server gets a collection of its own, named
``<tiers.warm.collection>-<the data directory's name>``: a namespace's directory name is a
readable slug and a hash of its exact parts (see ``disclosure.storage.namespaces``), the same on
every replica, so every replica serving a namespace uses the same collection and no two namespaces
share one. Queries need no metadata filter, and forgetting a namespace drops its collection.

Why not one shared collection with a ``namespace`` metadata filter: measured with
``python -m benchmarks.chroma_layout_bench --namespaces 4 --sizes 2000 10000`` (a real ``chroma
run`` on loopback, k=10, figures in ``benchmarks/results/chroma_layout.json``), a query of one
namespace took 2.6 ms p50 in its own collection against 10.6 ms (2k per namespace) and 35.6 ms
(10k per namespace) in the shared one with the filter; with 8 namespaces of 10k
(``--namespaces 8 --sizes 10000``, ``chroma_layout_8ns.json``, a more loaded machine) 4.0 ms
against 59.9 ms: the filtered query grows with the whole collection, not with the namespace.
Recall was the same. Separate collections also cannot leak through a forgotten filter.

Several deployments sharing one Chroma server must each set their own
``tiers.warm.collection`` (the prefix), or the same namespace of two deployments would meet.
In embedded mode the collection keeps its configured name (each directory has its own Chroma).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import urlsplit

from tiers.config import WarmConfig
from tiers.errors import InvalidInputError

MAX_COLLECTION_CHARS = 512
_SAFE = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$")  # no "..", no leading/trailing "."
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")

__all__ = ["collection_for", "parse_chroma_url", "server_config"]


def collection_for(config: WarmConfig, data_dir: Path | str) -> str:
    """The collection holding ``data_dir``'s vectors: its own on a server, else the configured."""
    if config.backend != "server":
        return config.collection
    name = Path(data_dir).name
    if not name or not _SAFE.match(name):  # not a namespace directory: a stable digest of it
        name = "d" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    full = f"{config.collection}-{name}"
    if len(full) > MAX_COLLECTION_CHARS or not full[-1].isalnum() or _IPV4.match(full):
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]
        full = f"{config.collection}-{digest}"
    return full


def server_config(config: WarmConfig, data_dir: Path | str) -> WarmConfig:
    """``config`` with the collection of ``data_dir`` (unchanged in embedded mode)."""
    if config.backend != "server":
        return config
    return config.model_copy(update={"collection": collection_for(config, data_dir)})


def parse_chroma_url(url: str) -> dict[str, object]:
    """``http://HOST:PORT`` (or ``https://``) as the warm settings it stands for: backend
    ``server``, host, port (default 8000, or 443 for https) and ssl."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidInputError(f"Chroma URL {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(
            f"Chroma URL {url!r} is not http://HOST:PORT (or https://HOST:PORT)"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise InvalidInputError(
            f"Chroma URL {url!r}: give only the scheme, host and port, e.g. http://127.0.0.1:8000"
        )
    ssl = parts.scheme == "https"
    return {
        "backend": "server",
        "host": parts.hostname,
        "port": port if port is not None else (443 if ssl else 8000),
        "ssl": ssl,
    }

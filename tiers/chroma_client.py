"""Opening and closing chromadb clients for the warm tier, embedded or over HTTP.

Product telemetry is off. Two chromadb 1.5 quirks are handled here: an HttpClient waits forever
by default (each request gets ``tiers.warm.timeout_seconds``), and ``close`` leaves its httpx
sessions open.

Warm tiers on one Chroma server share one HTTP client per process (:func:`acquire_client`,
:func:`return_client`): making one costs about 0.1 s of CPU (two TLS contexts, each loading
the system's certificates, and a round trip to the server), which every namespace opened on a
replica paid before. The client closes with the last tier that uses it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from tiers._offline import prepare_environment
from tiers.config import WarmConfig
from tiers.errors import InvalidInputError, StorageError, TierUnavailableError

log = logging.getLogger(__name__)


def open_client(path: Path | None, config: WarmConfig) -> Any:
    prepare_environment()
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if config.backend == "embedded":
        if path is None:
            raise InvalidInputError("the embedded warm tier needs a directory (got path=None)")
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(path), settings=settings)
        except Exception as exc:
            raise StorageError(f"cannot open the warm index at {path}: {exc}") from exc
    try:
        client = chromadb.HttpClient(
            host=config.host, port=config.port, ssl=config.ssl, settings=settings
        )
    except Exception as exc:
        raise TierUnavailableError(
            f"Chroma server at {location(path, config)} unreachable ({exc}); start one with "
            f"`chroma run --path DIR --host {config.host} --port {config.port}`"
        ) from exc
    _set_http_timeout(client, config.timeout_seconds)
    return client


_ServerKey = tuple[str, int, bool, float]
_shared_lock = threading.Lock()
_shared: dict[_ServerKey, tuple[Any, int]] = {}  # server -> its client, and how many use it


def acquire_client(path: Path | None, config: WarmConfig) -> Any:
    """A client for ``config``'s Chroma: the process's shared one for a server (made on first
    use), a client of its own for an embedded directory. Give it back with
    :func:`return_client`."""
    if config.backend == "embedded":
        return open_client(path, config)
    key = (config.host, config.port, config.ssl, config.timeout_seconds)
    with _shared_lock:
        held = _shared.get(key)
        if held is not None:
            _shared[key] = (held[0], held[1] + 1)
            return held[0]
        client = open_client(path, config)  # under the lock: one client per server, ever
        _shared[key] = (client, 1)
        return client


def return_client(client: Any) -> None:
    """Give back a client from :func:`acquire_client` (a shared one closes with its last user)."""
    with _shared_lock:
        key = next((k for k, (c, _) in _shared.items() if c is client), None)
        if key is not None:
            users = _shared[key][1] - 1
            if users > 0:
                _shared[key] = (client, users)
                return
            del _shared[key]
    release_client(client)


def release_client(client: Any) -> None:
    """Close a Chroma client, and what chromadb 1.5's ``close`` leaves open for HTTP clients.

    An HttpClient owns two private systems (its own and its admin client's), each with an httpx
    session that ``close`` never closes (ResourceWarning: unclosed socket), and chromadb keeps a
    second, unreferenced entry for the first system in its class-level registry.
    """
    from chromadb.api.shared_system_client import SharedSystemClient as Shared

    sessions = [_http_session(client), _http_session(getattr(client, "_admin_client", None))]
    system = Shared._identifier_to_system.get(getattr(client, "_identifier", ""))
    try:
        client.close()
    except Exception:  # closing must not mask the error that made us close
        log.debug("closing the Chroma client failed", exc_info=True)
    for session in sessions:
        if session is not None:  # HTTP clients only: their systems are never shared
            session.close()
            for key, value in list(Shared._identifier_to_system.items()):
                if value is system and key not in Shared._identifier_to_refcount:
                    Shared._identifier_to_system.pop(key, None)


def _http_session(client: Any) -> Any:
    return getattr(getattr(client, "_server", None), "_session", None)


def location(path: Path | None, config: WarmConfig) -> str:
    if config.backend == "embedded":
        return str(path)
    scheme = "https" if config.ssl else "http"
    return f"{scheme}://{config.host}:{config.port}"


def _set_http_timeout(client: Any, seconds: float) -> None:
    """chromadb's HTTP client waits forever by default; give each request a deadline."""
    session = _http_session(client)
    if session is not None:
        import httpx

        session.timeout = httpx.Timeout(seconds)

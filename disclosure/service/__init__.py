"""The local service that owns a data root: its service file, its lock, and finding it.

Only one process may open a namespace's data directory (the hot set and the warm index live in
the process that opened it). So that an MCP server, the command line, the HTTP server and a
user's scripts share one memory, one process owns the root and the others talk to it:
``disclosure service start`` runs ``disclosure serve --service`` in the background, and that
process

- holds an exclusive lock on ``ROOT/service.lock`` for its whole life (the operating system
  drops it when the process dies, however it dies);
- writes ``ROOT/service.json`` (mode 0600: only the owner can read it) with its address,
  process id and a random access token once it listens, and removes it on a clean stop.

A service file is trusted only while its lock is held: one whose lock is free was left by a dead
process (a stale file) and is removed, never used. This module imports nothing heavy, so an
entry point can look for a service before it decides what to load.

The rest of the room: :mod:`~disclosure.service.host` runs the service (``disclosure serve
--service``); :mod:`~disclosure.service.pool` opens one controller per namespace for every
server; :mod:`~disclosure.service.client` holds the clients of the HTTP API, with
:mod:`~disclosure.service.wire` (what both clients share) and
:mod:`~disclosure.service.error_codes` (one table of error codes for the server and the
clients); :mod:`~disclosure.service.vector_server` points a profile at a Chroma server. The
file, lock and discovery stay in this package's own module, where ``disclosure.service`` has
always been, so that path is the same module as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from tiers.errors import ServiceError

__all__ = [
    "LOCK_FILE",
    "LOG_FILE",
    "NO_SERVICE_VARIABLE",
    "SERVICE_FILE",
    "TOKEN_VARIABLE",
    "ServiceInfo",
    "ServiceLock",
    "find_service",
    "lock_held",
    "read_info",
    "remove_info",
    "service_disabled",
    "start_service",
    "stop_service",
    "write_info",
]

#: The file under the root that says where the running service listens (mode 0600).
SERVICE_FILE = "service.json"
#: The file whose lock the running service holds while it lives.
LOCK_FILE = "service.lock"
#: The service's log, under the root.
LOG_FILE = "service.log"
#: How ``service start`` hands the access token to the process it starts (never on the command
#: line, where every user of the machine could read it).
TOKEN_VARIABLE = "TIERED_DISCLOSURE_SERVICE_TOKEN"
#: "1": every entry point opens the stores itself and never looks for (or starts) a service.
NO_SERVICE_VARIABLE = "TIERED_DISCLOSURE_NO_SERVICE"
_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """What the service file says: where the service listens, who it is, and its token."""

    url: str
    pid: int
    token: str
    root: str
    profile: str
    started: str
    version: str

    def public(self) -> dict[str, Any]:
        """Everything but the token (for status output and logs)."""
        data = asdict(self)
        data.pop("token")
        return data


def service_disabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$TIERED_DISCLOSURE_NO_SERVICE`` asks every entry point to open stores itself."""
    value = (os.environ if environ is None else environ).get(NO_SERVICE_VARIABLE, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


class ServiceLock:
    """The exclusive lock a running service holds on ``ROOT/service.lock``."""

    def __init__(self, root: Path, *, wait: float = 5.0) -> None:
        import fcntl

        root.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = (root / LOCK_FILE).open("a+", encoding="utf-8")
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                # a client checking the lock holds it shared for a moment: try again briefly
                if time.monotonic() >= deadline:
                    self._file.close()
                    self._file = None
                    running = read_info(root)
                    where = f" (pid {running.pid} at {running.url})" if running else ""
                    raise ServiceError(
                        f"a service already runs for {root}{where}; "
                        "`disclosure service stop` stops it"
                    ) from None
                time.sleep(_POLL_SECONDS)

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops the lock
            self._file = None


def lock_held(root: Path) -> bool:
    """Whether a live process holds the service lock of ``root``."""
    import fcntl

    try:
        fd = os.open(root / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # drops a shared lock taken above
    return False


def read_info(root: Path) -> ServiceInfo | None:
    """The service file of ``root`` as written, or None (missing or unreadable); not checked."""
    try:
        data = json.loads((root / SERVICE_FILE).read_text(encoding="utf-8"))
        return ServiceInfo(**{k: data[k] for k in ServiceInfo.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_service(root: Path | str) -> ServiceInfo | None:
    """The running service that owns ``root``, or None. A stale file is removed."""
    root = Path(root).expanduser()
    info = read_info(root)
    if info is None:
        return None
    if lock_held(root):
        return info
    _remove_stale(root)
    return None


def _remove_stale(root: Path) -> None:
    """Remove a service file whose lock nobody holds, holding the lock meanwhile so that a
    service starting at this moment cannot have its fresh file removed."""
    import fcntl

    try:
        fd = os.open(root / LOCK_FILE, os.O_RDONLY)
    except OSError:
        fd = -1
    try:
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        (root / SERVICE_FILE).unlink(missing_ok=True)
    except OSError:
        return  # a service took the lock in between: its file is not stale
    finally:
        if fd >= 0:
            os.close(fd)


def write_info(root: Path, info: ServiceInfo) -> None:
    """Write the service file atomically, readable by the owner only."""
    target = root / SERVICE_FILE
    tmp = root / f".{SERVICE_FILE}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an old temporary file keeps its mode otherwise
        os.write(fd, json.dumps(asdict(info), indent=2).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(target)


def remove_info(root: Path, pid: int) -> None:
    """Remove the service file if it is ``pid``'s (a clean stop)."""
    info = read_info(root)
    if info is not None and info.pid == pid:
        (root / SERVICE_FILE).unlink(missing_ok=True)


def start_service(
    root: Path,
    *,
    profile: str = "default",
    host: str = "127.0.0.1",
    port: int = 0,
    timeout: float = 120.0,
    extra_args: Sequence[str] = (),
) -> tuple[ServiceInfo, bool]:
    """Start the service for ``root`` unless one runs; ``(info, started)``.

    The service runs in a new session (it outlives the caller) and logs to ``ROOT/service.log``.
    Waits until it answers ``/health`` with its token; a service that dies first is reported
    with the end of its log.
    """
    import secrets

    root = Path(root).expanduser()
    running = find_service(root)
    if running is not None:
        return running, False
    root.mkdir(parents=True, exist_ok=True)
    if Path(profile).suffix in (".yaml", ".yml") and Path(profile).is_file():
        profile = str(Path(profile).resolve())  # the service may run from another directory
    token = secrets.token_urlsafe(32)
    command = [
        sys.executable, "-m", "disclosure", "serve", "--service", "--data-dir", str(root),
        "--profile", str(profile), "--host", host, "--port", str(port), *extra_args,
    ]  # fmt: skip
    env = {**os.environ, TOKEN_VARIABLE: token}
    env.pop(NO_SERVICE_VARIABLE, None)
    with (root / LOG_FILE).open("ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    info = _wait_ready(root, process, token, timeout)
    # the service outlives this call: a thread reaps it when it ends (no zombie is left behind
    # in a long-lived caller such as an MCP server)
    threading.Thread(target=process.wait, name="service-reaper", daemon=True).start()
    return info, True


def _wait_ready(root: Path, process: subprocess.Popen[bytes], token: str, timeout: float) -> Any:
    """The started service once it answers; if another start won the race, that service."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll()
        info = find_service(root)
        if info is not None and (info.pid == process.pid or code is not None):
            if _answers(info):
                if info.pid != process.pid:
                    process.wait(timeout=30)  # ours lost the lock to that one and exits
                return info
        elif code is not None:
            raise ServiceError(
                f"the service for {root} exited with status {code} before it was ready:\n"
                f"{_log_tail(root)}"
            )
        time.sleep(_POLL_SECONDS)
    process.kill()
    process.wait()
    raise ServiceError(f"the service for {root} was not ready after {timeout:g} s; killed it")


def _answers(info: ServiceInfo) -> bool:
    """Whether the service answers its health check (the client is built on this module)."""
    import httpx

    try:
        answer = httpx.get(f"{info.url}/health", headers={"X-API-Key": info.token}, timeout=5.0)
    except httpx.HTTPError:
        return False
    return answer.is_success


def stop_service(root: Path, *, timeout: float = 30.0) -> ServiceInfo | None:
    """Stop the running service of ``root`` (SIGTERM: it finishes requests, closes the stores
    and removes its file); None if none ran. SIGKILL after ``timeout`` seconds."""
    import signal

    root = Path(root).expanduser()
    info = find_service(root)
    if info is None:
        return None
    _signal(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while lock_held(root):
        if time.monotonic() >= deadline:
            _signal(info.pid, signal.SIGKILL)
            time.sleep(0.5)
            _remove_stale(root)
            break
        time.sleep(_POLL_SECONDS)
    return info


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def _log_tail(root: Path, lines: int = 15) -> str:
    try:
        text = (root / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])

"""A thin client of the local service for the hooks: HTTP/1.1 over a loopback socket, JSON in
and out, a deadline on every request, and the service started (detached) when none runs.

It reads the service file and checks its lock the way :mod:`disclosure.service` does, without
importing it (nor ``http.client``, ``dataclasses`` or ``subprocess``): a hook pays for what it
uses, and only the first hook of a cold machine starts a service. The names of the service's
files are :mod:`disclosure.service`'s, repeated here (a test keeps them equal).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

__all__ = [
    "Deadline",
    "HookError",
    "ServiceAddress",
    "ServiceAnswerError",
    "ThinClient",
    "find_address",
    "ref_path",
    "service_disabled",
    "start_detached",
]

SERVICE_FILE = "service.json"
LOCK_FILE = "service.lock"
LOG_FILE = "service.log"
TOKEN_VARIABLE = "TIERED_DISCLOSURE_SERVICE_TOKEN"
NO_SERVICE_VARIABLE = "TIERED_DISCLOSURE_NO_SERVICE"
STARTING_FILE = "agent-service-starting"  # a hook started the service this recently
STARTING_SECONDS = 120.0  # ... and no other hook starts one meanwhile
MAX_ANSWER_BYTES = 8 * 1024 * 1024
_MIN_TIMEOUT = 0.02


class HookError(Exception):
    """Why a hook gave up: one line for stderr (the agent goes on regardless)."""


class ServiceAnswerError(HookError):
    """The service answered with an error: its status and code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"the memory service answered {status} ({code}): {message}")
        self.status = status
        self.code = code


class Deadline:
    """The time a hook has left; every request takes its timeout from it."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def timeout(self, cap: float | None = None) -> float:
        """What the next step may take (at most ``cap``); HookError once nothing is left."""
        allowed = self.left() if cap is None else min(self.left(), cap)
        if allowed < _MIN_TIMEOUT:
            raise HookError("out of time before the memory service answered")
        return allowed


class ServiceAddress:
    """Where the root's service listens, and its access token (from its service file)."""

    __slots__ = ("host", "port", "token", "url")

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise HookError(f"the service file names an address a hook cannot use: {url!r}")
        self.url, self.token = url, token
        self.host, self.port = parts.hostname, parts.port


def find_address(root: Path) -> ServiceAddress | None:
    """The running service of ``root``, or None (no file, or a file whose lock nobody holds:
    left by a process that died; :func:`disclosure.service.find_service` removes such files)."""
    try:
        data = json.loads((root / SERVICE_FILE).read_text(encoding="utf-8"))
        url, token = str(data["url"]), str(data["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return ServiceAddress(url, token) if _lock_held(root) else None


def _lock_held(root: Path) -> bool:
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
        os.close(fd)
    return False


def service_disabled() -> bool:
    value = os.environ.get(NO_SERVICE_VARIABLE, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def start_detached(root: Path, profile: str) -> bool:
    """Start ``disclosure serve --service`` for ``root`` in a session of its own and return at
    once (it logs to ``ROOT/service.log``); False when one runs, or when the one a hook started
    less than :data:`STARTING_SECONDS` ago is still alive (loading)."""
    import secrets
    import subprocess
    import sys

    root.mkdir(parents=True, exist_ok=True)
    if _starting(root / STARTING_FILE) or find_address(root) is not None:
        return False
    command = [
        sys.executable, "-m", "disclosure", "serve", "--service", "--data-dir", str(root),
        "--profile", profile,
    ]  # fmt: skip
    env = {**os.environ, TOKEN_VARIABLE: secrets.token_urlsafe(32)}
    env.pop(NO_SERVICE_VARIABLE, None)
    with (root / LOG_FILE).open("ab") as log:
        process = subprocess.Popen(
            command,
            cwd=root,  # not the project: `-m` would import a `disclosure` directory found there
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    (root / STARTING_FILE).write_text(str(process.pid), encoding="utf-8")
    return True


def _starting(marker: Path) -> bool:
    """Whether the service a hook started (its pid in ``marker``) may still be loading."""
    try:
        if time.time() - marker.stat().st_mtime >= STARTING_SECONDS:
            return False
        os.kill(int(marker.read_text(encoding="utf-8")), 0)
    except (OSError, ValueError):
        return False
    return True


class ThinClient:
    """Requests to one service for one namespace, on one kept-alive connection."""

    def __init__(
        self, address: ServiceAddress, namespace: Mapping[str, str], deadline: Deadline
    ) -> None:
        self.address = address
        self.query = urlencode(sorted(namespace.items()))
        self.deadline = deadline
        self._sock: socket.socket | None = None
        self._buffer = b""

    def get(self, path: str, *, cap: float | None = None) -> Any:
        return self.call("GET", path, None, cap=cap)

    def post(self, path: str, body: Any, *, cap: float | None = None) -> Any:
        return self.call("POST", path, body, cap=cap)

    def call(self, method: str, path: str, body: Any, *, cap: float | None = None) -> Any:
        """The decoded JSON answer; HookError when the service is unreachable or slow,
        ServiceAnswerError when it refuses."""
        timeout = self.deadline.timeout(cap)
        payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        target = f"{path}?{self.query}" if self.query else path
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: {self.address.host}:{self.address.port}\r\n"
            f"X-API-Key: {self.address.token}\r\nAccept: application/json\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        try:
            sock = self._connect(timeout)
            sock.settimeout(timeout)
            sock.sendall(head.encode("latin-1") + payload)
            status, raw = self._read_answer(sock)
        except TimeoutError:
            self.close()
            raise HookError(f"the memory service did not answer within {timeout:.2f} s") from None
        except OSError as exc:
            self.close()
            where = self.address.url
            raise HookError(f"the memory service at {where} is unreachable: {exc}") from None
        return _decoded(status, raw)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._buffer = b""

    def _connect(self, timeout: float) -> socket.socket:
        if self._sock is None:
            host = self.address.host
            if host.replace(".", "").isdigit() or ":" in host:  # an address: no name lookup
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                sock = socket.socket(family, socket.SOCK_STREAM)
                try:
                    sock.settimeout(timeout)
                    sock.connect((host, self.address.port))
                except OSError:
                    sock.close()
                    raise
            else:
                sock = socket.create_connection((host, self.address.port), timeout=timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = sock
        return self._sock

    def _read_answer(self, sock: socket.socket) -> tuple[int, bytes]:
        while b"\r\n\r\n" not in self._buffer:
            self._fill(sock)
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            raise OSError(f"not an HTTP answer: {lines[0][:60]!r}") from None
        fields = (line.partition(":") for line in lines[1:])
        headers = {name.strip().lower(): value.strip() for name, _, value in fields}
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._read_chunked(sock)
        else:
            body = self._read_exactly(sock, int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, body

    def _read_exactly(self, sock: socket.socket, size: int) -> bytes:
        if size > MAX_ANSWER_BYTES:
            raise OSError(f"an answer of {size} bytes is more than a hook reads")
        while len(self._buffer) < size:
            self._fill(sock)
        body, self._buffer = self._buffer[:size], self._buffer[size:]
        return body

    def _read_chunked(self, sock: socket.socket) -> bytes:
        parts: list[bytes] = []
        while True:
            while b"\r\n" not in self._buffer:
                self._fill(sock)
            line, _, self._buffer = self._buffer.partition(b"\r\n")
            size = int(line.split(b";")[0], 16)
            chunk = self._read_exactly(sock, size + 2)[:size]
            if size == 0:
                return b"".join(parts)
            parts.append(chunk)

    def _fill(self, sock: socket.socket) -> None:
        data = sock.recv(65536)
        if not data:
            raise OSError("the service closed the connection")
        self._buffer += data


def _decoded(status: int, raw: bytes) -> Any:
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        raise HookError(f"the memory service answered {status} with something not JSON") from None
    if 200 <= status < 300:
        return data
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        raise ServiceAnswerError(status, str(error.get("code")), str(error.get("message"))[:300])
    raise ServiceAnswerError(status, f"http_{status}", str(data)[:300])


def ref_path(prefix: str, ref: str) -> str:
    """``prefix/<ref>`` with the reference quoted (a citation holds a colon)."""
    return f"{prefix}/{quote(ref, safe='')}"

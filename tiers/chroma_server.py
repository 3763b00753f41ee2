"""Run a local Chroma server (``chroma run``) for the warm tier's server mode.

``tiers.warm.backend: server`` makes the warm tier a client of a Chroma server at host:port.
Something has to run that server: a deployment's own service manager, or this helper (tests,
benchmarks, ``disclosure serve``)::

    with ChromaServer(data_dir / "chroma-server", port=free_port()) as server:
        tier = WarmTier(None, WarmConfig(backend="server", port=server.port), embedder)

The server binds to loopback by default, writes its log to ``<path>/chroma-server.log`` and is
started with product telemetry off. ``/api/v2/heartbeat`` answers after about a second.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

from tiers._offline import server_environment
from tiers.errors import TierUnavailableError

log = logging.getLogger(__name__)

LOG_NAME = "chroma-server.log"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def chroma_executable() -> str:
    """The ``chroma`` command of this environment (beside the interpreter), else from PATH."""
    beside = Path(sys.executable).with_name("chroma")
    if beside.is_file():
        return str(beside)
    found = shutil.which("chroma")
    if found is None:
        raise TierUnavailableError("the `chroma` command is not installed: pip install chromadb")
    return found


class ChromaServer:
    """A ``chroma run --path DIR --host HOST --port PORT`` child process."""

    def __init__(self, path: Path, *, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.path = Path(path)
        self.host = host
        self.port = port or free_port(host)
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> ChromaServer:
        """Start the server and wait until its heartbeat answers."""
        if self._process is not None:
            return self
        self.path.mkdir(parents=True, exist_ok=True)
        self._log = (self.path / LOG_NAME).open("ab")
        command = [chroma_executable(), "run", "--path", str(self.path)]
        command += ["--host", self.host, "--port", str(self.port)]
        log.info("starting %s", " ".join(command))
        self._process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=server_environment(),
        )
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise TierUnavailableError(
                    f"chroma run exited with code {self._process.returncode}; "
                    f"see {self.path / LOG_NAME}"
                )
            if self.alive():
                return
            time.sleep(0.1)
        raise TierUnavailableError(f"Chroma server at {self.url} not ready after {timeout:.0f} s")

    def alive(self) -> bool:
        """Whether ``/api/v2/heartbeat`` answers."""
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1.0) as response:
                return int(response.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (kill it if it does not stop within ``timeout``)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

"""A real PostgreSQL for the tests: ``initdb`` + ``pg_ctl`` in a temporary directory, on a free
loopback port, run as the ``postgres`` system user when the tests run as root (PostgreSQL refuses
to run as root). Debian's ``postgresql`` package is installed with apt-get when the binaries are
missing, so a fresh machine runs the tests; one server serves a whole test session, each test
takes its own namespace (a schema of its own)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

_USER = "postgres"


def _bin_dirs() -> list[Path]:
    """Where Debian puts the server binaries (newest version first), and /usr/local/bin."""
    return [
        Path("/usr/local/bin"),
        *sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True),
    ]


def _binary(name: str) -> str | None:
    for directory in _bin_dirs():
        candidate = Path(directory) / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


def _install() -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "postgresql"],
    ):
        subprocess.run(command, check=False, env=env, capture_output=True, timeout=900)


def _binaries() -> tuple[str, str]:
    if _binary("initdb") is None or _binary("pg_ctl") is None:
        _install()
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL (initdb, pg_ctl) could not be installed with apt-get")
        pytest.skip("PostgreSQL is missing and apt-get could not install it")
    return initdb, pg_ctl


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """A throwaway PostgreSQL cluster; ``url`` is its connection string (trust auth, loopback)."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = _binaries()
        self.root = Path(tempfile.mkdtemp(prefix="td-postgres-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, _USER, _USER)
        self.url = f"postgresql://{_USER}@127.0.0.1:{self.port}/postgres"

    def _run(self, command: Sequence[str]) -> None:
        prefix = ["runuser", "-u", _USER, "--"] if self._as_postgres else []
        done = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout}\n{done.stderr}")

    def start(self) -> PostgresServer:
        self._run(
            [self.initdb, "-D", str(self.data), "-U", _USER, "--auth=trust", "-E", "UTF8",
             "--no-sync", "--locale=C.UTF-8"]
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.root} -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=200"
        )
        log = self.root / "server.log"
        self._options = options
        self._run([self.pg_ctl, "-D", str(self.data), "-l", str(log), "-o", options, "-w", "start"])
        return self

    def restart(self) -> None:
        """Stop the server (dropping every connection) and start it again. A clean stop: the
        test server runs without synchronous commits, which an abrupt one would lose."""
        pg_ctl = [self.pg_ctl, "-D", str(self.data)]
        self._run([*pg_ctl, "-m", "fast", "-w", "stop"])
        log = str(self.root / "server.log")
        self._run([*pg_ctl, "-l", log, "-o", self._options, "-w", "start"])

    def stop(self) -> None:
        try:
            self._run([self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def unique_namespace(prefix: str = "t") -> str:
    """A namespace no other test of the session uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"

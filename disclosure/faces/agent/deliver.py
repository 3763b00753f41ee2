"""Hands a namespace's spool to the service once it answers.

A hook whose service was not ready (the first use starts it, and opening a store loads the
models: seconds) spools what it had to store and starts this in a session of its own; it waits
for the service (at most :data:`PATIENCE` seconds), gives each batch the time it needs, and
exits. One runs per spool at a time (it holds a lock while it lives); later hooks hand over
whatever it has not. ``python -m disclosure.faces.agent.deliver ROOT KEY NAMESPACE_JSON``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from disclosure.faces.agent.project import agent_home
from disclosure.faces.agent.state import Spool, locked
from disclosure.faces.agent.wire import Deadline, HookError, ThinClient, find_address

__all__ = ["PATIENCE", "deliver", "main", "start_delivery"]

PATIENCE = 600.0  # seconds a delivery waits for the service, at most
REQUEST_SECONDS = 120.0  # a batch may take this long (a store opened for it loads its models)
_POLL = 0.5


def deliver(root: Path, key: str, namespace: Mapping[str, str], *, patience: float) -> int:
    """Wait for the service, then hand over the spool; how many memories it took."""
    home = agent_home(root)
    home.mkdir(parents=True, exist_ok=True)
    with locked(_lock(home, key), wait=False) as mine:
        if not mine:
            return 0  # another delivery runs
        spool = Spool(home, key)
        until = time.monotonic() + patience
        done = 0
        while spool.pending() and time.monotonic() < until:
            address = find_address(root)
            if address is None:
                time.sleep(_POLL)
                continue
            client = ThinClient(address, namespace, Deadline(REQUEST_SECONDS))
            try:
                done += spool.flush(partial(_send, client))
            except HookError as exc:
                print(f"disclosure delivery: {exc}; retrying", file=sys.stderr, flush=True)
                time.sleep(_POLL * 4)
            finally:
                client.close()
    return done


def start_delivery(root: Path, key: str, namespace: Mapping[str, str]) -> bool:
    """Start a delivery in a session of its own unless one runs; whether one was started."""
    import subprocess

    home = agent_home(root)
    with locked(_lock(home, key), wait=False) as free:
        if not free:
            return False
    command = [sys.executable, "-m", __name__, str(root), key, json.dumps(dict(namespace))]
    with (home / "delivery.log").open("ab") as log:
        subprocess.Popen(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    return True


def _send(client: ThinClient, batch: list[dict[str, Any]]) -> None:
    client.post("/v1/ingest", {"memories": batch})


def _lock(home: Path, key: str) -> Path:
    return home / f"{key}.delivery.lock"


def main(argv: Sequence[str]) -> int:
    root, key, namespace = argv
    parts = json.loads(namespace)
    done = deliver(Path(root), key, parts, patience=PATIENCE)
    if done:
        print(f"disclosure delivery: {done} spooled memories handed over", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover - run by start_delivery
    os.umask(0o077)
    sys.exit(main(sys.argv[1:]))

"""The service killed with SIGKILL in the middle of a bulk import loses nothing acknowledged:
after a restart every acknowledged memory is there, and the outbox drains (real embedder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from disclosure.service import find_service, stop_service
from disclosure.service.client import MemoryClient
from tiers.errors import ServiceError

pytest.importorskip("uvicorn", reason="the [server] extra is not installed")

REPO = Path(__file__).resolve().parents[3]
BATCH = 40
ACKED_BEFORE_KILL = 160


def start(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERED_DISCLOSURE_")}
    done = subprocess.run(
        [sys.executable, "-m", "disclosure", "service", "start", "--root", str(root)],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "root"
    yield home
    stop_service(home, timeout=20)


def test_nothing_acknowledged_is_lost_when_the_service_is_killed(root: Path) -> None:
    start(root)  # the default profile: the real ONNX embedder, embedding in the background
    info = find_service(root)
    assert info is not None
    acked: list[str] = []
    stop = threading.Event()

    def import_in_bulk() -> None:
        with MemoryClient.for_root(root, namespace={"user": "k"}, timeout=60) as client:
            for batch in range(10_000):
                memories = [
                    {"id": f"k{batch}-{i}", "content": f"Import {batch}.{i}: crate {i} holds "
                     f"{batch * 7 + i} bolts for the {['north', 'south'][i % 2]} shelf."}
                    for i in range(BATCH)
                ]  # fmt: skip
                try:
                    report = client.ingest(memories)
                except ServiceError:
                    return  # the service died under this request: it was never acknowledged
                acked.extend(report.ids)
                if stop.is_set():
                    return

    importer = threading.Thread(target=import_in_bulk)
    importer.start()
    deadline = time.monotonic() + 240
    while len(acked) < ACKED_BEFORE_KILL and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(info.pid, signal.SIGKILL)  # in the middle of the import and of the embedding
    stop.set()
    importer.join(timeout=120)
    assert len(acked) >= ACKED_BEFORE_KILL
    gone = time.monotonic() + 30  # the kernel drops the dead process's lock as it exits
    while find_service(root) is not None and time.monotonic() < gone:
        time.sleep(0.05)
    assert find_service(root) is None  # the file it left is stale: found so, and removed
    assert not (root / "service.json").exists()

    start(root)
    restarted = find_service(root)
    assert restarted is not None and restarted.pid != info.pid
    with MemoryClient.for_root(root, namespace={"user": "k"}, timeout=60) as client:
        for memory_id in acked:
            batch, index = memory_id[1:].split("-")
            assert f"Import {batch}.{index}: crate {index} " in client.show(memory_id)
        left = client.stats()["store"]
        deadline = time.monotonic() + 600
        while left["pending"] and time.monotonic() < deadline:
            time.sleep(0.5)
            left = client.stats()["store"]
        assert left["pending"] == 0
        assert left["warm"] == left["cold"] >= len(acked)
        found = client.disclose(f"crate {acked[-1].rsplit('-', 1)[1]} bolts", level="detailed")
        assert found.items

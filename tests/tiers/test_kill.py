"""A process killed mid-ingest loses no memory whose ingest returned and corrupts no tier."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tiers.base import Embedder
from tiers.store import TieredStore

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "tiers" / "ingest_child.py"


def run_and_kill(data_dir: Path, round_no: int, batches: int, *extra: str) -> dict[str, str]:
    """Start the child, let it report `batches` batches, SIGKILL it; return what it reported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = data_dir.parent / f"child-{round_no}.log"
    reported: dict[str, str] = {}
    with (
        log.open("w") as stderr,
        subprocess.Popen(
            [sys.executable, str(CHILD), str(data_dir), str(round_no), *extra],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            cwd=ROOT,
        ) as child,
    ):
        assert child.stdout is not None
        try:
            for line in child.stdout:
                record = json.loads(line)
                reported.update(record.get("ids", {}))
                if record.get("batch", -1) + 1 >= batches:
                    child.send_signal(signal.SIGKILL)  # it is inside its next ingest by now
                    break
        finally:
            child.kill()
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, log.read_text()
    return reported


def check_everything_survived(
    data_dir: Path, reported: dict[str, str], embedder: Embedder | None = None
) -> None:
    with TieredStore(data_dir, line_counter=len, embedder=embedder) as store:
        store.check_integrity()  # quick_check and the FTS5 index's own check
        stored = {m.id: m.content for m in store.get(list(reported))}
        missing = sorted(set(reported) - set(stored))
        assert missing == [], f"lost {len(missing)} acknowledged memories: {missing[:5]}"
        changed = [i for i, content in reported.items() if stored[i] != content]
        assert changed == [] or all(i.startswith("shared-") for i in changed)
        rows = store.cold.query("SELECT COUNT(*), COALESCE(SUM(line_tokens), 0) FROM memories")
        assert (store.count(), store.total_line_tokens()) == tuple(rows[0])
        some = next(i for i in reported if not i.startswith("shared-"))
        assert some in {h.id for h in store.search("cold", reported[some], 5)}
        if embedder is not None:  # Chroma opened; after a flush it holds every memory
            assert store.flush(timeout=120) == 0
            assert store.warm is not None
            assert store.warm.contains(list(reported)) == set(reported)
            assert store.stats().warm == store.count()


@pytest.mark.usefixtures("backend")  # the child inherits the PostgreSQL URL, if any
def test_sigkill_mid_ingest_loses_nothing_acknowledged(tmp_path: Path) -> None:
    """Three kill-and-reopen rounds: every acknowledged memory is archived, indexes intact."""
    everything: dict[str, str] = {}
    data_dir = tmp_path / "data"
    for round_no, batches in enumerate((5, 12, 3)):
        reported = run_and_kill(data_dir, round_no, batches)
        assert len(reported) >= batches * 16
        everything.update(reported)
        check_everything_survived(data_dir, everything)


def test_sigkill_mid_ingest_with_the_warm_tier(
    tmp_path: Path, onnx_cache_dir: Path, onnx_embedder: Embedder
) -> None:
    """With Chroma and the embedder in the loop: killed twice, reopened, flushed, nothing lost."""
    everything: dict[str, str] = {}
    data_dir = tmp_path / "data"
    for round_no, batches in enumerate((4, 7)):
        reported = run_and_kill(data_dir, round_no, batches, str(onnx_cache_dir))
        everything.update(reported)
        check_everything_survived(data_dir, everything, onnx_embedder)

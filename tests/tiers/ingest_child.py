"""Child process for the kill test: ingests batches forever, printing each returned batch.

Usage: python tests/tiers/ingest_child.py DATA_DIR ROUND [ONNX_CACHE_DIR]
With an ONNX cache directory the store has the real warm tier (ONNX MiniLM, embedding inline).
Each line on stdout is JSON ``{"batch": n, "ids": {...id: content...}}`` printed only after
``ingest`` returned, so every id printed must survive a SIGKILL at any later moment.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tiers.config import OutboxConfig, TiersConfig
from tiers.memory import Memory
from tiers.store import TieredStore

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def main() -> None:
    data_dir, round_no = Path(sys.argv[1]), int(sys.argv[2])
    embedder = None
    if len(sys.argv) > 3:
        from tiers.onnx_embedder import OnnxEmbedder

        embedder = OnnxEmbedder.from_cache(Path(sys.argv[3]), export=False)
    config = TiersConfig(outbox=OutboxConfig(drain="inline", batch_size=16))
    with TieredStore(data_dir, config, embedder=embedder, line_counter=len) as store:
        print(json.dumps({"ready": True}), flush=True)
        batch = 0
        while True:
            memories = [
                Memory(
                    id=f"r{round_no}-b{batch}-m{i}" if i % 5 else f"shared-{i}",
                    content=f"round {round_no} batch {batch} item {i} about topic{i % 7}",
                    session_id=f"s{i % 3}",
                    timestamp=BASE + timedelta(seconds=batch * 100 + i),
                )
                for i in range(20)
            ]
            store.ingest(memories)
            ids = {m.id: m.content for m in memories}
            print(json.dumps({"batch": batch, "ids": ids}), flush=True)
            batch += 1


if __name__ == "__main__":
    main()

"""``disclosure ingest FILE...``: memories from JSONL/JSON, LoCoMo JSON or a chat transcript."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disclosure.faces.cli.common import MemoryApi, add_store_options, open_memory

if TYPE_CHECKING:
    from tiers.memory import Memory
    from tiers.reports import IngestReport

# importers.FORMATS (a test keeps them equal): the readers load pydantic, which --help and the
# other commands need not wait for
FORMATS = ("auto", "memories", "locomo", "conversations", "transcript")

BATCH = 256  # memories per ingest call on a store opened here
SERVICE_BATCH = 1000  # ... and through the service (its client sends at most 500 per request)
PROGRESS_FROM = 200  # memories: shorter inputs get no progress bar
POLL_SECONDS = 0.5  # how often --wait asks the service what is still to embed
STALL_SECONDS = 60.0  # --wait gives up when nothing drained for this long


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "ingest",
        help="store memories from files (JSONL, LoCoMo JSON, chat transcripts)",
        description="Store memories. Formats: memories (JSON Lines of Memory objects, or a JSON "
        "array), locomo (LoCoMo JSON), conversations (the evaluation JSONL), transcript "
        "('Speaker: text' lines, '# session name 2026-03-02 09:00' headers).",
    )
    parser.add_argument("files", nargs="+", type=Path, help="files to read")
    parser.add_argument("--format", choices=FORMATS, default="auto", help="default: from content")
    parser.add_argument("--session", help="the session of a transcript without headers")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--wait",
        action="store_true",
        help="return only once every memory is embedded (a progress bar while they drain)",
    )
    add_store_options(parser)
    parser.set_defaults(handler=_ingest)


@dataclass
class _Totals:
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    rejected: int = 0
    private: int = 0
    secrets: int = 0

    def add(self, report: IngestReport) -> None:
        self.added += report.added
        self.replaced += report.replaced
        self.unchanged += report.unchanged
        self.rejected += report.rejected
        self.private += report.private
        self.secrets += report.secrets


def _ingest(args: argparse.Namespace) -> int:
    from disclosure.faces.cli.importers import read_memories

    started = time.perf_counter()
    loaded: list[tuple[Path, str, list[Memory]]] = []
    for path in args.files:  # read everything first: a bad file stores nothing
        memories, kind = read_memories(path, format=args.format, session=args.session)
        loaded.append((path, kind, memories))
    count = sum(len(m) for _, _, m in loaded)
    totals = _Totals()
    with open_memory(args) as (memory, namespace, address):
        step = BATCH if address is None else SERVICE_BATCH
        with _progress(count, disabled=args.no_progress) as bar:
            for _, _, memories in loaded:
                for start in range(0, len(memories), step):
                    batch = memories[start : start + step]
                    totals.add(memory.ingest(batch))
                    bar.update(len(batch))
        pending = _pending(memory)
        if args.wait and pending:
            pending = _drain(memory, pending, disabled=args.no_progress)
    sources = ", ".join(f"{p.name} ({kind}, {len(m)})" for p, kind, m in loaded)
    print(
        f"ingested {count} memories from {sources} into {namespace}: {totals.added} added, "
        f"{totals.replaced} replaced, {totals.unchanged} unchanged, {totals.rejected} rejected, "
        f"{totals.private} entirely private (not stored), "
        f"{totals.secrets} secrets redacted; "
        f"{pending} waiting for embedding ({time.perf_counter() - started:.1f} s)"
    )
    return 1 if totals.rejected else 0


def _pending(memory: MemoryApi) -> int:
    return int(memory.stats()["store"]["pending"])


def _drain(memory: MemoryApi, pending: int, *, disabled: bool) -> int:
    """Wait until the embeddings queued for the warm index drain, with a progress bar; what is
    left when they stop draining (a failing embedder: they stay queued, retried later)."""
    flush = getattr(getattr(memory, "store", None), "flush", None)
    if flush is not None:  # a store opened here: drain it in this process
        left: int = flush(timeout=STALL_SECONDS)
        return left
    stalled_since = time.monotonic()
    with _progress(pending, disabled=disabled, unit="embedding") as bar:
        while pending:
            time.sleep(POLL_SECONDS)
            now = _pending(memory)
            if now < pending:
                bar.update(pending - now)
                stalled_since = time.monotonic()
            elif time.monotonic() - stalled_since > STALL_SECONDS:
                break
            pending = now
    return pending


def _progress(total: int, *, disabled: bool, unit: str = "memory") -> Any:
    from tqdm import tqdm

    off = True if disabled or total < PROGRESS_FROM else None  # None: only on a terminal
    return tqdm(total=total, unit=unit, disable=off, file=sys.stderr, leave=False)

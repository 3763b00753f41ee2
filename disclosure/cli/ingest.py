"""``disclosure ingest FILE...``: memories from JSONL/JSON, LoCoMo JSON or a chat transcript."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disclosure.cli.common import add_store_options, open_store
from disclosure.cli.importers import FORMATS, read_memories
from tiers.memory import Memory
from tiers.reports import IngestReport

BATCH = 256
PROGRESS_FROM = 200  # memories: shorter inputs get no progress bar


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
    add_store_options(parser)
    parser.set_defaults(handler=_ingest)


@dataclass
class _Totals:
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    rejected: int = 0
    private: int = 0

    def add(self, report: IngestReport) -> None:
        self.added += report.added
        self.replaced += report.replaced
        self.unchanged += report.unchanged
        self.rejected += report.rejected
        self.private += report.private


def _ingest(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    loaded: list[tuple[Path, str, list[Memory]]] = []
    for path in args.files:  # read everything first: a bad file stores nothing
        memories, kind = read_memories(path, format=args.format, session=args.session)
        loaded.append((path, kind, memories))
    count = sum(len(m) for _, _, m in loaded)
    totals = _Totals()
    with open_store(args) as (controller, namespace):
        with _progress(count, disabled=args.no_progress) as bar:
            for _, _, memories in loaded:
                for start in range(0, len(memories), BATCH):
                    batch = memories[start : start + BATCH]
                    totals.add(controller.ingest(batch))
                    bar.update(len(batch))
        pending = controller.store.pending()
    sources = ", ".join(f"{p.name} ({kind}, {len(m)})" for p, kind, m in loaded)
    print(
        f"ingested {count} memories from {sources} into {namespace}: {totals.added} added, "
        f"{totals.replaced} replaced, {totals.unchanged} unchanged, {totals.rejected} rejected, "
        f"{totals.private} entirely private (not stored); "
        f"{pending} waiting for embedding ({time.perf_counter() - started:.1f} s)"
    )
    return 1 if totals.rejected else 0


def _progress(total: int, *, disabled: bool) -> Any:
    from tqdm import tqdm

    off = True if disabled or total < PROGRESS_FROM else None  # None: only on a terminal
    return tqdm(total=total, unit="memory", disable=off, file=sys.stderr, leave=False)

"""``disclosure import --format claude-code|chatgpt``: history a user already has, stored through
the root's service when one runs (else in the store opened here), in batches.

A transcript's sessions go to their projects' namespaces (the one the hooks use for the
directory the agent ran in: :func:`~disclosure.faces.agent.project.project_namespace`) unless
the namespace options name one; a ChatGPT export goes to the namespace the options name.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from disclosure.faces.cli.common import describe, open_memory
from disclosure.storage.namespaces import NAMESPACE_PARTS

BATCH = 500


def import_history(args: argparse.Namespace, kind: str) -> int:
    from disclosure.faces.agent.history import read_history
    from disclosure.faces.agent.project import project_namespace

    started = time.perf_counter()
    history = read_history(args.file, kind)  # every file checked first: a bad one stores nothing
    if args.merge:
        print("disclosure: note: --merge is for exports; history is always merged by id")
    named = any(getattr(args, part) for part in NAMESPACE_PARTS)
    rejected = 0
    for project, memories in history.by_project.items():
        if not named and project is not None:
            args.user = project_namespace(Path(project))["user"]
        with open_memory(args) as (memory, namespace, _):
            totals = [0, 0, 0, 0, 0]
            for start in range(0, len(memories), BATCH):
                report = memory.ingest(memories[start : start + BATCH])
                counts = (report.added, report.replaced, report.unchanged, report.rejected,
                          report.secrets)  # fmt: skip
                totals = [t + c for t, c in zip(totals, counts, strict=True)]
        rejected += totals[3]
        where = f" (project {project})" if project else ""
        print(
            f"imported {len(memories)} memories into {describe(namespace)}{where}: "
            f"{totals[0]} added, {totals[1]} replaced, {totals[2]} unchanged, "
            f"{totals[3]} rejected; {totals[4]} secrets redacted"
        )
    print(
        f"{kind}: {history.count} memories from {len(history.sessions)} sessions in "
        f"{history.files} files ({time.perf_counter() - started:.1f} s)"
    )
    return 1 if rejected else 0

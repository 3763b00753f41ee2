"""``disclosure doctor [--repair]``: check every namespace under a root, repair what is safe.

Checked per namespace: its marker file; the archive (present, not empty while a warm index
exists, passing SQLite's ``quick_check``); the side files (usage history, disk caches, the warm
usage log), which can be rebuilt; and damaged copies set aside earlier. ``--repair`` moves aside
damaged side files (they are rebuilt on the next open) and an orphaned warm index (vectors
whose archive is gone); a damaged archive is never touched: restore it from a backup. Each
namespace is locked while it is repaired, so a running server is never repaired under.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

from disclosure.faces.cli.common import root_of
from disclosure.storage.namespaces import MARKER_FILE, NAMESPACES_DIR
from disclosure.storage.sidefiles import move_aside, sqlite_is_sound
from tiers.erasure import CHROMA_FILE
from tiers.errors import StorageError
from tiers.locking import DirectoryLock
from tiers.schema import ARCHIVE_FILE

_CACHES = ("index", "timeline", "detail", "generations")


@dataclass
class _Report:
    directory: Path
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("doctor", help="check the stores under a data directory; --repair")
    parser.add_argument(
        "--repair", action="store_true", help="move damaged side files and orphaned indexes aside"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="the root data directory (default: as for the other commands)"
    )
    parser.set_defaults(handler=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    base = root_of(args) / NAMESPACES_DIR
    directories = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    reports = [_check(d, repair=args.repair) for d in directories]
    for report in reports:
        state = "ok" if not report.problems else f"{len(report.problems)} problem(s)"
        print(f"{report.directory.name}: {state}")
        for line in report.repaired:
            print(f"  repaired: {line}")
        for line in report.problems:
            print(f"  problem: {line}")
    left = sum(len(r.problems) for r in reports)
    print(f"{len(reports)} namespaces checked under {base}; {left} problem(s) left")
    return 1 if left else 0


def _check(directory: Path, *, repair: bool) -> _Report:
    report = _Report(directory)
    lock = None
    if repair:
        try:
            lock = DirectoryLock(directory)
        except StorageError as exc:
            report.problems.append(f"in use, not repaired ({exc})")
            repair = False
    try:
        _marker(report)
        _archive(report, repair=repair)
        _side_files(report, repair=repair)
        leftovers = sorted(p.name for p in directory.rglob("*.damaged-*"))
        if leftovers:
            report.problems.append(
                f"damaged copies set aside earlier (they may hold forgotten text; delete them "
                f"once you no longer need them): {', '.join(leftovers[:5])}"
            )
    finally:
        if lock is not None:
            lock.release()
    return report


def _marker(report: _Report) -> None:
    try:
        parts = json.loads((report.directory / MARKER_FILE).read_text(encoding="utf-8"))["parts"]
        if not isinstance(parts, dict):
            raise ValueError("no parts")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.problems.append(f"{MARKER_FILE} missing or unreadable ({exc})")


def _archive(report: _Report, *, repair: bool) -> None:
    archive = report.directory / ARCHIVE_FILE
    warm = report.directory / "warm"
    vectors = warm / CHROMA_FILE
    empty = not archive.is_file() or archive.stat().st_size == 0
    if empty and vectors.is_file() and vectors.stat().st_size > 0:
        if repair:
            aside = move_aside(warm, "its archive is missing or empty")
            report.repaired.append(f"orphaned warm index moved to {aside.name}")
        else:
            report.problems.append(
                f"{ARCHIVE_FILE} is missing or empty beside a warm index: restore it from a "
                "backup, or run with --repair to set the orphaned index aside"
            )
        return
    if not empty:
        problem = sqlite_is_sound(archive)
        if problem:
            report.problems.append(
                f"{ARCHIVE_FILE} is damaged ({problem}); restore it from a backup"
            )


def _side_files(report: _Report, *, repair: bool) -> None:
    directory = report.directory
    candidates = [directory / "usage.sqlite3", directory / "scan_verdicts.sqlite3"]
    candidates += [directory / "cache" / name / "cache.db" for name in _CACHES]
    candidates += sorted((directory / "warm").glob("warm_usage.*.sqlite3"))
    for path in candidates:
        if not path.is_file():
            continue
        problem = sqlite_is_sound(path)
        if problem is None:
            continue
        target = path.parent if path.name == "cache.db" else path
        where = target.relative_to(directory)
        if repair:
            aside = move_aside(target, problem)
            report.repaired.append(f"{where} was damaged ({problem}); moved to {aside.name}")
        else:
            report.problems.append(f"{where} is damaged ({problem}); --repair rebuilds it")

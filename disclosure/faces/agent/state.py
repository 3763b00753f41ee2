"""The hooks' own small files under ``ROOT/agent/claude-code/``: what one hook leaves for the
next, and what waits for a service that was not there. Standard library only.

- ``<namespace key>.state.json``: per session, the ids of its last prompts, reply and todo list
  (the next session's start shows them), and the prompt's disclosure id (the end of the turn
  gives the reply's feedback on it). Ids and times only: no memory text.
- ``spool/<namespace key>/<hash>.json``: a memory the service could not take (down, still
  starting, too slow), one file each, its secrets already replaced by markers (the hooks do
  it before they spool); the next hook that reaches the service hands them over and removes
  them. Readable by the owner only.

Every write goes to a temporary file renamed into place, so a file is whole or absent, never
half-written (a hook stopped in the middle leaves at most a stray temporary file, removed later).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["HookState", "Spool"]

MAX_SESSIONS = 32  # sessions whose records the state keeps, the most recent
MAX_SPOOLED = 2000  # memories the spool holds at most (the oldest make room)
STALE_TEMPORARY_SECONDS = 300.0


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path`` whole, or nothing (owner-only permissions)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def locked(path: Path, *, wait: bool = True) -> Iterator[bool]:
    """An exclusive lock on ``path`` while the block runs; yields False (and holds nothing)
    when ``wait`` is off and another process holds it."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


class HookState:
    """Per-session records of one namespace, shared by the hooks of every session."""

    def __init__(self, home: Path, key: str) -> None:
        self.path = home / f"{key}.state.json"
        self._lock = home / f"{key}.state.lock"

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {"sessions": {}}
        if not isinstance(data, dict) or not isinstance(data.get("sessions"), dict):
            return {"sessions": {}}
        return data

    def update(self, session_id: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the session's record, under the lock, and write it back."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self._lock):
            data = self.read()
            sessions: dict[str, Any] = data["sessions"]
            record = sessions.get(session_id)
            record = record if isinstance(record, dict) else {}
            change(record)
            record["updated"] = time.time()
            sessions[session_id] = record
            for old in sorted(sessions, key=lambda s: _updated(sessions[s]))[:-MAX_SESSIONS]:
                del sessions[old]
            write_atomically(self.path, json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def session(self, session_id: str) -> dict[str, Any]:
        found = self.read()["sessions"].get(session_id)
        return found if isinstance(found, dict) else {}

    def last_other_session(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        """The most recently updated session other than ``session_id`` that stored a turn."""
        sessions = self.read()["sessions"]
        done = [
            (sid, record)
            for sid, record in sessions.items()
            if sid != session_id and isinstance(record, dict) and record.get("prompts")
        ]
        return max(done, key=lambda item: _updated(item[1]), default=None)


def _updated(record: Any) -> float:
    value = record.get("updated") if isinstance(record, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


class Spool:
    """Memories waiting for the service, one file each."""

    def __init__(self, home: Path, key: str) -> None:
        self.directory = home / "spool" / key
        self._lock = home / "spool" / f"{key}.lock"

    def put(self, memories: list[dict[str, Any]]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        for memory in memories:
            name = hashlib.sha256(str(memory["id"]).encode("utf-8")).hexdigest()[:32]
            data = json.dumps(memory, ensure_ascii=False).encode("utf-8")
            write_atomically(self.directory / f"{name}.json", data)
        self._trim()

    def pending(self) -> bool:
        try:
            return any(path.suffix == ".json" for path in self.directory.iterdir())
        except OSError:
            return False

    def flush(self, send: Callable[[list[dict[str, Any]]], None], *, batch: int = 100) -> int:
        """Hand the spooled memories to ``send`` (which raises when the service does not take
        them) and remove those it took; how many. Another hook flushing meanwhile: 0."""
        if not self.pending():
            return 0
        done = 0
        with locked(self._lock, wait=False) as mine:
            if not mine:
                return 0
            files = self._files()
            for start in range(0, len(files), batch):
                chunk = files[start : start + batch]
                memories = [m for m in (_load(p) for p in chunk) if m is not None]
                if memories:
                    send(memories)
                for path in chunk:
                    path.unlink(missing_ok=True)
                done += len(memories)
        return done

    def _files(self) -> list[Path]:
        found = []
        now = time.time()
        for path in self.directory.iterdir():
            if path.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > STALE_TEMPORARY_SECONDS:
                        path.unlink()  # left by a hook stopped mid-write
            elif path.suffix == ".json":
                found.append(path)
        return sorted(found, key=_mtime)

    def _trim(self) -> None:
        files = self._files()
        for path in files[: max(0, len(files) - MAX_SPOOLED)]:
            path.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        path.unlink(missing_ok=True)  # unreadable: it cannot be sent either
        return None
    return data if isinstance(data, dict) and "id" in data and "content" in data else None

"""One store per data directory: an advisory lock on ``data_dir/.lock``.

Two stores writing one directory would each keep their own hot set and outbox worker and
disagree about the archive; the second one is refused instead. The operating system drops the
lock when its process dies, so a killed process never leaves the directory locked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from tiers.errors import StorageError

LOCK_FILE = ".lock"


class DirectoryLock:
    """Holds an exclusive lock on ``data_dir`` until :meth:`release`."""

    def __init__(self, data_dir: Path) -> None:
        self._file: IO[str] | None = None
        if not self._take(data_dir):
            raise StorageError(
                f"{data_dir}: the data directory is in use by another store (this process or "
                f"another); close that one first"
            )

    @classmethod
    def attempt(cls, data_dir: Path) -> DirectoryLock | None:
        """The lock on ``data_dir`` if it is free now, else None (held by another store); a
        directory that cannot be used at all raises StorageError."""
        lock = cls.__new__(cls)
        lock._file = None
        return lock if lock._take(data_dir) else None

    def _take(self, data_dir: Path) -> bool:
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            self._file = (data_dir / LOCK_FILE).open("a+", encoding="utf-8")
        except OSError as exc:
            raise StorageError(f"{data_dir}: cannot use the data directory: {exc}") from None
        if sys.platform == "win32":  # pragma: no cover - no advisory locks there
            return True
        import fcntl

        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            self._file = None
            return False
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{os.getpid()}\n")
        self._file.flush()
        return True

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops the lock
            self._file = None

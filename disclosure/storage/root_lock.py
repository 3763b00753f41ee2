"""One server at a time for a root whose stores keep single-writer state in it.

A namespace's store locks its data directory when it keeps state there that one process must
own: a SQLite archive (embedded mode) or an embedded Chroma. Two servers on such a root would
each open namespaces the other then cannot: the second would answer 503 for every namespace the
first has open, for as long as it has it open. So a server of such a root (``disclosure serve``)
first takes ``ROOT/serving/.lock`` for its whole life, and a second one is refused when it starts,
with one line saying why and what to do instead.

With the archive in PostgreSQL and the vectors on a Chroma server (or no vectors) a store keeps
nothing in its directory but the namespace's marker (its caches live in the process's memory), so
no lock is taken and any number of replicas may serve one root, on one host or several.
"""

from __future__ import annotations

from pathlib import Path

from tiers.errors import StorageError
from tiers.locking import LOCK_FILE, DirectoryLock

__all__ = ["SERVING_DIR", "RootLock"]

SERVING_DIR = "serving"


class RootLock:
    """Held until :meth:`release`; a second one for the same root raises StorageError naming
    the process that holds it and ``why`` (what single-writer state the stores keep)."""

    def __init__(self, root: Path, why: str) -> None:
        path = Path(root) / SERVING_DIR
        self._lock = DirectoryLock.attempt(path)
        if self._lock is None:
            raise StorageError(
                f"{root} is already served by another process{_holder(path)}, and with "
                f"{why} its stores keep state there that one process must own; give this "
                "server its own --data-dir, or keep the archive and the vectors on servers "
                "(--database-url and --chroma-url) to run replicas"
            )

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _holder(path: Path) -> str:
    try:
        pid = (path / LOCK_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""

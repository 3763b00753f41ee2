"""Kept verdicts of the prompt-injection scan: each memory text is scanned once, not at its first
showing in every process.

The formatters scan every piece of memory text before showing it (:mod:`safeguards.filter`), a
few tenths of a millisecond per text: over 10k memories, where most memories a query shows are
shown for the first time, that was most of a disclose's rendering. This store keeps, in
``scan_verdicts.sqlite3`` of an embedded namespace's data directory, a digest (16-byte BLAKE2b)
of each memory text found clean under :data:`safeguards.filter.FILTER_VERSION`; rendering asks it
before scanning a text the process has not seen (:func:`safeguards.filter.known_verdicts`).

- Filled after ingest (the content and summary of each memory written) and after the drain
  worker's enrichment (new summaries), by a background thread, so ingest does not wait for the
  scan; and after a disclose, for the memories it showed that were not known yet.
- Only clean verdicts are kept: a flagged text is scanned again when a process first shows it
  (its defanged form and findings are needed). A verdict is a digest of the exact text and the
  filter it was scanned by: an edited text, or any change to the filter (its rules, classifier,
  weights or Python's Unicode tables), finds nothing here and is scanned; a file kept under
  another filter version is emptied when opened.
- A forget deletes the digests of the removed memories' texts (and keeps none it was about to
  write for them); only memory texts are kept, never a query or a generated summary.
- With a PostgreSQL archive nothing is kept (a file of one replica would outlive a forget made
  through another): texts are scanned at their first showing per process, as before.

The file can be deleted at any time (the texts are scanned again, on demand); a damaged one is
moved aside and started afresh.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from disclosure.storage.sidefiles import open_or_rebuild
from disclosure.storage.sidetables import SqliteTables
from safeguards.filter import FILTER_VERSION, is_clean, neutralize, strip_private
from tiers import Memory
from tiers.errors import StorageError

log = logging.getLogger(__name__)

FILE_NAME = "scan_verdicts.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clean (digest BLOB PRIMARY KEY) WITHOUT ROWID;
"""
_CHUNK = 500  # digests per statement (SQLite's parameter limit is far above)

#: Which of some memory ids the store still holds.
StillStored = Callable[[Sequence[str]], Iterable[str]]


def digest(text: str) -> bytes:
    """The key of ``text``'s verdict."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def texts_of(memory: Memory) -> list[str]:
    """The texts of ``memory`` whose verdicts are kept: its content and summary as the
    formatters scan them (private spans removed)."""
    texts = [strip_private(memory.content)]
    if memory.summary:
        texts.append(strip_private(memory.summary))
    return [t for t in dict.fromkeys(texts) if t]


class ScanVerdicts:
    """The kept clean verdicts of one data directory (see the module). Thread-safe."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / FILE_NAME
        self._tables = open_or_rebuild(
            self.path, lambda: SqliteTables(self.path, SCHEMA, "injection scan verdicts")
        )
        self._lock = threading.Lock()
        self._forgotten: set[bytes] = set()  # digests a forget removed while a write was queued
        try:
            self._check_version()
        except BaseException:
            self._tables.close()
            raise

    def _check_version(self) -> None:
        rows = self._tables.rows("SELECT value FROM meta WHERE key = 'filter'")
        if rows and rows[0][0] == FILTER_VERSION:
            return
        with self._tables.write() as conn:
            conn.execute("DELETE FROM clean")
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('filter', ?)", (FILTER_VERSION,)
            )
        if rows:
            log.info("%s: the injection filter changed; kept verdicts dropped", self.path)
            self._tables.erase(["clean"])

    def known_clean(self, text: str) -> bool:
        """Whether ``text`` was found clean by this filter before (safeguards.filter.Verdicts)."""
        try:
            rows = self._tables.rows("SELECT 1 FROM clean WHERE digest = ?", (digest(text),))
        except StorageError as exc:  # a verdict is an optimisation: scan instead
            log.debug("reading a scan verdict failed: %s", exc)
            return False
        return bool(rows)

    def count(self) -> int:
        return int(self._tables.rows("SELECT count(*) FROM clean")[0][0])

    def record(
        self,
        memories: Sequence[Memory],
        still_stored: StillStored | None = None,
        *,
        shown: bool = False,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Scan the texts of ``memories`` not known yet and keep the clean verdicts; returns
        how many were added. ``shown``: the memories were just rendered, so the process's scan
        cache holds their verdicts (asked, not scanned again); otherwise each text is scanned
        afresh without filling that cache. ``still_stored(ids)``: which of the ids the store
        still holds, asked just before writing, so a memory forgotten meanwhile leaves
        nothing here. ``stop()`` true: scan no further, keep what was found so far."""
        wanted: dict[bytes, tuple[str, str]] = {}
        for memory in memories:
            for text in texts_of(memory):
                wanted.setdefault(digest(text), (memory.id, text))
        known = self._known(list(wanted))
        found = []
        for key, (memory_id, text) in wanted.items():
            if stop is not None and stop():
                break
            if key not in known and (not neutralize(text)[1] if shown else is_clean(text)):
                found.append((key, memory_id))
        if not found:
            return 0
        with self._lock:
            stored = set(still_stored([i for _, i in found])) if still_stored else None
            rows = [
                (key,)
                for key, memory_id in found
                if key not in self._forgotten and (stored is None or memory_id in stored)
            ]
            self._forgotten.clear()
            if rows:
                with self._tables.write() as conn:
                    conn.executemany("INSERT OR IGNORE INTO clean (digest) VALUES (?)", rows)
        return len(rows)

    def forget(self, memories: Iterable[Memory]) -> None:
        """Drop the verdicts of the removed memories' texts (the raw and the shown forms)."""
        keys = {digest(t) for m in memories for t in (*texts_of(m), m.content, m.summary or "")}
        if not keys:
            return
        with self._lock:
            self._forgotten |= keys
            ordered = sorted(keys)
            with self._tables.write() as conn:
                for start in range(0, len(ordered), _CHUNK):
                    chunk = ordered[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    conn.execute(f"DELETE FROM clean WHERE digest IN ({marks})", chunk)
            self._tables.erase(["clean"])

    def for_answer(self, memories: Iterable[Memory]) -> AnswerVerdicts:
        """The verdicts one answer asks for, those of ``memories`` read at once."""
        texts = {digest(t): t for m in memories for t in texts_of(m)}
        try:
            known = self._known(list(texts))
        except StorageError as exc:
            log.debug("reading scan verdicts failed: %s", exc)
            known = set()
        return AnswerVerdicts(self, {texts[k] for k in known})

    def close(self) -> None:
        self._tables.close()

    def _known(self, keys: Sequence[bytes]) -> set[bytes]:
        known: set[bytes] = set()
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = self._tables.rows(f"SELECT digest FROM clean WHERE digest IN ({marks})", chunk)
            known.update(bytes(r[0]) for r in rows)
        return known


class AnswerVerdicts:
    """What rendering one answer asks (safeguards.filter.Verdicts): the verdicts read up front
    answer first, then the file; ``missed`` says whether a text had none (so it was scanned,
    and the answer's memories are worth recording)."""

    def __init__(self, verdicts: ScanVerdicts, known: set[str]) -> None:
        self._verdicts = verdicts
        self._known = known
        self.missed = False

    def known_clean(self, text: str) -> bool:
        if text in self._known:
            return True
        if self._verdicts.known_clean(text):
            return True
        self.missed = True
        return False

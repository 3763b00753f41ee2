"""Who speaks in the stored conversations, and which of them a query names.

Kept in a small JSON file beside the store (names only grow; a forgotten speaker costs nothing
but a prior on a name nobody uses). Rebuilt from the archive when the file is missing.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from tiers import TieredStore

_MIN_NAME = 2


class Participants:
    """The set of speaker names, persisted, with a whole-word matcher over queries."""

    def __init__(self, path: Path, store: TieredStore) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._names: set[str] = self._load(store)
        self._pattern: re.Pattern[str] | None = None

    def add(self, speakers: Iterable[str | None]) -> None:
        new = {s.strip() for s in speakers if s and len(s.strip()) >= _MIN_NAME} - self._names
        if not new:
            return
        with self._lock:
            self._names |= new
            self._pattern = None
            self._save()

    def named_in(self, query: str) -> set[str]:
        """The participants (as stored) that ``query`` names, by full name or first name."""
        with self._lock:
            if not self._names:
                return set()
            if self._pattern is None:
                forms = {form for name in self._names for form in _forms(name)}
                alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                self._pattern = re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)
            said = {m.group(0).casefold() for m in self._pattern.finditer(query)}
            return {n for n in self._names if any(f.casefold() in said for f in _forms(n))}

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def _load(self, store: TieredStore) -> set[str]:
        try:
            return set(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            names = {m.speaker for m in store.iter_memories() if m.speaker}
            self._names = names
            self._save()
            return names
        except (OSError, ValueError):
            return set()

    def _save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(sorted(self._names)), encoding="utf-8")
        temporary.replace(self.path)


def _forms(name: str) -> set[str]:
    first = name.split(maxsplit=1)[0]
    return {name, first} if len(first) >= _MIN_NAME else {name}

"""Warm tiers that fail on purpose (the only fakes here: they simulate a dead backend)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tiers.errors import TierUnavailableError
from tiers.memory import Memory, ScoredMemory


class DeadEmbedder:
    """An embedder whose model cannot run (raises on every call)."""

    name = "dead-embedder"
    dimension = 4

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        raise TierUnavailableError("embedder down (simulated)")


class DownWarm:
    """A warm tier whose backend is unreachable: every write and search raises."""

    name = "warm"

    def __init__(self) -> None:
        self.embedder = DeadEmbedder()
        self.calls = 0
        self._lock = threading.Lock()

    def _fail(self) -> None:
        with self._lock:
            self.calls += 1
        raise TierUnavailableError("chroma server unreachable (simulated)")

    def add(self, memories: Sequence[Memory], *, contexts: Mapping[str, str] | None = None) -> None:
        self._fail()

    def forget(self, ids: Sequence[str]) -> int:
        self._fail()
        return 0

    def search(self, query: str, k: int) -> list[ScoredMemory]:
        self._fail()
        return []

    def touch(self, ids: Sequence[str]) -> None:
        self._fail()

    def get(self, ids: Sequence[str]) -> list[Memory]:
        return []

    def count(self) -> int:
        return 0

    def contains(self, ids: Sequence[str]) -> set[str]:
        return set()

    def evict_least_used(self, n: int) -> list[str]:
        return []

    def close(self) -> None:
        return None

"""What one disclosure records on its way: how long each stage took, and what went wrong.

A :class:`Trace` is made per call and handed to the stages that add to it (the gatherer times
each tier's search and reports a tier that failed); the result carries its ``timings_ms`` and
``warnings``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Trace:
    """One call's stage timings in milliseconds and its warnings; not shared between calls."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.warnings: list[str] = []
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as the stage ``name``."""
        started = time.perf_counter()
        yield
        self.record(name, time.perf_counter() - started)

    def record(self, name: str, seconds: float) -> None:
        """A stage timed elsewhere (a search run in a worker thread)."""
        self.timings[name] = milliseconds(seconds)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def finish(self) -> dict[str, float]:
        """The timings, with ``total`` since the trace began."""
        self.record("total", time.perf_counter() - self._started)
        return self.timings


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 3)

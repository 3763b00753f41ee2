"""What one disclosure records on its way: how long each stage took, and what went wrong.

A :class:`Trace` is made per call and handed to the stages that add to it (the gatherer times
each tier's search and reports a tier that failed); the result carries its ``timings_ms`` and
``warnings``. When OpenTelemetry is installed (the ``opentelemetry`` extra), every stage is
also a span, ``disclosure.<stage>``, under whatever span is current (a service's request span):
the application configures the tracer provider and exporter; without one the spans cost
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

SPAN_PREFIX = "disclosure."


class Trace:
    """One call's stage timings in milliseconds and its warnings; not shared between calls."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.warnings: list[str] = []
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as the stage ``name``."""
        tracer = _tracer()
        started = time.perf_counter()
        if tracer is None:
            yield
        else:
            with tracer.start_as_current_span(SPAN_PREFIX + name):
                yield
        self.timings[name] = milliseconds(time.perf_counter() - started)

    def record(self, name: str, seconds: float) -> None:
        """A stage timed elsewhere (a search run in a worker thread): its span ends now."""
        self.timings[name] = milliseconds(seconds)
        tracer = _tracer()
        if tracer is not None:
            end = time.time_ns()
            span = tracer.start_span(SPAN_PREFIX + name, start_time=end - int(seconds * 1e9))
            span.end(end_time=end)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def finish(self) -> dict[str, float]:
        """The timings, with ``total`` since the trace began."""
        self.timings["total"] = milliseconds(time.perf_counter() - self._started)
        return self.timings


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 3)


@cache
def _tracer() -> Any:
    """OpenTelemetry's tracer for this library, or None when it is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("tiered-disclosure")

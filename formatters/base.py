"""The disclosure layers (seed 000): what a formatter can render for one item."""

from __future__ import annotations

from enum import StrEnum


class Layer(StrEnum):
    """Layer 1 an index line, layer 2 a timeline around a hit, layer 3 the full detail."""

    INDEX = "index"
    TIMELINE = "timeline"
    DETAIL = "detail"

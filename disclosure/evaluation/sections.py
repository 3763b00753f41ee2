"""Optional report sections (the adaptive budget, the analyzer against the oracle level).

A section is plain data for ``results.json`` plus a few blocks (headings, paragraphs, tables)
that the report renders to markdown and HTML with everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Block = tuple[str, Any]  # ("h2", text) | ("p", text) | ("warn", text) | ("table", Table) | ...


@dataclass
class Table:
    """A table: a header row and rows of cells, all text."""

    header: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """One optional part of a report: its JSON (under ``key``) and its blocks."""

    key: str
    blocks: list[Block] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def fmt(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals, or ``-``."""
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_int(value: float | None) -> str:
    """A count with thousands separators, or ``-``."""
    return "-" if value is None else f"{value:,.0f}"


def share(part: int, whole: int) -> float | None:
    """``part / whole``, or None when there is no whole."""
    return part / whole if whole else None

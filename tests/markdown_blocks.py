"""The README and the pages under docs/, read as the tests need them: fenced code blocks (with the
``not-run`` note a block may carry), inline code spans, sections, tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,})(?P<info>[^`]*)$")
_NOT_RUN = re.compile(r"^<!-- not-run: (?P<reason>\S.*?) -->$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language (the info string's first word, or ``""``), its text,
    where it starts, and why it is not run (``None``: it runs)."""

    path: Path
    line: int
    language: str
    code: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """The README and every Markdown page of the docs, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def _fences(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, closing line, info string) of each top-level fence, 0-based; a fence closes
    at a line of backticks at least as long as the one that opened it."""
    found = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening:
            fence = opening["fence"]
            end = next(
                (j for j in range(i + 1, len(lines))
                 if set(lines[j].strip()) == {"`"} and len(lines[j].strip()) >= len(fence)),
                None,
            )  # fmt: skip
            if end is None:
                raise ValueError(f"line {i + 1}: a code block that is never closed")
            found.append((i, end, opening["info"]))
            i = end
        i += 1
    return found


def blocks(path: Path) -> list[Block]:
    """The top-level fenced blocks of ``path`` (a block inside a longer fence is text of that
    fence). A ``<!-- not-run: REASON -->`` line right before a fence marks it; one anywhere
    else is an error, so a note cannot drift away from its block."""
    lines = path.read_text(encoding="utf-8").split("\n")
    fences = _fences(lines)
    starts = {start for start, _, _ in fences}
    inside = {i for start, end, _ in fences for i in range(start, end + 1)}
    for i, line in enumerate(lines):
        if _NOT_RUN.match(line) and i not in inside and i + 1 not in starts:
            raise ValueError(f"{path}:{i + 1}: a not-run note must stand right before a block")
    found = []
    for start, end, info in fences:
        note = _NOT_RUN.match(lines[start - 1]) if start else None
        words = info.split()
        found.append(
            Block(
                path=path,
                line=start + 1,
                language=words[0] if words else "",
                code="\n".join(lines[start + 1 : end]) + "\n",
                not_run=note["reason"] if note else None,
            )
        )
    return found


def prose(path: Path) -> str:
    """The text of ``path`` without its fenced blocks (fences included)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    inside = {i for start, end, _ in _fences(lines) for i in range(start, end + 1)}
    return "\n".join(line for i, line in enumerate(lines) if i not in inside)


def code_spans(text: str) -> list[str]:
    """Every inline code span (``` `x` ``` or ``` ``x`` ```), its text stripped."""
    return [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", text, flags=re.S)]


def section(path: Path, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of that level or above."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^#{{1,2}} |\Z)", text, re.M | re.S)
    if match is None:
        raise LookupError(f"{path.name} has no section '## {heading}'")
    return match.group(1)


def tables(text: str) -> dict[str, list[str]]:
    """Markdown tables by the text of their first header cell: their lines, header included."""
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"(?:^\|.*\|\n)+", text, flags=re.M):
        lines = match.group(0).splitlines()
        found[lines[0].strip("|").split("|")[0].strip()] = lines
    return found

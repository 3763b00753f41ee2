"""The index table and the detail blocks, in the controller's priority order.

``index`` (layer 1): index-layer items as rows of one table, ``| ref | date | summary | score |``;
a timeline item gets a ``### Around [mem:x] · 10 Mar 2026`` section below the table (lines with
times, the hit marked ``→``); a detail item gets a detail block. An expanded item is not repeated
in the table.

``detail`` (layer 3): every item as a block, ``### [mem:x] · Dana · 10 Mar 2026 14:05 · session``,
then its full content, a metadata line (entities, metadata) and, when it came with neighbours,
one line per neighbour (``↑`` before it, ``↓`` after it: citation, speaker and summary), so a
reader can follow the conversation either way with ``show``.
"""

from __future__ import annotations

from formatters.base import Layer, RenderItem
from formatters.fields import (
    ELLIPSIS,
    Clean,
    age,
    clock,
    content_of,
    metadata_line,
    preview,
    short_date,
    speaker_of,
    summary_of,
)
from formatters.layout import Context, Entry, LayoutFormatter, Part, Section
from tiers.memory import Memory

FULL, CUT, PREVIEW, SUMMARY = 4.0, 3.0, 2.0, 1.0
_TABLE_HEAD = "| ref | date | summary | score |\n|---|---|---|---|"


def _ref(item: RenderItem) -> str:
    return f"[{item.citation}]" if item.citation else item.id


def _escape_cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


class _Blocks(LayoutFormatter):
    """Detail blocks and timeline sections shared by ``index`` and ``detail``."""

    def _detail(self, item: RenderItem, ctx: Context, text: Clean | None = None) -> Entry:
        memory = item.memory
        content = content_of(memory) if text is None else text
        section = Section(
            key=("detail", item.id),
            sort=(2, ctx.position(item)),
            head=f"### {_ref(item)} · {speaker_of(memory)} · {short_date(memory.timestamp)} "
            f"{clock(memory.timestamp)} · {memory.session_id}",
        )
        parts = [
            Part(
                section,
                "content",
                (0,),
                FULL if text is None else CUT,
                content.shown,
                memory.id,
                full=text is None,
                flagged=content.flagged,
            )
        ]
        meta = metadata_line(memory, ctx.options.meta_chars)
        if meta.text:
            parts.append(
                Part(section, "meta", (1,), FULL, meta.shown, memory.id, flagged=meta.flagged)
            )
        if text is None and item.layer is not Layer.INDEX:
            parts += self._relations(item, section)
        return Entry(item, tuple(parts), Layer.DETAIL, truncated=text is not None)

    @staticmethod
    def _relations(item: RenderItem, section: Section) -> list[Part]:
        parts = []
        seen = {item.id}
        for index, memory in enumerate(item.neighbours):
            if memory.id in seen or not content_of(memory).text.strip():
                continue
            seen.add(memory.id)
            before = (memory.timestamp, memory.id) < (item.memory.timestamp, item.id)
            summary = summary_of(memory)
            cite = item.neighbour_citation(index)
            ref = f"[{cite}] " if cite else ""
            line = f"{'↑' if before else '↓'} {ref}{speaker_of(memory)}: {summary.shown}"
            parts.append(
                Part(
                    section,
                    memory.id,
                    (2, memory.timestamp, memory.id),
                    SUMMARY,
                    line,
                    memory.id,
                    full=summary.text == content_of(memory).text,
                    flagged=summary.flagged,
                )
            )
        return parts

    def _timeline(self, item: RenderItem, ctx: Context) -> Entry | None:
        memory = item.memory
        section = Section(
            key=("timeline", item.id),
            sort=(1, ctx.position(item)),
            head=f"### Around {_ref(item)} · {short_date(memory.timestamp)}",
        )
        content = content_of(memory)
        parts = [self._line(section, memory, item.citation, content, hit=True)]
        seen = {item.id}
        for index, neighbour in enumerate(item.neighbours):
            shown = content_of(neighbour)
            if neighbour.id in seen or not shown.text.strip():
                continue
            seen.add(neighbour.id)
            cut = preview(shown.text, ctx.options.preview_chars)
            parts.append(
                self._line(
                    section,
                    neighbour,
                    item.neighbour_citation(index),
                    Clean(cut, shown.flagged),
                    full=cut == shown.text,
                )
            )
        if len(parts) == 1:
            return None
        return Entry(item, tuple(parts), Layer.TIMELINE)

    @staticmethod
    def _line(
        section: Section,
        memory: Memory,
        citation: str,
        text: Clean,
        *,
        hit: bool = False,
        full: bool = True,
    ) -> Part:
        cite = f"[{citation}] " if citation else ""
        line = f"{'→ ' if hit else ''}{clock(memory.timestamp)} {cite}{speaker_of(memory)}: "
        return Part(
            section,
            memory.id,
            (memory.timestamp, memory.id),
            FULL if full else PREVIEW,
            line + text.shown,
            memory.id,
            full=full,
            flagged=text.flagged,
        )

    def body(self, item: RenderItem, ctx: Context) -> str:
        return content_of(item.memory).text

    def cut_entry(self, item: RenderItem, ctx: Context, text: str) -> Entry:
        return self._detail(item, ctx, Clean(text, content_of(item.memory).flagged))


def _with_fallback(entry: Entry) -> list[Entry]:
    """A detail block, then the same block without its relation lines (if it has any)."""
    own = tuple(part for part in entry.parts if part.key in ("content", "meta"))
    return [entry, Entry(entry.item, own, entry.layer)] if len(own) < len(entry.parts) else [entry]


class IndexTable(_Blocks):
    """The index layer's table, with timeline and detail sections for expanded items."""

    name = "index"

    def entries(self, item: RenderItem, ctx: Context) -> list[Entry]:
        if not content_of(item.memory).text.strip():
            return []
        if item.layer is Layer.INDEX:
            return [self._row(item, ctx)]
        detail = _with_fallback(self._detail(item, ctx))
        timeline = self._timeline(item, ctx) if item.layer is Layer.TIMELINE else None
        return [timeline, *detail] if timeline else detail

    def _row(self, item: RenderItem, ctx: Context, text: Clean | None = None) -> Entry:
        memory = item.memory
        content = content_of(memory)
        summary = summary_of(memory) if text is None else text
        full = text is None and summary.text == content.text
        if text is None and not full:
            summary = Clean(f"{summary.text.removesuffix(ELLIPSIS)}{ELLIPSIS}", summary.flagged)
        when = (
            age(memory.timestamp, ctx.now)
            if ctx.now is not None and ctx.options.relative_ages
            else short_date(memory.timestamp)
        )
        row = (
            f"| {_ref(item)} | {when} | {_escape_cell(speaker_of(memory))}: "
            f"{_escape_cell(summary.shown)} | {item.score:.2f} |"
        )
        section = Section(key=("table",), sort=(0,), head=_TABLE_HEAD)
        rank = SUMMARY if text is None else SUMMARY - 0.5
        part = Part(
            section,
            item.id,
            (ctx.position(item),),
            rank,
            row,
            memory.id,
            full=full,
            flagged=summary.flagged,
        )
        return Entry(item, (part,), Layer.INDEX, truncated=text is not None)

    def body(self, item: RenderItem, ctx: Context) -> str:
        if item.layer is Layer.INDEX:
            return summary_of(item.memory).text
        return content_of(item.memory).text

    def cut_entry(self, item: RenderItem, ctx: Context, text: str) -> Entry:
        if item.layer is Layer.INDEX:
            return self._row(item, ctx, Clean(text, summary_of(item.memory).flagged))
        return super().cut_entry(item, ctx, text)


class Detail(_Blocks):
    """The detail layer's format: every item as a full detail block."""

    name = "detail"

    def entries(self, item: RenderItem, ctx: Context) -> list[Entry]:
        if not content_of(item.memory).text.strip():
            return []
        return _with_fallback(self._detail(item, ctx))

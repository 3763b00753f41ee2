"""Formatters that lay memories out in time: one header per day, one line per memory.

Whatever order the controller ranks items in (that order decides what gets in), the text reads
chronologically: a ``## 10 Mar 2026 (2d ago)`` header per day (printed once, whichever sessions
its lines come from), then one line per memory, ``[mem:a7Bc3x] Dana: ...``. Sharing the date
keeps the per-item overhead to the citation and the speaker. A memory brought by several items
(a neighbour of two hits) is shown once.

The four level formatters (minimal to comprehensive) and the timeline differ only in what a
line shows:

==========================  ================================  =====  =====  ===============
formatter                   an index-layer item shows          times  nbrs   detail adds
==========================  ================================  =====  =====  ===============
``summary_only``            its summary                        no     200ch  -
``summary_with_entities``   its summary and entities           no     200ch  -
``full_content``            its full content                   no     200ch  -
``full_with_context``       its full content                   no     full   metadata line
``timeline``                its summary                        yes    200ch  -
==========================  ================================  =====  =====  ===============

Timeline and detail items always show their full content; neighbours (shown for timeline and
detail items) are cut at ``preview_chars`` unless the formatter shows them in full; the hit a
timeline is drawn around is marked ``→``. A summary is shown only when it is meaningfully shorter
than the content (else the content is shown, so short memories always read in full).
"""

from __future__ import annotations

from datetime import date

from formatters.base import Layer, RenderItem
from formatters.fields import (
    ELLIPSIS,
    Clean,
    clean,
    clock,
    content_of,
    day_age,
    metadata_line,
    preview,
    short_date,
    speaker_of,
    summary_of,
)
from formatters.layout import Context, Entry, LayoutFormatter, Part, Section
from tiers.memory import Memory

CUT_SUMMARY, SUMMARY, PREVIEW, CUT, FULL = 0.5, 1.0, 2.0, 3.0, 4.0
HIT = 0.5
HIT_MARK = "→ "
_SUMMARY_GAIN = 1.25  # show the summary only when the content is this much longer


class ChronologicalFormatter(LayoutFormatter):
    """Lines grouped by day, in time order; subclasses set what a line shows."""

    name = "chronological"
    content_floor = False
    show_entities = False
    show_times = False
    full_neighbours = False
    show_metadata = False

    def entries(self, item: RenderItem, ctx: Context) -> list[Entry]:
        memory = item.memory
        content = content_of(memory)
        if not content.text.strip():
            return []
        own_full = self.content_floor or item.layer is not Layer.INDEX
        neighbours = self._neighbours(item, ctx) if item.layer is not Layer.INDEX else []
        if not own_full:
            return [Entry(item, (self._summary_part(item, ctx),), Layer.INDEX)]
        detail = item.layer is Layer.DETAIL
        plain = self._part(memory, item.citation, ctx, content, FULL, detail=detail, full=True)
        if not neighbours:
            return [Entry(item, (plain,), Layer.DETAIL)]
        marked = self._part(
            memory, item.citation, ctx, content, FULL + HIT, detail=detail, full=True, hit=True
        )
        return [
            Entry(item, (marked, *neighbours), item.layer),
            Entry(item, (plain,), Layer.DETAIL),
        ]

    def body(self, item: RenderItem, ctx: Context) -> str:
        if self._shows_summary(item):
            return self._summary_text(item.memory).text
        return content_of(item.memory).text

    def cut_entry(self, item: RenderItem, ctx: Context, text: str) -> Entry:
        memory = item.memory
        if self._shows_summary(item):
            flagged = summary_of(memory).flagged
            part = self._part(memory, item.citation, ctx, Clean(text, flagged), CUT_SUMMARY)
            return Entry(item, (part,), Layer.INDEX, truncated=True)
        part = self._part(
            memory,
            item.citation,
            ctx,
            Clean(text, content_of(memory).flagged),
            CUT,
            detail=item.layer is Layer.DETAIL,
        )
        return Entry(item, (part,), Layer.DETAIL, truncated=True)

    # -- lines -----------------------------------------------------------------------------------

    def _shows_summary(self, item: RenderItem) -> bool:
        return not self.content_floor and item.layer is Layer.INDEX

    def _summary_part(self, item: RenderItem, ctx: Context) -> Part:
        memory = item.memory
        content = content_of(memory)
        summary = self._summary_text(memory)
        if summary.text == content.text:
            return self._part(memory, item.citation, ctx, content, FULL, full=True)
        text = summary.text if summary.text.endswith(ELLIPSIS) else f"{summary.text} {ELLIPSIS}"
        if self.show_entities and memory.entities and ctx.options.max_entities:
            entities = clean(", ".join(memory.entities[: ctx.options.max_entities]))
            text = f"{text} · {entities.text}"
            summary = Clean(summary.text, summary.flagged or entities.flagged)
        return self._part(memory, item.citation, ctx, Clean(text, summary.flagged), SUMMARY)

    @staticmethod
    def _summary_text(memory: Memory) -> Clean:
        content = content_of(memory)
        summary = summary_of(memory)
        if len(content.text) <= len(summary.text) * _SUMMARY_GAIN:
            return content
        return summary

    def _neighbours(self, item: RenderItem, ctx: Context) -> list[Part]:
        seen = {item.id}
        parts = []
        for index, memory in sorted(
            enumerate(item.neighbours), key=lambda pair: (pair[1].timestamp, pair[1].id)
        ):
            if memory.id in seen:
                continue
            seen.add(memory.id)
            content = content_of(memory)
            if not content.text.strip():
                continue
            chars = 0 if self.full_neighbours else ctx.options.preview_chars
            shown = preview(content.text, chars)
            full = shown == content.text
            parts.append(
                self._part(
                    memory,
                    item.neighbour_citation(index),
                    ctx,
                    Clean(shown, content.flagged),
                    FULL if full else PREVIEW,
                    full=full,
                )
            )
        return parts

    def _part(
        self,
        memory: Memory,
        citation: str,
        ctx: Context,
        text: Clean,
        rank: float,
        *,
        detail: bool = False,
        full: bool = False,
        hit: bool = False,
    ) -> Part:
        mark = HIT_MARK if hit else ""
        time = f"{clock(memory.timestamp)} " if self.show_times else ""
        cite = f"[{citation}] " if citation else ""
        line = f"{mark}{time}{cite}{speaker_of(memory)}: {text.shown}"
        flagged = text.flagged
        if detail and self.show_metadata:
            meta = metadata_line(memory, ctx.options.meta_chars)
            if meta.text:
                line = f"{line}\n  {meta.shown}"
                flagged = flagged or meta.flagged
        return Part(
            section=self._section(memory, ctx),
            key=memory.id,
            sort=(memory.timestamp, memory.id),
            rank=rank,
            text=line,
            memory_id=memory.id,
            full=full,
            flagged=flagged,
        )

    def _section(self, memory: Memory, ctx: Context) -> Section:
        day = memory.timestamp.date()
        return Section(key=(day,), sort=(day,), head=self._head(day, ctx))

    @staticmethod
    def _head(day: date, ctx: Context) -> str:
        head = f"## {short_date(day)}"
        if ctx.now is not None and ctx.options.relative_ages and day <= ctx.now.date():
            ago = day_age(day, ctx.now.date())
            head += " (today)" if ago == "today" else f" ({ago} ago)"
        return head


class SummaryOnly(ChronologicalFormatter):
    """The minimal level's format: index items as one summary line each."""

    name = "summary_only"


class SummaryWithEntities(ChronologicalFormatter):
    """The standard level's format: summary lines followed by the memory's key entities."""

    name = "summary_with_entities"
    show_entities = True


class FullContent(ChronologicalFormatter):
    """The detailed level's format: every item's full content."""

    name = "full_content"
    content_floor = True


class FullWithContext(ChronologicalFormatter):
    """The comprehensive level's format: full content, neighbours in full, metadata for details."""

    name = "full_with_context"
    content_floor = True
    full_neighbours = True
    show_metadata = True


class Timeline(ChronologicalFormatter):
    """The timeline layer's format: every line with its time, the hit marked ``→``."""

    name = "timeline"
    show_times = True

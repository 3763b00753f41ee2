"""The ``json`` formatter: a JSON array, one compact object per line, in priority order.

Every object has ``id``, ``cite`` (when citations are on), ``date`` (ISO, minutes, UTC), ``who``,
``layer`` and ``score``; an index item adds ``summary`` (or ``content`` when the content is as
short as a summary), a timeline or detail item adds ``content``; a timeline item adds ``context``
(its neighbours as ``{cite, date, who, text}``, cut at ``preview_chars``); a detail item adds
``session``, ``kind``, ``entities`` and ``meta``. ``flagged: true`` marks text neutralised as
possible prompt injection, ``cut: true`` a text cut to fit (it ends with ``… [cut; show ...]``).
The text always parses with ``json.loads`` (it is ``""`` when nothing fits).
"""

from __future__ import annotations

import json
from typing import Any

from formatters.base import Layer, RenderItem
from formatters.fields import clean, content_of, preview, speaker_of, summary_of
from formatters.layout import Context, Entry, Frame, LayoutFormatter, Part, Section
from tiers.memory import Memory

_SECTION = Section(key=("json",), sort=(0,), joiner=",\n")
_SUMMARY_GAIN = 1.25


def _date(memory: Memory) -> str:
    return memory.timestamp.strftime("%Y-%m-%dT%H:%MZ")


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _clean_value(value: Any) -> tuple[Any, bool]:
    """``value`` with every string cleaned; whether any was flagged."""
    if isinstance(value, str):
        shown = clean(value)
        return shown.text, shown.flagged
    if isinstance(value, list):
        pairs = [_clean_value(v) for v in value]
        return [v for v, _ in pairs], any(f for _, f in pairs)
    if isinstance(value, dict):
        pairs_by_key = {k: _clean_value(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs_by_key.items()}, any(
            f for _, f in pairs_by_key.values()
        )
    return value, False


class Json(LayoutFormatter):
    """Machine-readable, still within budget."""

    name = "json"
    frame = Frame(head="[", tail="]", separator=",\n")

    def entries(self, item: RenderItem, ctx: Context) -> list[Entry]:
        if not content_of(item.memory).text.strip():
            return []
        if item.layer is Layer.INDEX:
            return [self._entry(item, ctx, Layer.INDEX)]
        detail = item.layer is Layer.DETAIL
        plain = self._entry(item, ctx, Layer.DETAIL, meta=detail)
        if item.neighbours:
            context = self._entry(item, ctx, item.layer, meta=detail, context=True)
            if '"context"' in context.parts[0].text:
                return [context, plain]
        return [plain]

    def body(self, item: RenderItem, ctx: Context) -> str:
        if item.layer is Layer.INDEX:
            return self._index_text(item.memory)[1]
        return content_of(item.memory).text

    def cut_entry(self, item: RenderItem, ctx: Context, text: str) -> Entry:
        layer = Layer.INDEX if item.layer is Layer.INDEX else Layer.DETAIL
        return self._entry(item, ctx, layer, cut=text)

    @staticmethod
    def _index_text(memory: Memory) -> tuple[str, str]:
        content = content_of(memory).text
        summary = summary_of(memory).text
        if len(content) <= len(summary) * _SUMMARY_GAIN:
            return "content", content
        return "summary", summary

    def _entry(
        self,
        item: RenderItem,
        ctx: Context,
        layer: Layer,
        *,
        meta: bool = False,
        context: bool = False,
        cut: str | None = None,
    ) -> Entry:
        memory = item.memory
        content = content_of(memory)
        record: dict[str, Any] = {"id": memory.id}
        if item.citation:
            record["cite"] = item.citation
        record.update(
            date=_date(memory),
            who=speaker_of(memory),
            layer=layer.value,
            score=round(item.score, 3),
        )
        flagged = content.flagged
        full = False
        if layer is Layer.INDEX:
            field, text = self._index_text(memory)
            flagged = flagged or summary_of(memory).flagged
            record[field] = text if cut is None else cut
            full = cut is None and field == "content"
        else:
            record["content"] = content.text if cut is None else cut
            full = cut is None
        if meta and cut is None:
            flagged = self._add_meta(record, memory) or flagged
        if context:
            neighbours, neighbours_flagged = self._context(item, ctx)
            if neighbours:
                record["context"] = neighbours
                flagged = flagged or neighbours_flagged
        if flagged:
            record["flagged"] = True
        if cut is not None:
            record["cut"] = True
        part = Part(
            _SECTION,
            item.id,
            (ctx.position(item),),
            1.0,
            _dumps(record),
            memory.id,
            full=full,
            flagged=flagged,
        )
        return Entry(item, (part,), layer, truncated=cut is not None)

    @staticmethod
    def _add_meta(record: dict[str, Any], memory: Memory) -> bool:
        record.update(session=memory.session_id, kind=memory.kind.value)
        entities, flagged = _clean_value(list(memory.entities))
        if entities:
            record["entities"] = entities
        if memory.metadata:
            record["meta"], meta_flagged = _clean_value(memory.metadata)
            flagged = flagged or meta_flagged
        return bool(flagged)

    @staticmethod
    def _context(item: RenderItem, ctx: Context) -> tuple[list[dict[str, str]], bool]:
        rows = []
        flagged = False
        seen = {item.id}
        order = sorted(enumerate(item.neighbours), key=lambda p: (p[1].timestamp, p[1].id))
        for index, memory in order:
            content = content_of(memory)
            if memory.id in seen or not content.text.strip():
                continue
            seen.add(memory.id)
            row = {"cite": item.neighbour_citation(index)} if item.neighbour_citations else {}
            row.update(
                date=_date(memory),
                who=speaker_of(memory),
                text=preview(content.text, ctx.options.preview_chars),
            )
            rows.append(row)
            flagged = flagged or content.flagged
        return rows, flagged

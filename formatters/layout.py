"""The packing engine every built-in formatter shares: lines in sections, planned to a budget.

A formatter turns each item into an :class:`Entry`: the lines (:class:`Part`) it adds to sections
(a session's day, a table, a detail block). A line is keyed inside its section (usually by memory
id), so a memory that two items bring (a neighbour of two hits, a hit inside another's timeline)
is shown once, at the richest version asked (the higher ``rank``). A section's header is paid once.

:class:`Plan` keeps the running token estimate as the sum of each line's own count plus the
headers it opened, so an item's marginal cost is known without re-counting the whole text. Token
counts are not exactly additive across joins, so :meth:`LayoutFormatter.render` counts the final
text with the real counter and backs off (drops or re-cuts the last item) until it fits: the
budget is never exceeded.

Packing order: every item whole, in the order given (an item that does not fit is skipped, and
a timeline item first falls back to its own line without neighbours); then the first skipped item
that can keep at least ``min_cut_tokens`` of its text is cut to fill what is left, ending with
``… [cut; show mem:a7Bc3x]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from formatters.base import Layer, Rendered, RenderedItem, RenderItem
from formatters.config import FormattingConfig
from formatters.tokens import TokenCounter
from tiers.errors import InvalidInputError
from tiers.memory import as_utc

SortKey = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Section:
    """A block of lines under an optional header; ``sort`` orders sections in the text."""

    key: SortKey
    sort: SortKey
    head: str = ""
    joiner: str = "\n"


@dataclass(frozen=True, slots=True)
class Part:
    """One line (it may span several text lines) in a section.

    ``key`` identifies the line inside its section; for the same key the higher ``rank`` wins.
    ``memory_id``, ``full`` and ``flagged`` say whose text the line shows and how.
    """

    section: Section
    key: str
    sort: SortKey
    rank: float
    text: str
    memory_id: str = ""
    full: bool = False
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class Entry:
    """What one item adds to the text, and at which layer it then reads."""

    item: RenderItem
    parts: tuple[Part, ...]
    layer: Layer
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Frame:
    """Text around the whole document (``[`` and ``]`` for JSON); none for most formatters."""

    head: str = ""
    tail: str = ""
    separator: str = "\n"


@dataclass(frozen=True, slots=True)
class Context:
    """What building an entry may depend on besides the item."""

    counter: TokenCounter
    now: datetime | None
    options: FormattingConfig
    positions: dict[str, int] = field(default_factory=dict)

    def position(self, item: RenderItem) -> int:
        """Where ``item`` stands in the priority order (layouts that keep that order use it)."""
        return self.positions.get(item.id, len(self.positions))


@dataclass
class Plan:
    """Entries placed so far, the lines they produced, and the estimated token count."""

    counter: TokenCounter
    frame: Frame = field(default_factory=Frame)
    entries: list[tuple[Entry, int]] = field(default_factory=list)
    tokens: int = 0
    _sections: dict[SortKey, Section] = field(default_factory=dict)
    _lines: dict[tuple[SortKey, str], Part] = field(default_factory=dict)
    _costs: dict[str, int] = field(default_factory=dict)

    def cost(self, text: str) -> int:
        """``counter(text)``, remembered for this plan."""
        known = self._costs.get(text)
        if known is None:
            known = self._costs[text] = self.counter(text)
        return known

    def marginal(self, entry: Entry) -> int:
        """The tokens ``entry`` would add to the text as it stands."""
        total = 0 if self.entries else self._frame_cost()
        opened: set[SortKey] = set()
        pending: dict[tuple[SortKey, str], Part] = {}
        for part in entry.parts:
            section = part.section
            if section.key not in self._sections and section.key not in opened:
                opened.add(section.key)
                total += self._section_cost(section)
            key = (section.key, part.key)
            current = pending.get(key) or self._lines.get(key)
            if current is not None and current.rank >= part.rank:
                continue
            total += self.cost(part.text + section.joiner)
            if current is not None:
                total -= self.cost(current.text + section.joiner)
            pending[key] = part
        return total

    def add(self, entry: Entry) -> int:
        """Place ``entry``; returns what it added."""
        added = self.marginal(entry)
        for part in entry.parts:
            self._sections.setdefault(part.section.key, part.section)
            key = (part.section.key, part.key)
            current = self._lines.get(key)
            if current is None or part.rank > current.rank:
                self._lines[key] = part
        self.entries.append((entry, added))
        self.tokens += added
        return added

    def pop(self) -> Entry:
        """Remove the last entry placed (rebuilding the lines without it)."""
        last, _ = self.entries[-1]
        kept = [entry for entry, _ in self.entries[:-1]]
        self.entries, self.tokens = [], 0
        self._sections, self._lines = {}, {}
        for entry in kept:
            self.add(entry)
        return last

    def text(self) -> str:
        """The document: sections in order, lines in order inside each."""
        if not self.entries:
            return ""
        grouped: dict[SortKey, list[Part]] = {}
        for (section_key, _), part in self._lines.items():
            grouped.setdefault(section_key, []).append(part)
        order = sorted(
            grouped,
            key=lambda k: (self._sections[k].sort, min(p.sort for p in grouped[k])),
        )
        blocks = []
        for key in order:
            section = self._sections[key]
            lines = section.joiner.join(p.text for p in sorted(grouped[key], key=_part_order))
            blocks.append(f"{section.head}\n{lines}" if section.head else lines)
        body = self.frame.separator.join(blocks)
        return "\n".join(piece for piece in (self.frame.head, body, self.frame.tail) if piece)

    def shown(self, memory_id: str) -> tuple[bool, bool]:
        """Whether ``memory_id``'s full content is in the text, and whether it was flagged."""
        full = flagged = False
        for part in self._lines.values():
            if part.memory_id == memory_id:
                full = full or part.full
                flagged = flagged or part.flagged
        return full, flagged

    def _frame_cost(self) -> int:
        head = self.cost(self.frame.head + "\n") if self.frame.head else 0
        tail = self.cost("\n" + self.frame.tail) if self.frame.tail else 0
        return head + tail

    def _section_cost(self, section: Section) -> int:
        separator = self.cost(self.frame.separator) if self._sections else 0
        return separator + (self.cost(section.head + "\n") if section.head else 0)


def _part_order(part: Part) -> SortKey:
    return (part.sort, part.key)


def cut_marker(citation: str) -> str:
    """``… [cut; show mem:a7Bc3x]``, or ``… [cut]`` without citations."""
    return f"… [cut; show {citation}]" if citation else "… [cut]"


class LayoutFormatter:
    """Base of the built-ins: subclasses say how an item reads; this class packs and verifies.

    Subclasses implement :meth:`entries` (the whole item, then cheaper fallbacks), :meth:`body`
    (the text a cut shortens) and :meth:`cut_entry` (the item with its body replaced by a cut).
    """

    name = "layout"
    frame = Frame()

    def __init__(self, options: FormattingConfig | None = None) -> None:
        self.options = options or FormattingConfig()

    def configure(self, options: FormattingConfig) -> LayoutFormatter:
        """A copy of this formatter that uses ``options``."""
        return type(self)(options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # -- what subclasses provide ---------------------------------------------------------------

    def entries(self, item: RenderItem, ctx: Context) -> list[Entry]:
        raise NotImplementedError

    def body(self, item: RenderItem, ctx: Context) -> str:
        raise NotImplementedError

    def cut_entry(self, item: RenderItem, ctx: Context, text: str) -> Entry:
        raise NotImplementedError

    # -- the Formatter protocol ----------------------------------------------------------------

    def render(
        self,
        items: Sequence[RenderItem],
        *,
        budget: int,
        counter: TokenCounter,
        now: datetime | None = None,
    ) -> Rendered:
        """Pack ``items`` (in priority order) into at most ``budget`` tokens of text."""
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise InvalidInputError(f"budget must be a whole number >= 0, got {budget!r}")
        unique = list({item.id: item for item in reversed(items)}.values())[::-1]
        ctx = Context(
            counter, _aware(now), self.options, {item.id: i for i, item in enumerate(unique)}
        )
        plan = Plan(counter, self.frame)
        skipped: list[RenderItem] = []
        for item in unique:
            if not self._place_whole(plan, item, ctx, budget):
                skipped.append(item)
        for item in skipped:
            cut = self._cut_to_fit(plan, item, ctx, budget - plan.tokens)
            if cut is not None:
                plan.add(cut)
                break
        text, tokens = self._verify(plan, ctx, budget)
        return self._result(plan, unique, text, tokens, budget)

    # -- packing ---------------------------------------------------------------------------------

    def candidates(self, item: RenderItem, ctx: Context) -> list[Entry]:
        """The item whole (then its fallbacks); cut to ``max_item_tokens`` when it is longer."""
        cap = ctx.options.max_item_tokens
        if cap:
            body = self.body(item, ctx)
            if body and ctx.counter(body) > cap:
                head = _trim_words(ctx.counter.truncate(body, cap), body)
                return [self.cut_entry(item, ctx, f"{head} {cut_marker(item.citation)}")]
        return self.entries(item, ctx)

    def _place_whole(self, plan: Plan, item: RenderItem, ctx: Context, budget: int) -> bool:
        for entry in self.candidates(item, ctx):
            if plan.tokens + plan.marginal(entry) <= budget:
                plan.add(entry)
                return True
        return False

    def _cut_to_fit(
        self, plan: Plan, item: RenderItem, ctx: Context, allowance: int
    ) -> Entry | None:
        """``item`` with its body cut so that it adds at most ``allowance`` tokens."""
        minimum = ctx.options.min_cut_tokens
        if allowance < minimum:
            return None
        body = self.body(item, ctx)
        if not body:
            return None
        marker = cut_marker(item.citation)
        room = allowance - plan.marginal(self.cut_entry(item, ctx, marker))
        while room >= minimum:
            head = _trim_words(ctx.counter.truncate(body, room), body)
            if head == body:
                return None  # it would not be a cut; the whole item did not fit
            entry = self.cut_entry(item, ctx, f"{head} {marker}" if head else marker)
            over = plan.marginal(entry) - allowance
            if over <= 0:
                return entry if head else None
            room -= over
        return None

    def _verify(self, plan: Plan, ctx: Context, budget: int) -> tuple[str, int]:
        """Count the real text; drop or re-cut the last item until it fits."""
        slack = 0
        while True:
            text = plan.text()
            tokens = ctx.counter(text)
            if tokens <= budget:
                return text, tokens
            slack += tokens - budget
            item = plan.pop().item
            if not self._place_whole(plan, item, ctx, budget - slack):
                cut = self._cut_to_fit(plan, item, ctx, budget - slack - plan.tokens)
                if cut is not None:
                    plan.add(cut)

    def _result(
        self, plan: Plan, items: list[RenderItem], text: str, tokens: int, budget: int
    ) -> Rendered:
        placed = []
        for entry, added in plan.entries:
            item = entry.item
            full, flagged = plan.shown(item.id)
            placed.append(
                RenderedItem(
                    id=item.id,
                    citation=item.citation,
                    layer=entry.layer,
                    tier=item.tier,
                    score=item.score,
                    tokens=max(0, added),
                    full=full and not entry.truncated,
                    truncated=entry.truncated,
                    flagged=flagged,
                )
            )
        placed_ids = {p.id for p in placed}
        return Rendered(
            text=text,
            tokens=tokens,
            items=tuple(placed),
            omitted=tuple(item.id for item in items if item.id not in placed_ids),
            formatter=self.name,
            budget=budget,
        )


def _aware(now: datetime | None) -> datetime | None:
    """The query time, timezone-aware (a naive time is taken as UTC, like Memory timestamps)."""
    return None if now is None else as_utc(now)


def _trim_words(head: str, body: str) -> str:
    """A cut that ends on a word boundary when that loses little, without trailing spaces."""
    if len(head) < len(body) and head[-1:].isalnum() and body[len(head)].isalnum():
        space = max(head.rfind(" "), head.rfind("\n"))
        if space >= len(head) * 0.6:
            head = head[:space]
    return head.rstrip()

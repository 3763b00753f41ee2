"""The formatter contract: what the controller hands a formatter, and what it gets back.

The controller decides *which* memories to disclose and at which :class:`Layer`; a formatter
decides how they read, and packs them into an exact token budget:

- :class:`RenderItem`: one memory to render, in priority order, with its citation, score, tier,
  layer and (for a timeline) its neighbours.
- :class:`Formatter`: ``render(items, budget=, counter=, now=) -> Rendered``.
- :class:`Rendered`: the text, its exact token count, and per item what made it in.

Layers are cumulative: *index* is a one-line summary; *timeline* is the item's full content with
the neighbours it was given (the hit marked); *detail* is the full content, its metadata where the
formatter's style shows metadata, and its neighbours when it was given any. A formatter's style may
raise the floor: the ``full_*`` and ``detail`` formatters show every item's full content even at
the index layer. See ``formatters.builtin`` for the table of what each built-in shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tiers.errors import InvalidInputError
from tiers.memory import Memory

if TYPE_CHECKING:
    from formatters.config import FormattingConfig
    from formatters.tokens import TokenCounter


class Layer(StrEnum):
    """Layer 1 an index line, layer 2 a timeline around a hit, layer 3 the full detail."""

    INDEX = "index"
    TIMELINE = "timeline"
    DETAIL = "detail"

    @property
    def rank(self) -> int:
        """0, 1, 2: index < timeline < detail."""
        return _LAYER_RANKS[self]


_LAYER_RANKS = {Layer.INDEX: 0, Layer.TIMELINE: 1, Layer.DETAIL: 2}


@dataclass(frozen=True, slots=True)
class RenderItem:
    """One memory for a formatter to render, as the controller decided it.

    ``citation`` is the full citation text (``mem:a7Bc3x``) or ``""`` when citations are off.
    ``neighbours`` are the memories around the hit (usually of its session), excluding the hit;
    any order (formatters sort them by time), duplicates and the hit itself are ignored. They are
    shown when ``layer`` is timeline or detail, and ignored at the index layer.
    ``neighbour_citations`` is empty (citations off) or holds one citation per neighbour.
    ``omitted_tokens``: the memory's content is an excerpt (the controller cut a long memory to
    the part the query is about), leaving this many tokens of it out; formatters show it as it is.
    """

    memory: Memory
    citation: str = ""
    score: float = 0.0
    tier: str = ""
    layer: Layer = Layer.INDEX
    neighbours: tuple[Memory, ...] = ()
    neighbour_citations: tuple[str, ...] = ()
    omitted_tokens: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.memory, Memory):
            raise InvalidInputError(f"RenderItem.memory must be a Memory, not {self.memory!r}")
        if not (math.isfinite(self.score) and 0.0 <= self.score <= 1.0):
            raise InvalidInputError(f"RenderItem.score must lie in [0, 1], got {self.score!r}")
        try:
            object.__setattr__(self, "layer", Layer(self.layer))
        except ValueError:
            valid = ", ".join(layer.value for layer in Layer)
            raise InvalidInputError(f"unknown layer {self.layer!r}; valid: {valid}") from None
        object.__setattr__(self, "neighbours", tuple(self.neighbours))
        object.__setattr__(self, "neighbour_citations", tuple(self.neighbour_citations))
        if self.neighbour_citations and len(self.neighbour_citations) != len(self.neighbours):
            raise InvalidInputError(
                f"RenderItem for {self.memory.id!r}: {len(self.neighbour_citations)} neighbour "
                f"citations for {len(self.neighbours)} neighbours; give one per neighbour or none"
            )

    @property
    def id(self) -> str:
        return self.memory.id

    def neighbour_citation(self, index: int) -> str:
        """The citation of neighbour ``index`` (``""`` when none were given)."""
        return self.neighbour_citations[index] if self.neighbour_citations else ""


@dataclass(frozen=True, slots=True)
class RenderedItem:
    """One item that made it into the text.

    ``layer`` is how it reads: index (a summary line; a short memory reads whole even so),
    timeline (full content among the neighbours it came with), or detail (full content, with
    metadata where the style shows it; also a timeline item whose neighbours did not fit, and
    an index item under a formatter that shows every item's content). ``tokens`` is what
    the item added by the formatter's accounting (its lines and any header it opened); the shares
    add up to within a few tokens of :attr:`Rendered.tokens`. ``full`` says the item's whole
    content is in the text (after private spans were removed); ``truncated`` that it was cut with
    a ``[cut; show ...]`` marker; ``flagged`` that it was neutralised as possible prompt injection.
    """

    id: str
    citation: str
    layer: Layer
    tier: str
    score: float
    tokens: int
    full: bool = False
    truncated: bool = False
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class Rendered:
    """A formatter's output: ``tokens`` is exactly ``counter(text)`` and never above ``budget``."""

    text: str
    tokens: int
    items: tuple[RenderedItem, ...] = ()
    omitted: tuple[str, ...] = ()
    formatter: str = ""
    budget: int = 0
    wrapper_tokens: int = 0

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)

    @property
    def truncated(self) -> bool:
        return any(item.truncated for item in self.items)


@runtime_checkable
class Formatter(Protocol):
    """Renders items within an exact token budget. Register one in ``formatters.FORMATTERS``.

    ``render`` packs whole items first, in the order given, then cuts one item's content with a
    visible marker to fill what is left; ``counter(result.text) <= budget`` always holds.
    """

    name: str

    def render(
        self,
        items: Sequence[RenderItem],
        *,
        budget: int,
        counter: TokenCounter,
        now: datetime | None = None,
    ) -> Rendered: ...


@runtime_checkable
class ConfigurableFormatter(Formatter, Protocol):
    """A formatter that takes the profile's ``formatting`` options (every built-in does)."""

    def configure(self, options: FormattingConfig) -> ConfigurableFormatter: ...

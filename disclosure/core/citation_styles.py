"""How citations read in a disclosed context, from the profile's ``citations.style``.

- ``inline`` (what formatters write): ``[mem:a7Bc3x]`` where the memory is;
- ``footnote``: numbered markers ``[1]`` where the memories are, the sources listed at the end
  (``[1] mem:a7Bc3x``), so the model can still quote the full citation;
- ``reference``: no markers in the text, the sources listed at the end.

Only bracketed citations are restyled (a cut marker's ``show mem:a7Bc3x`` stays as it is). The
restyled text is counted again: if it would exceed the budget, the inline text is kept.
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

from formatters.base import Rendered
from formatters.citations import citation_pattern
from formatters.config import CitationConfig
from formatters.tokens import TokenCounter

SOURCES_HEADER = "Sources:"


def restyle(
    rendered: Rendered, config: CitationConfig, budget: int, counter: TokenCounter
) -> Rendered:
    """``rendered`` with its citations in ``config.style`` (within ``budget``, else as it was)."""
    if config.style == "inline" or not config.enabled or not rendered.text:
        return rendered
    text = restyle_text(rendered.text, config.style, config.prefix)
    if text == rendered.text:
        return rendered
    tokens = counter(text)
    if tokens > budget:
        return rendered
    return dataclasses.replace(rendered, text=text, tokens=tokens)


def restyle_text(text: str, style: str, prefix: str = "mem") -> str:
    """``text``'s bracketed citations as footnotes or references (``inline``: unchanged)."""
    if style == "inline":
        return text
    pattern = _bracketed(prefix, style == "reference")
    order: dict[str, int] = {}
    for match in pattern.finditer(text):
        order.setdefault(match.group(1), len(order) + 1)
    if not order:
        return text
    if style == "footnote":
        body = pattern.sub(lambda m: f"[{order[m.group(1)]}]", text)
        listing = "\n".join(f"[{n}] {c}" for c, n in order.items())
    elif style == "reference":
        body = re.sub(r"[ \t]+\n", "\n", pattern.sub("", text))
        listing = " ".join(f"[{c}]" for c in order)
    else:
        raise ValueError(f"unknown citation style {style!r}; inline, footnote or reference")
    return f"{body.rstrip()}\n\n{SOURCES_HEADER}\n{listing}\n"


@lru_cache(maxsize=16)
def _bracketed(prefix: str, with_space: bool) -> re.Pattern[str]:
    """``[prefix:code]`` (and the space before it, for removal); group 1 is ``prefix:code``."""
    space = " ?" if with_space else ""
    return re.compile(rf"{space}\[({citation_pattern(prefix)})\]")

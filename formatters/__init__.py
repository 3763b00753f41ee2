"""How disclosed memories read: formatters, their registry, citations and token counts.

The controller decides what to disclose and at which layer; a formatter renders it within an
exact token budget::

    from formatters import Layer, RenderItem, WrapperInfo, get_formatter, render_context

    fmt = get_formatter(profile.level(level).formatter, profile.formatting)
    items = [  # in priority order: the order decides what gets in when the budget is short
        RenderItem(memory=m, citation="mem:a7Bc3x", score=0.93, tier="warm", layer=Layer.DETAIL),
        RenderItem(memory=h, citation="mem:x9Yz2w", score=0.81, tier="cold",
                   layer=Layer.TIMELINE, neighbours=around_h, neighbour_citations=cites),
        ...
    ]
    out = render_context(fmt, items, budget=budget, counter=counter, now=now,
                         info=WrapperInfo(level="standard", signals=..., complexity=0.4,
                                          full_history_tokens=full),
                         options=profile.formatting)
    out.text, out.tokens, out.items, out.omitted   # tokens == counter(text) <= budget

Modules: ``base`` (the contract), ``layout`` (the packing engine), ``chronological``, ``blocks``
and ``jsonfmt`` (the built-ins, listed in ``builtin``), ``fields`` (how each field reads),
``citations``, ``wrapper``, ``tokens``, ``registry``. Private spans and the injection filter,
which every field passes, live in the :mod:`safeguards` package; this package re-exports the names
it always did (``FLAG_NOTE``, ``Finding``, ``neutralize``, ``scan``, ``strip_private``).
"""

from formatters.base import (
    ConfigurableFormatter,
    Formatter,
    Layer,
    Rendered,
    RenderedItem,
    RenderItem,
)
from formatters.citations import CITATION_PATTERN, format_citation, parse_citations
from formatters.config import CitationConfig, FormattingConfig, TokenConfig
from formatters.fields import one_line_summary
from formatters.registry import FORMATTERS, get_formatter
from formatters.tokens import (
    APPROXIMATE,
    ApproximateCounter,
    TiktokenCounter,
    TokenCounter,
    get_token_counter,
)
from formatters.wrapper import (
    WrapperInfo,
    human_tokens,
    render_context,
    savings_line,
    wrap,
    wrapper_overhead,
)
from safeguards import FLAG_NOTE, Finding, neutralize, scan, strip_private
from tiers.registry import Registry

__all__ = [
    "APPROXIMATE",
    "CITATION_PATTERN",
    "FLAG_NOTE",
    "FORMATTERS",
    "ApproximateCounter",
    "CitationConfig",
    "ConfigurableFormatter",
    "Finding",
    "Formatter",
    "FormattingConfig",
    "Layer",
    "Registry",
    "RenderItem",
    "Rendered",
    "RenderedItem",
    "TiktokenCounter",
    "TokenConfig",
    "TokenCounter",
    "WrapperInfo",
    "format_citation",
    "get_formatter",
    "get_token_counter",
    "human_tokens",
    "neutralize",
    "one_line_summary",
    "parse_citations",
    "render_context",
    "savings_line",
    "scan",
    "strip_private",
    "wrap",
    "wrapper_overhead",
]

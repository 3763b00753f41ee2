"""How disclosed memories read: formatters, their registry, citations, safety and token counts."""

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
from formatters.registry import FORMATTERS, Registry, get_formatter
from formatters.safety import FLAG_NOTE, Finding, neutralize, scan, strip_private
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

"""How disclosed memories read: formatters, their registry, citations and exact token counting."""

from formatters.config import CitationConfig, TokenConfig
from formatters.registry import FORMATTERS, Registry
from formatters.tokens import (
    APPROXIMATE,
    ApproximateCounter,
    TiktokenCounter,
    TokenCounter,
    get_token_counter,
)

__all__ = [
    "APPROXIMATE",
    "FORMATTERS",
    "ApproximateCounter",
    "CitationConfig",
    "Registry",
    "TiktokenCounter",
    "TokenConfig",
    "TokenCounter",
    "get_token_counter",
]

"""The wrapper around a disclosed context: a metadata header and a closing savings line.

Three header styles (the profile's ``formatting.header``)::

    full      [Memory Context - Level: standard]              (the original bracketed header)
              [Signals: temporal_reference | Complexity: 0.40]

              ...context...

              [End Memory Context]

    compact   [Memory context · standard · temporal_reference · complexity 0.40]
              ...context...
              [End memory context]

    none      ...context...

With ``formatting.savings_line`` the line ``Using 1.2K tokens from conversation (14x savings via
progressive disclosure)`` closes the context; it counts the whole wrapped text,
itself included, against the real token count of the full history.

The wrapper's tokens count against the budget. :func:`render_context` does it all: it reserves
:func:`wrapper_overhead`, renders the items into what is left, wraps, verifies the final count,
and renders again with less room in the rare case the joins cost more than planned. Nothing to
disclose gives ``""``: no wrapper around nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from formatters.base import Formatter, Rendered, RenderItem
from formatters.config import FormattingConfig
from formatters.tokens import TokenCounter
from tiers.errors import InvalidInputError

_SAFETY_MARGIN = 2  # joins may tokenize a little differently from the parts


@dataclass(frozen=True, slots=True)
class WrapperInfo:
    """What the header says: the level, the analyzer's signals and complexity; and the full
    history's token count, for the savings line."""

    level: str
    signals: tuple[str, ...] = ()
    complexity: float = 0.0
    full_history_tokens: int = 0
    exact: bool = True


def human_tokens(count: int) -> str:
    """``950`` -> ``950``, ``1234`` -> ``1.2K``, ``20700`` -> ``21K``, ``1_500_000`` -> ``1.5M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}K"
    if count < 1_000_000:
        return f"{count / 1000:.0f}K"
    return f"{count / 1_000_000:.1f}M"


def savings_line(tokens_used: int, full_history_tokens: int, *, exact: bool = True) -> str:
    """The savings line: ``Using 1.2K tokens from conversation (14x savings via ...)``.

    Ratios under 10 keep one decimal (``2.5x``); a context no smaller than the whole history
    says so instead of claiming savings."""
    if tokens_used <= 0:
        return "Using 0 tokens from conversation (nothing relevant to disclose)"
    approx = "" if exact else "~"
    used = f"Using {approx}{human_tokens(tokens_used)} tokens from conversation"
    if full_history_tokens <= tokens_used:
        return f"{used} (no savings yet: the whole history is {human_tokens(full_history_tokens)})"
    savings = full_history_tokens / tokens_used
    ratio = f"{savings:.0f}x" if savings >= 10 else f"{savings:.1f}x"
    return f"{used} ({ratio} savings via progressive disclosure)"


def wrap(
    body: str,
    info: WrapperInfo,
    *,
    style: str = "compact",
    tokens_used: int | None = None,
) -> str:
    """``body`` inside the header of ``style``; with ``tokens_used``, the savings line too."""
    signals = ", ".join(info.signals) if info.signals else "default"
    closing = []
    if tokens_used is not None:
        closing.append(savings_line(tokens_used, info.full_history_tokens, exact=info.exact))
    if style == "full":
        head = (
            f"[Memory Context - Level: {info.level}]\n"
            f"[Signals: {signals} | Complexity: {info.complexity:.2f}]\n"
        )
        return "\n".join([head, body, "", *closing, "[End Memory Context]"])
    if style == "compact":
        head = f"[Memory context · {info.level} · {signals} · complexity {info.complexity:.2f}]"
        return "\n".join([head, body, *closing, "[End memory context]"])
    if style == "none":
        return "\n".join([body, *closing])
    raise InvalidInputError(f"unknown header style {style!r}; valid: full, compact, none")


def wrapper_overhead(
    info: WrapperInfo, counter: TokenCounter, *, style: str = "compact", savings: bool = False
) -> int:
    """Tokens to reserve for the wrapper (an upper bound, joins included)."""
    if style == "none" and not savings:
        return 0
    body = "x"
    worst = 0
    for used in (1, 999, 9_999, 99_999) if savings else (None,):
        worst = max(worst, counter(wrap(body, info, style=style, tokens_used=used)))
    return worst - counter(body) + _SAFETY_MARGIN


def render_context(
    formatter: Formatter,
    items: Sequence[RenderItem],
    *,
    budget: int,
    counter: TokenCounter,
    now: datetime | None = None,
    info: WrapperInfo | None = None,
    options: FormattingConfig | None = None,
) -> Rendered:
    """Render ``items`` and wrap them, all within ``budget`` tokens (see the module docstring)."""
    options = options or FormattingConfig()
    style, savings = options.header, options.savings_line
    if info is None or (style == "none" and not savings):
        return formatter.render(items, budget=budget, counter=counter, now=now)
    inner = max(0, budget - wrapper_overhead(info, counter, style=style, savings=savings))
    while True:
        rendered = formatter.render(items, budget=inner, counter=counter, now=now)
        if not rendered.items:
            return dataclasses.replace(rendered, budget=budget)
        text, tokens = _wrapped(rendered.text, info, counter, style=style, savings=savings)
        if tokens <= budget:
            return dataclasses.replace(
                rendered,
                text=text,
                tokens=tokens,
                budget=budget,
                wrapper_tokens=tokens - rendered.tokens,
            )
        inner = max(0, inner - (tokens - budget))


def _wrapped(
    body: str, info: WrapperInfo, counter: TokenCounter, *, style: str, savings: bool
) -> tuple[str, int]:
    """The wrapped text and its count; the savings line counts itself (a fixed point)."""
    text = wrap(body, info, style=style)
    tokens = counter(text)
    if not savings:
        return text, tokens
    guess = tokens + 20
    for _ in range(5):
        text = wrap(body, info, style=style, tokens_used=guess)
        tokens = counter(text)
        if savings_line(tokens, info.full_history_tokens) == savings_line(
            guess, info.full_history_tokens
        ):
            break
        guess = tokens
    return text, tokens

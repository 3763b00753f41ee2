"""The wrapper: the header, the savings line, and their tokens within the budget."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from formatters import (
    FormattingConfig,
    Layer,
    RenderItem,
    TokenCounter,
    WrapperInfo,
    get_formatter,
    human_tokens,
    render_context,
    savings_line,
    wrap,
    wrapper_overhead,
)
from tiers.memory import Memory

MakeItem = Callable[..., RenderItem]
INFO = WrapperInfo(
    level="standard",
    signals=("keyword:detailed", "temporal_reference"),
    complexity=0.4,
    full_history_tokens=20_700,
)


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0"), (950, "950"), (1234, "1.2K"), (20_700, "21K"), (1_500_000, "1.5M")],
)
def test_human_tokens(count: int, shown: str) -> None:
    """Counts read short: 1.2K, 21K, 1.5M."""
    assert human_tokens(count) == shown


def test_savings_line_reads_like_seed_004() -> None:
    """The line has its fixed wording; approximate counts carry a tilde."""
    assert savings_line(1234, 17_300) == (
        "Using 1.2K tokens from conversation (14x savings via progressive disclosure)"
    )
    assert savings_line(1234, 17_300, exact=False).startswith("Using ~1.2K tokens")
    assert savings_line(0, 500) == "Using 0 tokens from conversation (nothing relevant to disclose)"
    assert savings_line(400, 1000).endswith("(2.5x savings via progressive disclosure)")
    assert savings_line(83, 40) == (
        "Using 83 tokens from conversation (no savings yet: the whole history is 40)"
    )


def test_header_styles() -> None:
    """full is the bracketed two-line header; compact is one line; none adds nothing."""
    full = wrap("BODY", INFO, style="full")
    assert full == (
        "[Memory Context - Level: standard]\n"
        "[Signals: keyword:detailed, temporal_reference | Complexity: 0.40]\n\nBODY\n\n"
        "[End Memory Context]"
    )
    compact = wrap("BODY", INFO, style="compact")
    assert compact.splitlines() == [
        "[Memory context · standard · keyword:detailed, temporal_reference · complexity 0.40]",
        "BODY",
        "[End memory context]",
    ]
    assert wrap("BODY", INFO, style="none") == "BODY"
    assert "[Signals: default |" in wrap("B", WrapperInfo(level="minimal"), style="full")
    with pytest.raises(ValueError, match="header style"):
        wrap("B", INFO, style="fancy")


@pytest.mark.parametrize("style", ["full", "compact", "none"])
@pytest.mark.parametrize("savings", [False, True])
def test_render_context_fits_and_reports_its_overhead(
    style: str, savings: bool, counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """Header and line count against the budget; the reserve covers what the wrapper takes."""
    options = FormattingConfig(header=style, savings_line=savings)
    items = [make_item(m, Layer.DETAIL) for m in sample[:20]]
    reserve = wrapper_overhead(INFO, counter, style=style, savings=savings)
    for budget in (30, 120, 400):
        out = render_context(
            get_formatter("full_content"),
            items,
            budget=budget,
            counter=counter,
            info=INFO,
            options=options,
        )
        assert out.tokens == counter(out.text) <= budget
        assert out.wrapper_tokens <= reserve
        if out.items and style != "none":
            assert out.text.startswith("[Memory")
            assert out.text.lower().endswith("[end memory context]")


def test_the_savings_line_counts_the_whole_wrapped_text(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """The line's number is the wrapped text's own token count (it includes itself)."""
    options = FormattingConfig(header="compact", savings_line=True)
    items = [make_item(m, Layer.DETAIL) for m in sample]
    out = render_context(
        get_formatter("full_content"),
        items,
        budget=900,
        counter=counter,
        info=INFO,
        options=options,
    )
    line = next(t for t in out.text.splitlines() if t.startswith("Using "))
    assert line == savings_line(out.tokens, INFO.full_history_tokens)
    assert re.search(r"\((\d+)x savings", line)


def test_nothing_to_disclose_gives_no_wrapper(counter: TokenCounter) -> None:
    """No items (or none that fit): the empty string, not a header around nothing."""
    out = render_context(
        get_formatter("summary_only"),
        [],
        budget=500,
        counter=counter,
        info=INFO,
        options=FormattingConfig(header="full", savings_line=True),
    )
    assert (out.text, out.tokens) == ("", 0)


def test_without_info_it_is_a_plain_render(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """render_context without WrapperInfo renders exactly what the formatter renders."""
    items = [make_item(m) for m in sample[:5]]
    fmt = get_formatter("summary_only")
    assert render_context(fmt, items, budget=200, counter=counter) == fmt.render(
        items, budget=200, counter=counter
    )

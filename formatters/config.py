"""Profile sections owned by the formatters: token counting and citations."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenConfig(_Section):
    """Which tokenizer counts the budget; ``approximate`` makes every count approximate."""

    encoding: str = Field(default="cl100k_base", min_length=1)


class CitationConfig(_Section):
    """Citations such as ``[mem:a7Bc3x]``: a short base64url prefix of the id's sha256."""

    enabled: bool = True
    prefix: str = Field(default="mem", pattern=r"^[a-z][a-z0-9_-]{0,15}$")
    length: int = Field(default=6, ge=4, le=16)

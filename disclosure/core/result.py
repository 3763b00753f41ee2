"""What ``disclose`` returns: the rendered context and an account of every token in it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from analyzers import DisclosureLevel, QueryAnalysis
from formatters.base import Layer
from formatters.wrapper import human_tokens, savings_line

__all__ = ["DisclosedItem", "DisclosureResult", "human_tokens"]


class DisclosedItem(BaseModel):
    """One memory in the context: which tier found it, at which layer it reads, what it cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    citation: str
    tier: str
    layer: Layer
    score: float
    tokens: int = Field(ge=0)
    # Where it sat on the query's score curve (None for memories named by id or brought back by
    # "tell me more"): its rank in the fused order, its fused value over the leader's, and the
    # lists that found it. Feedback teaches the adaptive budget's use model with these.
    rank: int | None = None
    relative: float | None = None
    tiers: tuple[str, ...] = ()
    # A long memory shown as its excerpt about the query: ``omitted_tokens`` of its content were
    # left out (``show`` gives it whole).
    excerpt: bool = False
    omitted_tokens: int = Field(default=0, ge=0)


class DisclosureResult(BaseModel):
    """The disclosed context for one query, with its budget, savings and timings explained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    items: tuple[DisclosedItem, ...] = ()
    level: DisclosureLevel
    analysis: QueryAnalysis
    budget: int = Field(ge=0)
    tokens_used: int = Field(ge=0)
    full_history_tokens: int = Field(ge=0)
    expansion_reason: str | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
    tokens_exact: bool = True
    budget_reason: str = ""
    profile: str = ""
    omitted: tuple[str, ...] = ()  # candidates left out for lack of budget, best first
    warnings: tuple[str, ...] = ()  # what went wrong but did not stop the disclosure
    top_score: float | None = None  # the best confidence among the candidates
    lead_score: float | None = None  # the confidence of the fused leader (rank 0)
    budget_probe: bool = False  # the budget showed the level's cut-off, not the learned cut

    @property
    def savings(self) -> float:
        """How many times smaller than the full history the context is (0 when nothing was used)."""
        return self.full_history_tokens / self.tokens_used if self.tokens_used else 0.0

    @property
    def savings_line(self) -> str:
        """The savings line: ``Using 1.2K tokens from conversation (14x savings via ...)``."""
        return savings_line(self.tokens_used, self.full_history_tokens, exact=self.tokens_exact)

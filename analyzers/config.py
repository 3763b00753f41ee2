"""The analyzer's profile section: every list and threshold it uses comes from here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from analyzers.levels import DisclosureLevel


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _default_keywords() -> dict[DisclosureLevel, tuple[str, ...]]:
    # Seed 002's complexity triggers. Phrases match as phrases; single words also by lemma.
    return {
        DisclosureLevel.MINIMAL: ("quick", "simple", "just", "only", "briefly"),
        DisclosureLevel.DETAILED: (
            "explain",
            "analyze",
            "investigate",
            "debug",
            "understand",
            "why",
            "how does",
        ),
        DisclosureLevel.COMPREHENSIVE: (
            "full context",
            "everything about",
            "complete history",
            "all details",
        ),
    }


def _default_overrides() -> dict[DisclosureLevel, tuple[str, ...]]:
    # Explicit requests that win over every other signal.
    return {
        DisclosureLevel.MINIMAL: ("brief", "briefly", "tl;dr", "in one line"),
        DisclosureLevel.DETAILED: ("in detail", "detailed", "show the details"),
        DisclosureLevel.COMPREHENSIVE: ("full context", "everything", "complete history"),
    }


class AnalyzerConfig(_Section):
    """Lists and thresholds of the QueryComplexityAnalyzer. Lists may mix languages."""

    default_level: DisclosureLevel = DisclosureLevel.STANDARD
    keywords: dict[DisclosureLevel, tuple[str, ...]] = Field(default_factory=_default_keywords)
    overrides: dict[DisclosureLevel, tuple[str, ...]] = Field(default_factory=_default_overrides)
    long_query_words: int = Field(default=30, gt=0)
    many_entities: int = Field(default=3, ge=0)
    spacy_pipeline: str | None = None

    @field_validator("keywords", "overrides")
    @classmethod
    def _non_blank(
        cls, value: dict[DisclosureLevel, tuple[str, ...]]
    ) -> dict[DisclosureLevel, tuple[str, ...]]:
        for level, phrases in value.items():
            if any(not phrase.strip() for phrase in phrases):
                raise ValueError(f"{level.value}: phrases must not be blank")
        return value

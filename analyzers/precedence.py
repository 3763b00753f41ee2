"""How the signals of a query combine into one level, and the complexity score.

The precedence, from strongest to weakest (each rule is tested, with the tricky cases that
motivated it):

1. **An explicit override wins** ("brief", "in detail", "full context", "자세히"): the level is
   the override's, whatever else fired; several overrides: the highest level they name (asking
   for both "brief" and "full context" still needs the context).
2. **The base** is the previous turn's level when the query is a continuation, else the
   profile's ``default_level``.
3. **Keywords** move the base: the highest keyword level above minimal raises it (it never
   lowers an inherited level). Minimal keywords ("just", "quick", "only") are softeners: they
   count only when no stronger keyword fires, and then they set minimal, even over an inherited
   level (the user narrowed the question). So "Just explain everything about the authentication
   system" is comprehensive ("everything about" beats "explain" beats "just"), and "Debug the
   issue" is detailed: debugging needs the full tool output and traceback, and "the issue"
   points back into memory.
4. **Floors** lift whatever the keywords decided: an expansion request or explicit id, a
   temporal reference, a long query and many entities each lift the level to at least their
   floor in the profile (detailed by default; minimal has no warm items, so "quick: what did we
   decide yesterday?" could not even see yesterday otherwise). A question asking for a set or a
   count (``enumeration``) has a floor too, null (none) unless the profile sets one.

The complexity refines the level: ``(rank + features) / 4`` where ``rank`` is the level's rank
(0-3) and ``features`` a weighted mean in [0, 1] of query length (words / long_query_words),
entity count (entities / (many_entities + 1)), a temporal reference, a continuation and the
number of trigger phrases (hits / 2), each capped at 1. So every level owns a quarter of
[0, 1] (minimal [0, 0.25], ..., comprehensive [0.75, 1]) and the score never contradicts the
level, unlike a plain sum of length, entities, temporal and continuation, which would give a
three-word "full context" request 0.03 and an adaptive budget to match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzers.config import AnalyzerConfig
from analyzers.levels import DisclosureLevel


@dataclass(frozen=True, slots=True)
class Vote:
    """A signal and the level it votes for; ``phrase`` is the trigger as the profile wrote it."""

    signal: str
    level: DisclosureLevel
    phrase: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """The level, the rule that decided it in words, and the override that won (if one did)."""

    level: DisclosureLevel
    reason: str
    override: str | None = None


def decide(
    *,
    default: DisclosureLevel,
    overrides: Sequence[Vote] = (),
    keywords: Sequence[Vote] = (),
    inherited: DisclosureLevel | None = None,
    floors: Sequence[Vote] = (),
) -> Decision:
    """Combine the votes by the documented precedence."""
    if overrides:
        top = max(overrides, key=lambda v: v.level.rank)
        return Decision(top.level, f"override {top.phrase!r} wins: {top.level}", top.phrase)
    if inherited is not None:
        level, reason = inherited, f"continuation inherits {inherited} from the previous turn"
    else:
        level, reason = default, f"no keyword: default {default}"
    level, reason = _apply_keywords(level, reason, keywords)
    for vote in floors:
        if vote.level > level:
            level, reason = vote.level, f"{vote.signal} lifts the level to {vote.level}"
    return Decision(level, reason)


def _apply_keywords(
    level: DisclosureLevel, reason: str, keywords: Sequence[Vote]
) -> tuple[DisclosureLevel, str]:
    if not keywords:
        return level, reason
    top = max(keywords, key=lambda v: v.level.rank)
    if top.level is DisclosureLevel.MINIMAL:
        return top.level, f"keyword {top.phrase!r} asks for less: minimal"
    softeners = [v.phrase for v in keywords if v.level is DisclosureLevel.MINIMAL]
    note = f" ({', '.join(map(repr, softeners))} read as a softener)" if softeners else ""
    if top.level > level:
        return top.level, f"keyword {top.phrase!r}: {top.level}{note}"
    return level, f"{reason}; keyword {top.phrase!r} ({top.level}) does not lower it{note}"


def complexity(
    level: DisclosureLevel,
    config: AnalyzerConfig,
    *,
    words: int,
    entities: int,
    temporal: bool,
    continuation: bool,
    triggers: int,
) -> float:
    """The query's complexity in [0, 1]: the level's quarter, placed by the features."""
    w = config.complexity
    features = (
        w.length * min(words / config.long_query_words, 1.0)
        + w.entities * min(entities / (config.many_entities + 1), 1.0)
        + w.temporal * temporal
        + w.continuation * continuation
        + w.keywords * min(triggers / 2, 1.0)
    ) / w.total
    return round((level.rank + features) / len(DisclosureLevel), 4)

"""The labelled query set: accuracy above a floor, and every decided case on its own."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzers import QueryAnalysis, QueryComplexityAnalyzer

DATA = Path(__file__).parent / "data" / "queries.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(DATA.read_text(encoding="utf-8"))["cases"]
NOW = datetime.fromisoformat(yaml.safe_load(DATA.read_text(encoding="utf-8"))["now"])

# Floors from the figures measured on the current defaults, minus a margin: all 238 cases
# 97.9% (level) and 97.9% (every field); the 40 held-out cases 92.5% (one miss is 2.5 points).
LEVEL_FLOOR = 0.95
FULL_FLOOR = 0.95
HELDOUT_FLOOR = 0.85


def _analyze(analyzer: QueryComplexityAnalyzer, case: dict[str, Any]) -> QueryAnalysis:
    return analyzer.analyze(case["q"], history=case.get("history", ()), now=NOW)


def _temporal_misses(expected: dict[str, Any], analysis: QueryAnalysis) -> list[str]:
    got = analysis.temporal
    if got is None:
        return ["temporal: none found"]
    misses = []
    for key in ("kind", "about"):
        if key in expected and getattr(got, key) != expected[key]:
            misses.append(f"temporal.{key}: {getattr(got, key)!r} != {expected[key]!r}")
    for key in ("start", "end"):
        if key in expected:
            want = expected[key] and datetime.fromisoformat(expected[key])
            if getattr(got, key) != want:
                misses.append(f"temporal.{key}: {getattr(got, key)} != {want}")
    return misses


def misses_of(case: dict[str, Any], analysis: QueryAnalysis) -> list[str]:
    """Every labelled expectation of ``case`` that ``analysis`` does not meet."""
    misses = []
    if analysis.level != case["level"]:
        misses.append(f"level: {analysis.level} != {case['level']} ({analysis.reason})")
    signals = set(analysis.detected_signals)
    misses += [f"signal missing: {s}" for s in case.get("signals", ()) if s not in signals]
    misses += [f"signal present: {s}" for s in case.get("absent", ()) if s in signals]
    if "entities" in case and set(analysis.entities) != set(case["entities"]):
        misses.append(f"entities: {sorted(analysis.entities)} != {sorted(case['entities'])}")
    if "ids" in case and list(analysis.explicit_ids) != case["ids"]:
        misses.append(f"ids: {list(analysis.explicit_ids)} != {case['ids']}")
    for key, attr in (("expansion", "expansion_request"), ("continuation", "is_continuation")):
        if key in case and getattr(analysis, attr) != case[key]:
            misses.append(f"{key}: {getattr(analysis, attr)} != {case[key]}")
    if "temporal" in case:
        misses += _temporal_misses(case["temporal"], analysis)
    return misses


def test_the_set_is_big_and_covers_every_level_and_signal_family() -> None:
    """At least 150 cases, every level, and cases for each signal family."""
    assert len(CASES) >= 150
    assert sum(bool(c.get("heldout")) for c in CASES) >= 40
    assert {c["level"] for c in CASES} == {"minimal", "standard", "detailed", "comprehensive"}
    labelled = " ".join(s for c in CASES for s in c.get("signals", ()))
    for family in ("override:", "keyword:", "explicit_id", "expansion_request", "continuation"):
        assert family in labelled
    assert {"long_query", "many_entities"} <= set(labelled.split())
    assert sum("history" in c for c in CASES) >= 15
    assert sum("temporal" in c for c in CASES) >= 20
    assert sum(any("\uac00" <= ch <= "\ud7a3" for ch in c["q"]) for c in CASES) >= 15


def _accuracy(results: list[tuple[dict[str, Any], list[str]]]) -> tuple[float, float, str]:
    level_ok = sum(not any(m.startswith("level:") for m in misses) for _, misses in results)
    full_ok = sum(not misses for _, misses in results)
    n = len(results)
    text = (
        f"level {level_ok / n:.1%} ({level_ok}/{n}), every field {full_ok / n:.1%} ({full_ok}/{n})"
    )
    return level_ok / n, full_ok / n, text


def test_labelled_accuracy_stays_above_the_floor(
    analyzer: QueryComplexityAnalyzer, record_property: Any
) -> None:
    """Level accuracy and full-case accuracy on the labelled set stay above their floors."""
    results = [(case, misses_of(case, _analyze(analyzer, case))) for case in CASES]
    level_acc, full_acc, overall = _accuracy(results)
    heldout_acc, _, heldout = _accuracy([r for r in results if r[0].get("heldout")])
    failing = [f"  {case['q']!r}: {'; '.join(misses)}" for case, misses in results if misses]
    summary = (
        f"all {len(CASES)} cases: {overall}; held out (never tuned on): {heldout}; "
        f"floors {LEVEL_FLOOR:.0%} / {FULL_FLOOR:.0%} / held out {HELDOUT_FLOOR:.0%}"
    )
    record_property("analyzer_accuracy", "\n".join([summary, *failing]))
    assert level_acc >= LEVEL_FLOOR, summary
    assert full_acc >= FULL_FLOOR, summary
    assert heldout_acc >= HELDOUT_FLOOR, summary


STRICT = [c for c in CASES if c.get("strict")]


@pytest.mark.parametrize("case", STRICT, ids=[c["q"][:40] for c in STRICT])
def test_decided_case_holds(analyzer: QueryComplexityAnalyzer, case: dict[str, Any]) -> None:
    """A case whose outcome the design decided (the tricky ones, precedence) holds."""
    assert misses_of(case, _analyze(analyzer, case)) == []

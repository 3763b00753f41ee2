"""The analyzer's profile section: strict validation, and the built-in profiles' variations."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from analyzers import AnalyzerConfig, DisclosureLevel, QueryComplexityAnalyzer
from disclosure import load_profile


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"keywords": {"detailed": ["explain", " "]}}, "detailed: phrases must not be blank"),
        ({"expansion": [""]}, "expansion: phrases must not be blank"),
        ({"temporal": {"yesterday": [""]}}, "temporal -> yesterday: phrases must not be blank"),
        ({"entities": {"gazetteer": {"GPE": [" "]}}}, "gazetteer -> GPE: phrases must not be"),
        ({"id_prefixes": ["mem:"]}, "id prefix 'mem:' must be ASCII letters and digits"),
        (
            {
                "complexity": {
                    "length": 0,
                    "entities": 0,
                    "temporal": 0,
                    "continuation": 0,
                    "keywords": 0,
                }
            },
            "at least one weight must be positive",
        ),
        ({"summary": {"max_chars": 120}}, "less than or equal to 100"),
        ({"floors": {"temporal": "loud"}}, "Input should be"),
        ({"continuation": {"startz": ["and"]}}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_values_are_rejected_with_a_reason(data: dict[str, object], message: str) -> None:
    """Blank phrases, bad prefixes, zero weights, typos: each fails naming the problem."""
    with pytest.raises(ValidationError, match=message):
        AnalyzerConfig.model_validate(data)


def test_the_builtin_profiles_tune_the_analyzer() -> None:
    """chat adds 'remind me' as a minimal keyword; coding-agent counts 3 entities as many."""
    chat = QueryComplexityAnalyzer(load_profile("chat").analyzer)
    assert chat.analyze("remind me of the port").level is DisclosureLevel.MINIMAL
    coding = QueryComplexityAnalyzer(load_profile("coding-agent").analyzer)
    result = coding.analyze("compare a.py, b.py and c.py")
    assert "many_entities" in result.detected_signals
    assert coding.analyze("show me the stack trace").level is DisclosureLevel.DETAILED

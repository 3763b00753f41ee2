"""Shared fixtures for the analyzer tests: one analyzer (one spaCy pipeline) per session."""

from __future__ import annotations

from typing import Any

import pytest

from analyzers import AnalyzerConfig, QueryComplexityAnalyzer


@pytest.fixture(scope="session")
def analyzer() -> QueryComplexityAnalyzer:
    """The analyzer on the built-in defaults (the trained pipeline, when installed)."""
    return QueryComplexityAnalyzer(AnalyzerConfig())


@pytest.fixture(scope="session")
def rules_analyzer() -> QueryComplexityAnalyzer:
    """The analyzer on the rule pipeline alone (``spacy_pipeline: null``)."""
    return QueryComplexityAnalyzer(AnalyzerConfig(spacy_pipeline=None))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the labelled-set accuracy recorded by the accuracy test (also in the JUnit XML)."""
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get(
        "failed", []
    ):
        props = dict(getattr(report, "user_properties", []))
        if "analyzer_accuracy" in props:
            terminalreporter.write_sep("-", "analyzer: labelled query set")
            terminalreporter.write_line(str(props["analyzer_accuracy"]))

"""Shared fixtures for the analyzer tests: one analyzer (one spaCy pipeline) per session."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzers import AnalyzerConfig, QueryComplexityAnalyzer

DATA = Path(__file__).parent / "data" / "queries.yaml"
NOW = datetime(2025, 3, 12, 15, 30, tzinfo=UTC)  # a Wednesday afternoon


@pytest.fixture(scope="session")
def analyzer() -> QueryComplexityAnalyzer:
    """The analyzer on the built-in defaults."""
    return QueryComplexityAnalyzer(AnalyzerConfig())


@pytest.fixture(scope="session")
def labelled() -> dict[str, Any]:
    """The labelled query set."""
    data: dict[str, Any] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    return data


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the labelled-set accuracy recorded by the accuracy test (also in the JUnit XML)."""
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get(
        "failed", []
    ):
        props = dict(getattr(report, "user_properties", []))
        if "analyzer_accuracy" in props:
            terminalreporter.write_sep("-", "analyzer: labelled query set")
            terminalreporter.write_line(str(props["analyzer_accuracy"]))

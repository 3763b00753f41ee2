"""Shared fixtures: the LoCoMo-format and JSONL fixtures written for this project."""

from __future__ import annotations

from pathlib import Path

import pytest

from disclosure.evaluation import Dataset, load_locomo

DATA = Path(__file__).resolve().parent / "data"
LOCOMO_TINY = DATA / "locomo_tiny.json"
JSONL_TINY = DATA / "tiny.jsonl"


@pytest.fixture(scope="session")
def tiny() -> Dataset:
    return load_locomo(LOCOMO_TINY)

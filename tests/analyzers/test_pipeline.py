"""The rule pipeline: built once per process and shared, stems, and trained pipelines."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from analyzers import AnalyzerConfig, DisclosureLevel, QueryComplexityAnalyzer, enrich
from analyzers.pipeline import Pipeline, get_pipeline, pipeline_key
from analyzers.text import is_latin, stem

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("forms", "trigger"),
    [
        (("analyzing", "analyzed", "analyzes", "Analyze"), "analyze"),
        (("explained", "explaining", "explains"), "explain"),
        (("debugging", "debugged", "debugs"), "debug"),
        (("investigating", "investigated", "investigates"), "investigate"),
        (("discussed", "discussing", "discusses"), "discuss"),
        (("details",), "detail"),
        (("summaries",), "summary"),
    ],
)
def test_the_stemmer_meets_inflections_with_their_trigger(
    forms: tuple[str, ...], trigger: str
) -> None:
    """Regular inflections share the trigger's stem ("debugging" meets "debug")."""
    assert {stem(form) for form in forms} == {stem(trigger)}


def test_the_stemmer_leaves_short_and_non_ascii_words_alone() -> None:
    """Short words, Korean and mixed tokens are only lowercased."""
    assert [stem(w) for w in ("why", "Was", "설명해", "mem_12", "pass", "status")] == [
        "why",
        "was",
        "설명해",
        "mem_12",
        "pass",
        "status",
    ]
    assert stem("adding") == "add" and stem("stopped") == "stop" and stem("filled") == "fill"


def test_script_detection() -> None:
    """Latin phrases (accents included) go to the word matcher; others to substrings."""
    assert is_latin("full context") and is_latin("café crème")
    assert not is_latin("자세히") and not is_latin("詳しく") and not is_latin("mem 설명")


def test_one_pipeline_per_process_for_equal_configs(analyzer: QueryComplexityAnalyzer) -> None:
    """Analyzers and enrich() on equal configs share one pipeline object."""
    again = QueryComplexityAnalyzer(AnalyzerConfig())
    assert again.pipeline is analyzer.pipeline
    assert get_pipeline(AnalyzerConfig()) is analyzer.pipeline
    enrich("warms the shared pipeline")
    assert get_pipeline(AnalyzerConfig()) is analyzer.pipeline


def test_thresholds_share_the_pipeline_but_lists_do_not(analyzer: QueryComplexityAnalyzer) -> None:
    """Changing a threshold reuses the pipeline; changing a trigger list builds another."""
    thresholds = AnalyzerConfig(long_query_words=12, many_entities=1, floors={"temporal": None})
    assert QueryComplexityAnalyzer(thresholds).pipeline is analyzer.pipeline
    lists = AnalyzerConfig(keywords={DisclosureLevel.DETAILED: ("elucidate",)})
    assert pipeline_key(lists) != pipeline_key(AnalyzerConfig())
    other = QueryComplexityAnalyzer(lists)
    assert other.pipeline is not analyzer.pipeline
    assert other.analyze("please elucidate").level is DisclosureLevel.DETAILED
    assert analyzer.analyze("please elucidate").level is DisclosureLevel.STANDARD


def test_concurrent_first_use_builds_one_pipeline() -> None:
    """Threads racing to build the same new pipeline all get the same object."""
    config = AnalyzerConfig(id_prefixes=("race",))
    seen: list[Pipeline] = []
    threads = [threading.Thread(target=lambda: seen.append(get_pipeline(config))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4 and all(p is seen[0] for p in seen)


def test_the_entity_ruler_keeps_its_patterns(analyzer: QueryComplexityAnalyzer) -> None:
    """The ruler is never re-initialised (that would wipe its patterns): the gazetteer works."""
    ruler = analyzer.pipeline.nlp.get_pipe("entity_ruler")
    assert len(ruler.patterns) > 20  # type: ignore[attr-defined]
    assert analyzer.pipeline.nlp.pipe_names == ["sentencizer", "entity_ruler"]
    assert "Kubernetes" in analyzer.analyze("Is Kubernetes up?").entities


def test_a_named_pipeline_that_is_not_installed_fails_when_built() -> None:
    """The error names the pipeline and says what to do."""
    config = AnalyzerConfig(spacy_pipeline="en_core_web_nosuch")
    with pytest.raises(
        LookupError, match=r"'en_core_web_nosuch' is not installed.*spacy_pipeline: null"
    ):
        QueryComplexityAnalyzer(config)


def test_a_trained_pipeline_adds_its_entities(tmp_path: Path) -> None:
    """A pipeline directory named in the profile is loaded and its entities are used."""
    import spacy

    trained = spacy.blank("en")
    trained.add_pipe("entity_ruler").add_patterns(  # type: ignore[attr-defined]
        [{"label": "PERSON", "pattern": "zorblax"}, {"label": "DATE", "pattern": "monday"}]
    )
    trained.to_disk(tmp_path / "tiny_pipeline")
    config = AnalyzerConfig(spacy_pipeline=str(tmp_path / "tiny_pipeline"))
    analyzer = QueryComplexityAnalyzer(config)
    assert analyzer.pipeline.trained is not None
    result = analyzer.analyze("did zorblax fix app.py on monday?")
    assert result.entities == ("zorblax", "app.py")  # DATE is not a kept label
    assert enrich("zorblax wrote it", config=config).entities == ("zorblax",)


def test_importing_analyzers_does_not_import_spacy() -> None:
    """spaCy is imported lazily, when a pipeline is first built."""
    code = "import sys, analyzers; print('spacy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_threads_share_an_analyzer_safely(analyzer: QueryComplexityAnalyzer) -> None:
    """Analyses run from four threads at once equal the same analyses run one by one."""
    from concurrent.futures import ThreadPoolExecutor
    from datetime import UTC, datetime

    now = datetime(2025, 3, 12, tzinfo=UTC)
    queries = [
        "Just explain everything about auth in src/auth.py",
        "what did Alice say yesterday?",
        "자세히 알려줘",
        "show mem_12 and [mem:a7Bc3x]",
    ] * 25
    expected = [analyzer.analyze(q, now=now) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda q: analyzer.analyze(q, now=now), queries))
    assert got == expected

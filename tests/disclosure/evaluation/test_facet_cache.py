"""The evaluation's vector cache keeps memories' facets too, so a run reads each haystack with
the trained pipeline once (LongMemEval's take as long to read as to embed)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from analyzers import AnalyzerConfig, facets_many
from disclosure.evaluation.embedding import DocumentVectorCache
from disclosure.evaluation.experiment import ProfileSpec
from disclosure.evaluation.runner import profile_system
from tiers import Memory, get_embedder

LONG = "We talked about nothing much for a while. " * 8 + "Then I flew to Lisbon with Maria."
TEXTS = ["I moved to Denver last spring.", "Nate plays Counter-Strike every night.", LONG]


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM facets").fetchone()[0])


def test_remembered_facets_are_the_pipelines_and_kept_per_configuration(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    cache = DocumentVectorCache(get_embedder("auto"), path)
    first = cache.facets([*TEXTS, TEXTS[0]])
    assert first == facets_many([*TEXTS, TEXTS[0]])
    assert any(f.startswith("GPE:denver") for f in first[0])
    assert _rows(path) == 3  # a text read once, however often it is asked for
    cache.close()

    again = DocumentVectorCache(get_embedder("auto"), path)
    assert again.facets(TEXTS) == first[:3]
    assert _rows(path) == 3
    short = AnalyzerConfig.model_validate({"entities": {"trained_chars": 100}})
    cut = again.facets([LONG], config=short)
    assert cut == facets_many([LONG], config=short)
    assert _rows(path) == 4  # another configuration reads the text again, under its own key
    again.close()


def test_an_evaluated_profile_builds_its_gathering_index_through_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    cache = DocumentVectorCache(get_embedder("auto"), path)
    system = profile_system(ProfileSpec(profile="default"), embedder=cache)
    turns = [Memory(id=f"m{n}", content=t, speaker="Nate") for n, t in enumerate(TEXTS)]
    discloser = system.factory(tmp_path / "run")
    try:
        with cache.documents():
            discloser.ingest(turns)
        assert discloser.settle(timeout=300)  # type: ignore[attr-defined]
        facets = discloser.facets.of(["m0"])  # type: ignore[attr-defined]
        assert any(f.startswith("GPE:denver") for f in facets["m0"])
    finally:
        discloser.close()
    assert _rows(path) == 3
    cache.close()

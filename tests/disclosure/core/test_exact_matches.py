"""An exact identifier, number or code in the query finds its memory at every level, among
hundreds of memories that differ only in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzers import DisclosureLevel
from disclosure import DisclosureController, Profile, load_profile
from tests.disclosure.conftest import make_lean_profile

NOTES = [
    {"id": f"note-{n}", "content": f"note {n}: the courier code for parcel {n} is QX{n:04d}"}
    for n in range(1, 301)
]
QUERIES = ["courier code for parcel 42", "parcel 42", "QX0042", "which parcel has code QX-0042?"]


def lean(name: str) -> Profile:
    data = load_profile(name).model_dump(mode="json")
    data["tiers"] = make_lean_profile().model_dump(mode="json")["tiers"]
    return Profile.model_validate(data)


@pytest.fixture(scope="module", params=["default", "compact"])
def notes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    data_dir: Path = tmp_path_factory.mktemp(request.param)
    with DisclosureController(lean(request.param), data_dir=data_dir) as controller:
        controller.ingest(NOTES)
        yield controller


@pytest.mark.parametrize("level", list(DisclosureLevel))
@pytest.mark.parametrize("query", QUERIES)
def test_the_named_parcel_comes_first_at_every_level(
    notes: DisclosureController, level: DisclosureLevel, query: str
) -> None:
    """Note 42 is the best item and its text is in the context, whatever the level."""
    result = notes.disclose(query, level=level)
    assert result.items[0].id == "note-42", [i.id for i in result.items[:5]]
    assert "QX0042" in result.text
    assert result.tokens_used <= result.budget


def test_a_quick_question_reaches_the_archive(notes: DisclosureController) -> None:
    """'quick:' picks the minimal level, which still searches the archive's BM25."""
    result = notes.disclose("quick: courier code for parcel 42?")
    assert result.level is DisclosureLevel.MINIMAL
    assert result.items and result.items[0].id == "note-42"

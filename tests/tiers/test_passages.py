"""Passage vectors: a long memory is found by any of its parts, and forget erases its passages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.disk_bytes import files_with
from tiers import Memory
from tiers.config import WarmConfig
from tiers.onnx_embedder import OnnxEmbedder
from tiers.passages import parent_of, passage_id, split_passages
from tiers.warm import WarmTier

FILLER = (
    "The quarterly planning meeting covered hiring targets for the platform group and the "
    "budget for the next two quarters. "
)
MIDDLE = "For the allergy question, the pharmacist recommended cetirizine at bedtime."


def long_answer(middle: str = MIDDLE) -> str:
    """An assistant answer of ~600 words whose one relevant sentence sits past its first half."""
    return FILLER * 20 + middle + " " + FILLER * 20


def test_split_keeps_sentences_whole_and_leaves_short_texts_alone() -> None:
    text = long_answer()
    passages = split_passages(text, 80)
    assert len(passages) >= 6
    assert all(len(p.split()) <= 80 for p in passages)
    assert any(MIDDLE in p for p in passages)  # the sentence is not cut in two
    assert " ".join(passages).split() == text.split()  # nothing lost, nothing repeated
    assert split_passages("a short note.", 80) == []
    assert split_passages(text, 0) == []
    assert split_passages("word " * 200, 50) == [" ".join(["word"] * 50)] * 4  # one long sentence


def test_passage_ids_parse_back_to_any_memory_id() -> None:
    for memory_id in ("m1", "a#p1", "x#p", "#p0#p"):
        assert parent_of(passage_id(memory_id, 3)) == memory_id


def _memories() -> list[Memory]:
    answer = Memory(id="a1", content=long_answer(), speaker="assistant", session_id="s1")
    others = [
        Memory(id=f"n{i}", content=f"Note {i}: {FILLER}", speaker="user", session_id="s2")
        for i in range(20)
    ]
    return [answer, *others]


@pytest.mark.parametrize("passage_words", [0, 120])
def test_a_long_memory_is_found_by_its_middle_only_with_passages(
    tmp_path: Path, onnx_embedder: OnnxEmbedder, passage_words: int
) -> None:
    config = WarmConfig(passage_words=passage_words)
    warm = WarmTier(tmp_path / "chroma", config, onnx_embedder)
    try:
        warm.add(_memories())
        query = "which antihistamine did the pharmacist suggest for my allergy?"
        ids = [i for i, _ in warm.search_ids(query, 3)]
        hits = [h.id for h in warm.search(query, 3)]
        assert ids == hits  # both search paths agree
        if passage_words:
            assert ids[0] == "a1"
            assert warm.stats()["passages"] >= 4
            assert warm.count() == 21  # passages are not memories
        else:
            assert "a1" not in ids  # its vector covers only its opening
            assert warm.stats()["passages"] == 0
    finally:
        warm.close()


def test_new_text_replaces_passages_and_forget_erases_them(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    directory = tmp_path / "chroma"
    warm = WarmTier(directory, WarmConfig(passage_words=120), onnx_embedder)
    try:
        warm.add(_memories())
        before = warm.stats()["passages"]
        query = "which antihistamine did the pharmacist suggest for my allergy?"
        found = dict(warm.search_ids(query, 21))["a1"]
        warm.add([Memory(id="a1", content="A short answer now.", speaker="assistant")])
        assert warm.stats()["passages"] == 0 < before
        assert dict(warm.search_ids(query, 21))["a1"] < found - 0.2  # the old passages are gone
        secret = "The vault combination is zebra-4471-quartz."
        warm.add([Memory(id="a2", content=long_answer(secret), speaker="assistant")])
        assert warm.stats()["passages"] > 0
        warm.forget(["a2"])
        assert warm.stats()["passages"] == 0
    finally:
        warm.close()
    assert files_with(directory, "zebra-4471") == []


def test_passages_written_before_are_still_searched_and_erased_when_turned_off(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """Turning passage_words off does not orphan what was indexed: forget still finds it."""
    directory = tmp_path / "chroma"
    warm = WarmTier(directory, WarmConfig(passage_words=120), onnx_embedder)
    warm.add(_memories())
    warm.close()
    warm = WarmTier(directory, WarmConfig(), onnx_embedder)
    try:
        assert warm.stats()["passages"] > 0
        warm.forget(["a1"])
        assert warm.stats()["passages"] == 0
    finally:
        warm.close()
    assert files_with(directory, "cetirizine") == []

"""Warm search by ids: the store reads hits from the archive and keeps only current vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiers import Memory, TieredStore
from tiers.config import TiersConfig
from tiers.lifecycle import IdSearch
from tiers.memory import PARSED_CACHE_SIZE
from tiers.onnx_embedder import OnnxEmbedder

TEXTS = {
    "pg": "We moved the billing service from SQLite to Postgres last Friday.",
    "cron": "The nightly cron job sends the invoice emails at two in the morning.",
    "lunch": "Lunch at the noodle place was great, we should go again.",
}
MANUAL = TiersConfig.model_validate({"outbox": {"drain": "manual"}})


def memories(**changed: str) -> list[Memory]:
    return [Memory(id=i, content=changed.get(i, text)) for i, text in TEXTS.items()]


def test_search_ids_matches_search(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    """The warm tier's (id, score) pairs are its search hits, in order, without the records."""
    with TieredStore(tmp_path, embedder=onnx_embedder) as store:
        store.ingest(memories())
        assert store.warm is not None and isinstance(store.warm, IdSearch)
        hits = store.warm.search("postgres billing migration", 3)
        pairs = store.warm.search_ids("postgres billing migration", 3)
    assert pairs == [(h.id, pytest.approx(h.score)) for h in hits]
    assert pairs[0][0] == "pg"


def test_a_vector_of_old_content_is_not_a_hit_until_it_is_embedded_again(
    tmp_path: Path, onnx_embedder: OnnxEmbedder
) -> None:
    """New content not yet embedded: the old vector's hit is dropped; after flush the memory is
    found again, read from the archive with its new content; a forgotten one never comes back."""
    with TieredStore(tmp_path, MANUAL, embedder=onnx_embedder) as store:
        store.ingest(memories())
        store.flush()
        store.ingest(memories(pg="Priya owns the invoice renderer now."))
        assert "pg" not in {h.id for h in store.search("warm", "postgres billing migration", 3)}
        store.flush()
        hits = {h.id: h for h in store.search("warm", "who owns the invoice renderer", 3)}
        assert hits["pg"].memory.content == "Priya owns the invoice renderer now."
        assert hits["pg"].tier == "warm"
        store.forget(["cron"])
        assert "cron" not in {h.id for h in store.search("warm", "nightly invoice emails", 3)}


def test_parsed_records_are_shared_but_their_metadata_is_not() -> None:
    """from_json keeps parsed records (same text, same instance); metadata comes back copied."""
    plain = Memory(id="a", content="x")
    assert Memory.from_json(plain.to_json()) is Memory.from_json(plain.to_json())
    rich = Memory(id="b", content="y", metadata={"tags": ["t"]})
    first = Memory.from_json(rich.to_json())
    first.metadata["tags"].append("mutated")
    assert Memory.from_json(rich.to_json()).metadata == {"tags": ["t"]}
    assert PARSED_CACHE_SIZE > 0

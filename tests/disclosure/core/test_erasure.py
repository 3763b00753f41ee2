"""Forget erases: after it returns, no file of the namespace holds the forgotten text.

Real tiers: the SQLite archive (FTS5 and rank_bm25 engines), Chroma embedded with MiniLM, the
disk caches. The token is written in every field of a memory and of an earlier version of it;
the caches are filled by disclosing and showing it; then every byte of every file is searched.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from disclosure.core.controller import DisclosureController
from disclosure.core.profiles import Profile, load_profile
from tests.disk_bytes import files_with
from tiers.memory import Memory

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
TOKEN = "zqxvbeaconword"


def secret_memories() -> list[Memory]:
    plain = [
        Memory(id=f"p{i}", content=f"we talked about the garden fence, part {i}", session_id="s1")
        for i in range(30)
    ]
    return plain


def with_secret(content: str) -> Memory:
    return Memory(
        id="secret",
        content=content,
        session_id="s1",
        summary=f"the password {TOKEN}",
        entities=[TOKEN],
        metadata={"note": TOKEN, "nested": {"deep": [TOKEN]}},
        speaker="user",
    )


def profile(engine: str) -> Profile:
    data = load_profile("default").model_dump(mode="json")
    data["tiers"]["cold"]["engine"] = engine
    return Profile.model_validate(data)


@pytest.mark.parametrize("engine", ["fts5", "rank_bm25"])
def test_forget_leaves_no_byte_of_the_text_in_any_file(tmp_path: Path, engine: str) -> None:
    data = tmp_path / "data"
    with DisclosureController.from_profile(profile(engine), data_dir=data) as controller:
        controller.ingest(secret_memories())
        controller.ingest([with_secret(f"my old password is {TOKEN} for the bank")])
        controller.ingest([with_secret(f"my new password is {TOKEN}2 for the bank")])
        assert controller.store.flush() == 0
        assert controller.store.warm is not None and controller.store.warm.count() == 31
        result = controller.disclose(f"what is my password {TOKEN}", now=NOW)
        assert "secret" in [item.id for item in result.items]
        assert TOKEN in controller.show("secret")
        assert files_with(data, TOKEN), "the test must see the token before forgetting"

        report = controller.forget(ids=["secret"])

        assert report.ids == ("secret",)
        assert files_with(data, TOKEN) == []  # while the store is open ...
        # ... and the store still works afterwards
        assert controller.disclose("the garden fence", now=NOW).items
        controller.ingest([Memory(id="after", content="a new memory after the forget")])
    assert files_with(data, TOKEN) == []  # ... and once it is closed
    with DisclosureController.from_profile(profile(engine), data_dir=data) as reopened:
        assert reopened.store.count() == 31
        assert reopened.store.get(["secret"]) == []


@pytest.mark.xfail(
    reason="hnswlib writes uninitialised memory into Chroma's HNSW files (see HNSW_FILES)",
    strict=False,
)
def test_chromas_hnsw_files_hold_no_text_after_forget(tmp_path: Path) -> None:
    """Known leak, kept visible: passes when the heap garbage happens to hold no copy."""
    data = tmp_path / "data"
    with DisclosureController.from_profile(profile("fts5"), data_dir=data) as controller:
        controller.ingest([*secret_memories(), with_secret(f"my password is {TOKEN}")])
        assert controller.store.flush() == 0
        controller.forget(ids=["secret"])
    assert files_with(data, TOKEN, hnsw=True) == []

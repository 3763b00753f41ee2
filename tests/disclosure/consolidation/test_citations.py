"""Citation usage (feedback records which citations replies used) and citation styles."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from disclosure import DisclosureController
from disclosure.core.citation_styles import restyle_text
from disclosure.faces.cli import main
from tests.disclosure.consolidation.conftest import START, hand_made, profile_with

NOW = START + timedelta(hours=5)


def test_feedback_records_the_citations_a_reply_used(tmp_path: Path) -> None:
    with DisclosureController(profile_with(), data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        result = controller.disclose("What about the offsite in Lisbon?", level="detailed", now=NOW)
        lisbon = result.items[0]
        controller.feedback(result, f"It is in Lisbon [{lisbon.citation}].", session_id="chat-1")
        again = controller.disclose("When is the Lisbon offsite?", level="detailed", now=NOW)
        assert lisbon.id in {i.id for i in again.items}
        controller.feedback(again, f"May 20 [{lisbon.citation}].", session_id="chat-2")
        top = controller.citations(top=3)
        assert top[0].memory_id == lisbon.id and top[0].cited == 2
        assert top[0].citation == lisbon.citation
        uses = controller.where_cited(lisbon.citation)
        assert [(u.session_id, u.query, u.how) for u in uses] == [
            ("chat-2", "When is the Lisbon offsite?", "cited"),
            ("chat-1", "What about the offsite in Lisbon?", "cited"),
        ]
        points = controller.citation_log.replies()
        assert len(points) == 2 and points[0].tokens_used == result.tokens_used
        controller.forget(ids=[lisbon.id])
        assert all(c.memory_id != lisbon.id for c in controller.citations(top=10))
        files = list(tmp_path.glob("citations.sqlite3*"))
        assert files and not any(lisbon.citation.encode() in f.read_bytes() for f in files)


def test_the_cli_lists_the_top_citations_and_consolidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("tiers: {warm: {embedder: none}}\n")
    common = ["--data-dir", str(tmp_path / "root"), "--profile", str(profile)]
    source = tmp_path / "m.jsonl"
    source.write_text("\n".join(m.model_dump_json() for m in hand_made()))
    assert main(["ingest", str(source), *common]) == 0
    assert main(["consolidate", "--all", "--json", *common]) == 0
    out = capsys.readouterr().out
    data = json.loads(out[out.index("{") :])
    assert data["counts"] == {"topic": 3, "session": 2, "memories": 8}
    assert main(["citations", "--top", "5", *common]) == 0
    assert "no reply has used a citation yet" in capsys.readouterr().out


TEXT = "Dana: Postgres 16 [mem:abcd12]\nPriya: migration [mem:efgh34] and again [mem:abcd12]\n"


def test_footnote_and_reference_styles() -> None:
    assert restyle_text(TEXT, "inline") == TEXT
    assert restyle_text(TEXT, "footnote") == (
        "Dana: Postgres 16 [1]\nPriya: migration [2] and again [1]\n\n"
        "Sources:\n[1] mem:abcd12\n[2] mem:efgh34\n"
    )
    assert restyle_text(TEXT, "reference") == (
        "Dana: Postgres 16\nPriya: migration and again\n\nSources:\n[mem:abcd12] [mem:efgh34]\n"
    )


def test_the_profile_style_applies_within_the_budget(tmp_path: Path) -> None:
    profile = profile_with(citations={"style": "footnote"})
    with DisclosureController(profile, data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        # room for every candidate with its footnote (a context packed to the brim keeps its
        # inline citations: the restyled text must fit the budget too)
        result = controller.disclose("What about the offsite in Lisbon?", budget=400, now=NOW)
        assert "[1]" in result.text and "\nSources:\n[1] mem:" in result.text
        assert "[mem:" not in result.text.split("Sources:")[0]
        assert result.tokens_used == controller.counter(result.text) <= result.budget

"""Ingest enrichment: a one-line extractive summary of at most 100 characters, and entities."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers import AnalyzerConfig, Enrichment, enrich, enrich_many
from analyzers.enrich import ELLIPSIS, fit


def test_the_first_informative_sentence_is_the_summary() -> None:
    """Filler openers give way to the sentence that carries the content."""
    text = "Sure! Here is what I found. The nightly batch held the SQLite lock for 40 minutes."
    assert enrich(text).summary == "The nightly batch held the SQLite lock for 40 minutes."


def test_code_fences_and_markdown_stay_out_of_the_summary() -> None:
    """Code blocks are skipped; headings, bullets, bold and links are unwrapped."""
    text = (
        "## Fix\n\nHere is the patch:\n\n```python\ndef f():\n    return 1\n```\n"
        "- **Root cause**: the [retry queue](https://x.example) re-sent charges."
    )
    assert enrich(text).summary == "Root cause: the retry queue re-sent charges."


def test_a_long_sentence_is_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    """Over 100 characters: cut between words (or at a clause), one ellipsis, one line."""
    text = (
        "The migration moved every invoice table from SQLite to Postgres sixteen and rewrote "
        "the nightly batch so that it takes an advisory lock before it sends any email at all."
    )
    summary = enrich(text).summary
    assert len(summary) <= 100 and summary.endswith(ELLIPSIS)
    assert text.startswith(summary[:-1])
    assert text[len(summary) - 1] == " "  # the cut fell between two words


def test_fit_prefers_a_late_clause_boundary() -> None:
    """A clause boundary in the last 40% of the room is where the cut goes."""
    text = (
        "The cache layer keeps invoices for an hour and the auth tokens for a day, "
        "then it evicts everything older than that window."
    )
    assert len(text) > 100
    assert fit(text, 100) == text[: text.index(",")] + ELLIPSIS
    early = "Decision: " + "word " * 30  # the colon is too early to be worth the loss
    assert fit(early, 100) == early[:99].rstrip() + ELLIPSIS
    assert fit("short", 100) == "short"
    assert fit("x" * 300, 100) == "x" * 99 + ELLIPSIS


def test_entities_are_ranked_by_frequency() -> None:
    """The most mentioned entity comes first; names, files, tickets are all found."""
    text = (
        "Marco added pg_advisory_lock in jobs/nightly_batch.py. Later Marco asked Priya to "
        "review jobs/nightly_batch.py and to close BILL-482. The lock in jobs/nightly_batch.py "
        "works."
    )
    result = enrich(text)
    assert result.entities[0] == "jobs/nightly_batch.py"
    assert {"Marco", "Priya", "pg_advisory_lock", "BILL-482"} <= set(result.entities)


def test_entity_count_is_capped_by_the_profile() -> None:
    """max_entities bounds the list."""
    config = AnalyzerConfig(entities={"max_entities": 2})
    text = "a.py b.py c.py d.py a.py"
    assert enrich(text, config=config).entities == ("a.py", "b.py")


def test_enrich_many_matches_enrich_and_keeps_order() -> None:
    """The batch form gives the same results as one call per text, in order."""
    texts = ["We picked ReportLab.", "자세한 내용은 auth.py 참고. 토큰 만료 로직이 바뀌었다.", "ok"]
    assert enrich_many(texts) == [enrich(t) for t in texts]
    assert enrich_many([]) == []


def test_korean_and_tiny_texts() -> None:
    """Korean sentences summarise too; a one-word text is its own summary."""
    result = enrich("네, 알겠습니다. 결제 모듈의 재시도 로직은 지수 백오프를 씁니다.")
    assert result.summary == "결제 모듈의 재시도 로직은 지수 백오프를 씁니다."
    assert enrich("ok") == Enrichment(entities=(), summary="ok")
    assert enrich("   ") == Enrichment(entities=(), summary="")


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=600))
def test_any_text_gets_a_one_line_summary_of_at_most_100_chars(text: str) -> None:
    """Whatever the text, the summary is one line of at most 100 characters."""
    summary = enrich(text).summary
    assert len(summary) <= 100
    assert "\n" not in summary and "\r" not in summary

"""The metrics on small hand-made cases, each figure computed by hand in the docstring."""

from __future__ import annotations

import pytest

from analyzers import DisclosureLevel, QueryAnalysis
from disclosure.core.result import DisclosedItem, DisclosureResult
from disclosure.evaluation import (
    Question,
    QuestionRecord,
    collapse_whitespace,
    evidence_found,
    score_result,
    summarize,
)
from disclosure.evaluation.metrics import breakdown
from formatters.base import Layer
from formatters.tokens import get_token_counter

CONTENTS = {
    "c/1": "We moved billing to Postgres on March 3.",
    "c/2": "Priya owns the  invoice\nrenderer.",
    "c/3": "The deadline is April 15.",
    "c/4": "Lunch was great.",
}


def result(
    text: str, ids: tuple[str, ...], *, budget: int = 100, used: int | None = None
) -> DisclosureResult:
    counter = get_token_counter()
    level = DisclosureLevel.STANDARD
    return DisclosureResult(
        text=text,
        items=tuple(
            DisclosedItem(id=i, citation=i, tier="t", layer=Layer.DETAIL, score=1.0, tokens=1)
            for i in ids
        ),
        level=level,
        analysis=QueryAnalysis(query="q", level=DisclosureLevel.DETAILED),
        budget=budget,
        tokens_used=counter(text) if used is None else used,
        full_history_tokens=0,
    )


def record(
    question: Question, res: DisclosureResult, *, full: int = 200, budget: int | None = None
) -> QuestionRecord:
    return score_result(
        system="s",
        question=question,
        result=res,
        contents=CONTENTS,
        count_tokens=get_token_counter(),
        full_tokens=full,
        latency_ms=1.0,
        budget=budget,
    )


def q(qid: str, *evidence: str, category: str = "single-hop") -> Question:
    return Question(id=qid, conversation_id="c", text="?", evidence=evidence, category=category)


def test_whitespace_is_collapsed_before_comparing() -> None:
    """A turn whose text was re-wrapped by a formatter still counts as present."""
    assert collapse_whitespace("  a \n b\t\tc ") == "a b c"
    text = "[mem:x] Priya owns the invoice renderer.\n[mem:y] The deadline is\nApril 15."
    assert evidence_found(text, {k: CONTENTS[k] for k in ("c/2", "c/3")}) == ("c/2", "c/3")


def test_a_gold_turn_counts_only_when_its_full_text_is_there() -> None:
    """A summary or a cut of the turn is not the turn: 1 of 2 found, recall 1/2, no hit."""
    question = q("q1", "c/1", "c/3")
    res = result("We moved billing to Postgres... | The deadline is April 15.", ("c/1", "c/3"))
    scored = record(question, res)
    assert scored.found == ("c/3",)
    assert scored.recall == 0.5
    assert scored.hit is False


def test_precision_is_the_share_of_disclosed_items_that_are_gold() -> None:
    """Items c/1, c/3, c/4 with gold {c/1}: precision 1/3, whatever the text holds."""
    res = result(CONTENTS["c/1"], ("c/1", "c/3", "c/4"))
    scored = record(q("q1", "c/1"), res)
    assert scored.precision == pytest.approx(1 / 3)
    assert scored.recall == 1.0 and scored.hit is True


def test_questions_without_evidence_have_no_recall_hit_or_precision() -> None:
    """Unscored questions still count tokens, but recall, hit and precision are None."""
    scored = record(q("q1"), result("Lunch was great.", ("c/4",)))
    assert (scored.recall, scored.hit, scored.precision) == (None, None, None)
    assert scored.context_tokens == get_token_counter()("Lunch was great.")


def test_nothing_disclosed_means_precision_undefined_and_recall_zero() -> None:
    """An empty context: recall 0, no hit, precision None (no items to be precise about)."""
    scored = record(q("q1", "c/1"), result("", ()))
    assert (scored.recall, scored.hit, scored.precision) == (0.0, False, None)


def test_summary_by_hand() -> None:
    """Three questions, two scored; every figure of the summary checked by hand."""
    counter = get_token_counter()
    texts = [CONTENTS["c/1"], CONTENTS["c/1"] + "\n" + CONTENTS["c/3"], CONTENTS["c/4"]]
    records = [
        record(q("a", "c/1", "c/3"), result(texts[0], ("c/1", "c/4")), full=100),
        record(q("b", "c/3"), result(texts[1], ("c/1", "c/3")), full=100),
        record(q("c"), result(texts[2], ("c/4",)), full=400),
    ]
    s = summarize(records)
    tokens = [counter(t) for t in texts]
    assert (s.questions, s.scored) == (3, 2)
    assert s.recall == pytest.approx((0.5 + 1.0) / 2)
    assert s.hit_rate == pytest.approx(0.5)
    assert s.precision == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert s.tokens_mean == pytest.approx(sum(tokens) / 3)
    assert s.tokens_p50 == sorted(tokens)[1]
    assert s.full_tokens_mean == pytest.approx(200)
    assert s.compression == pytest.approx(200 / (sum(tokens) / 3))
    assert s.violations == 0


def test_budget_violations_are_detected_both_ways() -> None:
    """tokens_used over the budget, text over the budget, or a budget above the requested one."""
    over_used = record(q("a", "c/1"), result(CONTENTS["c/1"], ("c/1",), budget=5, used=9))
    assert over_used.violation is not None and "tokens_used 9 > budget 5" in over_used.violation
    text_over = record(q("a", "c/1"), result(CONTENTS["c/1"], ("c/1",), budget=5, used=3))
    assert text_over.violation is not None and "text has" in text_over.violation
    kept = record(q("a", "c/1"), result(CONTENTS["c/1"], ("c/1",), budget=100), budget=100)
    assert kept.violation is None
    stretched = record(q("a", "c/1"), result("x", ("c/1",), budget=500), budget=100)
    assert stretched.violation == "result budget 500 > requested 100"
    within = record(q("a", "c/1"), result(CONTENTS["c/1"], ("c/1",), budget=50))
    assert within.violation is None
    assert summarize([over_used, within]).violations == 1


def test_breakdown_groups_by_category_and_skips_none() -> None:
    """One summary per category; records with no level are left out of a level breakdown."""
    records = [
        record(q("a", "c/1", category="temporal"), result(CONTENTS["c/1"], ("c/1",))),
        record(q("b", "c/3", category="multi-hop"), result("", ())),
        record(q("c", "c/3", category="temporal"), result("", ())),
    ]
    by_category = breakdown(records, lambda r: r.category)
    assert list(by_category) == ["multi-hop", "temporal"]
    assert by_category["temporal"].recall == pytest.approx(0.5)
    assert breakdown(records, lambda r: None) == {}
    assert records[0].level == "standard" and records[0].analyzer_level == "detailed"


def test_a_record_serialises_with_its_derived_figures() -> None:
    """to_dict carries recall, hit and precision next to the raw counts."""
    data = record(q("a", "c/1"), result(CONTENTS["c/1"], ("c/1", "c/4"))).to_dict()
    assert (data["recall"], data["hit"], data["precision"]) == (1.0, True, 0.5)
    assert data["gold"] == ("c/1",) and data["items"] == 2

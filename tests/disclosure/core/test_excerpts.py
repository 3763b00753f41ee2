"""Long memories: found by any part, shown as the part the query is about, the cut reported."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from disclosure import DisclosureController
from disclosure.core.pipeline.compose import Composer
from disclosure.core.pipeline.excerpts import excerpt
from formatters import Rendered, RenderItem, get_formatter, get_token_counter
from tests.disclosure.conftest import make_lean_profile
from tiers import Memory
from tiers.text import Tokenizer

COUNT = get_token_counter("cl100k_base")
FILLER = [f"Paragraph {i} covers general gardening advice about soil and light." for i in range(60)]
ANSWER = "The Lake Charles refinery runs catalytic cracking, hydrotreating and coking units."
LONG = " ".join([*FILLER[:30], ANSWER, *FILLER[30:]])


def terms(query: str) -> list[str]:
    return Tokenizer().query(query)


def test_the_window_holding_the_query_terms_is_chosen() -> None:
    """The sentence about the refinery is in the excerpt; ellipses mark both cuts."""
    cut = excerpt(LONG, terms("Lake Charles refinery processes"), tokenizer=Tokenizer(),
                  counter=COUNT, limit=80)  # fmt: skip
    assert cut is not None
    assert ANSWER in cut.text
    assert cut.text.startswith("… ") and cut.text.endswith(" …")
    assert COUNT(cut.text) <= 80
    assert cut.omitted_tokens == COUNT(LONG) - COUNT(cut.text.strip("… "))


def test_a_memory_within_the_cap_is_not_cut() -> None:
    """Short content: no excerpt."""
    assert (
        excerpt(ANSWER, terms("refinery"), tokenizer=Tokenizer(), counter=COUNT, limit=80) is None
    )


def test_one_sentence_over_the_cap_keeps_its_head() -> None:
    """Without sentence breaks, the head of the text up to the cap, marked as cut."""
    text = "word " * 500
    cut = excerpt(text, terms("word"), tokenizer=Tokenizer(), counter=COUNT, limit=40)
    assert cut is not None and cut.text.endswith(" …") and COUNT(cut.text) <= 40


MEMORIES = [
    {"id": "answer", "speaker": "assistant", "kind": "response", "content": LONG},
    {"id": "other", "speaker": "user", "content": "I like my garden's soil."},
]
QUERY = "What processes run at the Lake Charles refinery?"


def test_a_long_memory_is_disclosed_as_its_excerpt_and_shown_whole(tmp_path: Path) -> None:
    """Index layer, with no room for the whole: the excerpt, flagged with what was cut;
    show(): the whole memory."""
    assert COUNT(LONG) > 600
    with DisclosureController(make_lean_profile(), data_dir=tmp_path) as memory:
        memory.ingest(MEMORIES)
        result = memory.disclose(QUERY, budget=600)
        item = next(i for i in result.items if i.id == "answer")
        assert item.excerpt and item.omitted_tokens > 300
        assert ANSWER in result.text and FILLER[0] not in result.text
        assert FILLER[0] in memory.show("answer") and ANSWER in memory.show("answer")


def test_an_excerpt_is_shown_whole_when_the_budget_has_room(tmp_path: Path) -> None:
    """With ``excerpt_whole_first`` off: once everything else is in, unspent budget that holds
    the rest of an excerpted memory shows it whole; with ``excerpt_whole_if_room`` off too, the
    excerpt stays."""
    profile = make_lean_profile()
    first_off = profile.formatting.model_copy(update={"excerpt_whole_first": False})
    grow = profile.model_copy(update={"formatting": first_off})
    with DisclosureController(grow, data_dir=tmp_path / "grow") as memory:
        memory.ingest(MEMORIES)
        result = memory.disclose(QUERY, budget=2000)
        item = next(i for i in result.items if i.id == "answer")
        assert not item.excerpt and item.omitted_tokens == 0
        assert FILLER[0] in result.text and FILLER[-1] in result.text
        assert result.tokens_used <= 2000
    formatting = profile.formatting.model_copy(
        update={"excerpt_whole_if_room": False, "excerpt_whole_first": False}
    )
    stay = profile.model_copy(update={"formatting": formatting})
    with DisclosureController(stay, data_dir=tmp_path / "stay") as memory:
        memory.ingest(MEMORIES)
        result = memory.disclose(QUERY, budget=2000)
        item = next(i for i in result.items if i.id == "answer")
        assert item.excerpt and item.omitted_tokens > 300 and FILLER[0] not in result.text


def composer(whole_first: bool) -> Composer:
    """A composer whose ``whole_first`` reads the memories in hand (no store needed)."""
    profile = make_lean_profile()
    formatting = profile.formatting.model_copy(update={"excerpt_whole_first": whole_first})
    return Composer(profile.model_copy(update={"formatting": formatting}), None, None, COUNT)  # type: ignore[arg-type]


def packer(budget: int) -> Callable[[Sequence[RenderItem]], Rendered]:
    fmt = get_formatter("full_content")
    return lambda items: fmt.render(items, budget=budget, counter=COUNT)


WHOLE = Memory(id="answer", speaker="assistant", content=LONG)
CUT = excerpt(LONG, terms("Lake Charles refinery processes"), tokenizer=Tokenizer(), counter=COUNT,
              limit=120)  # fmt: skip
AHEAD = [RenderItem(Memory(id=f"ahead{i}", content=f"Refinery site {i}.")) for i in range(3)]
AFTER = [RenderItem(Memory(id=f"after{i}", content=f"A run on day {i}.")) for i in range(40)]


def excerpted() -> list[RenderItem]:
    assert CUT is not None
    cut = WHOLE.model_copy(update={"content": CUT.text})
    answer = RenderItem(cut, omitted_tokens=CUT.omitted_tokens)
    return [*AHEAD, answer, *AFTER]


def test_whole_first_shows_a_long_memory_whole_before_the_candidates_after_it() -> None:
    """``excerpt_whole_first``: the long memory is shown whole where it fits in packing order;
    every item before it stays, items after it make way; the budget holds. Without the setting
    the items are packed as they come, the excerpt among them."""
    budget = COUNT(LONG) + 200
    items = excerpted()
    kept, rendered = composer(True).whole_first(items, packer(budget), whole={"answer": WHOLE})
    ids = [i.id for i in rendered.items]
    assert kept[3].memory.content == LONG and kept[3].omitted_tokens == 0
    assert FILLER[0] in rendered.text and FILLER[-1] in rendered.text
    assert {"ahead0", "ahead1", "ahead2", "answer"} <= set(ids) and rendered.tokens <= budget
    plain, before = composer(False).whole_first(items, packer(budget), whole={"answer": WHOLE})
    assert plain == items and FILLER[0] not in before.text
    assert len([i for i in before.items if i.id.startswith("after")]) > len(
        [i for i in ids if i.startswith("after")]
    )


def test_whole_first_keeps_the_excerpt_where_the_whole_does_not_fit() -> None:
    """A budget too small for the whole memory after the items ahead of it: the excerpt stays
    and is shown, and so is everything ahead of it."""
    items = excerpted()
    kept, rendered = composer(True).whole_first(items, packer(400), whole={"answer": WHOLE})
    assert kept[3] == items[3] and ANSWER in rendered.text and FILLER[0] not in rendered.text
    assert {"ahead0", "ahead1", "ahead2", "answer"} <= {i.id for i in rendered.items}
    assert rendered.tokens <= 400

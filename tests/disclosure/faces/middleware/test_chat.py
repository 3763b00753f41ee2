"""The chat middleware end to end: a plain function stands in for the model; the tiers are real."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from analyzers import DisclosureLevel
from disclosure import (
    CallOptions,
    ContextPlacement,
    ControllerPool,
    DisclosureMiddleware,
    MemoryKind,
    TurnRecord,
)
from disclosure.core.controller import DisclosureController
from disclosure.faces.middleware.messages import (
    conversation_tokens,
    insert_context,
    reply_text,
    stream_delta,
)
from disclosure.sample import load_sample_conversation
from tests.disclosure.conftest import CITATION, NOW, ChatModel
from tiers.errors import InvalidInputError, NamespaceError

SYSTEM = {"role": "system", "content": "You are a helpful assistant for the invoicing team."}
QUESTION = "Which database did we move billing to, and who writes the migration?"
SAMPLE_TEXTS = [m.content for m in load_sample_conversation()]


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path / "root") as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


def clock() -> Any:
    moments = iter(NOW + timedelta(seconds=i) for i in range(1000))
    return lambda: next(moments)


def middleware(pool: ControllerPool, records: list[TurnRecord], **kw: Any) -> DisclosureMiddleware:
    return DisclosureMiddleware(pool, on_turn=records.append, clock=clock(), **kw)


def test_a_turn_is_injected_answered_ingested_and_fed_back(
    pool: ControllerPool, chat_model: ChatModel
) -> None:
    """The model sees the context after the system prompt, cites it; the turn is stored."""
    records: list[TurnRecord] = []
    chat = middleware(pool, records).wrap(chat_model.create)
    messages = [SYSTEM, {"role": "user", "content": QUESTION}]
    response = chat(model="m", messages=messages, temperature=0, disclosure={"user": "dana"})
    sent = chat_model.last_messages
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    # the memory is quoted reference data in a user message; the system prompt states the rule
    assert (
        sent[0]["content"].startswith(SYSTEM["content"])
        and "never instructions" in sent[0]["content"]
    )
    assert sent[1]["content"].startswith("<memory-reference>\nMemory from earlier")
    assert sent[1]["content"].endswith("</memory-reference>")
    assert chat_model.requests[-1]["temperature"] == 0  # other arguments pass through
    assert "disclosure" not in chat_model.requests[-1]
    assert messages == [SYSTEM, {"role": "user", "content": QUESTION}]  # caller's list untouched
    reply = response["choices"][0]["message"]["content"]
    assert "Postgres" in reply and CITATION.search(reply)
    record = records[-1]
    assert record.errors == ()
    assert record.ingest is not None and record.ingest.added == 2
    assert record.feedback is not None and record.feedback.cited
    session = record.prepared.session_id
    with pool.lease(pool.namespace(user="dana")) as controller:
        stored = {m.id: m for m in controller.store.get(list(record.ingest.ids))}
        history = controller.budget.history(record.prepared.result.level)  # type: ignore[union-attr]
    question, answer = (stored[i] for i in record.ingest.ids)
    assert question.id.startswith(f"{session}#0-") and answer.id.startswith(f"{session}#1-")
    assert (question.kind, question.speaker, question.content) == (
        MemoryKind.PROMPT,
        "user",
        QUESTION,
    )
    assert (answer.kind, answer.speaker, answer.content) == (
        MemoryKind.RESPONSE,
        "assistant",
        reply,
    )
    assert question.session_id == answer.session_id == session
    assert question.timestamp < answer.timestamp
    assert len(history) == 1 and history[0].used >= 1


def test_the_async_wrapper_does_the_same(pool: ControllerPool, chat_model: ChatModel) -> None:
    """wrap_async injects, awaits the model, then records in a worker thread."""
    records: list[TurnRecord] = []
    chat = middleware(pool, records).wrap_async(chat_model.acreate)
    messages = [{"role": "user", "content": QUESTION}]
    response = asyncio.run(chat(model="m", messages=messages, disclosure={"user": "dana"}))
    assert "Postgres" in response["choices"][0]["message"]["content"]
    assert [m["role"] for m in chat_model.last_messages] == ["system", "user", "user"]
    assert records[-1].ingest is not None and records[-1].ingest.added == 2
    assert records[-1].feedback is not None and records[-1].feedback.used


def test_one_users_memory_never_reaches_another_users_model(
    pool: ControllerPool, chat_model: ChatModel
) -> None:
    """Eve asks Dana's question in her own namespace: nothing of Dana's is sent or stored."""
    records: list[TurnRecord] = []
    chat = middleware(pool, records).wrap(chat_model.create)
    messages = [{"role": "user", "content": QUESTION}]
    dana = chat(model="m", messages=messages, disclosure={"user": "dana"})
    eve = chat(model="m", messages=messages, disclosure={"user": "eve"})
    sent_to_eve = "\n".join(m["content"] for m in chat_model.last_messages)
    assert not any(text in sent_to_eve for text in SAMPLE_TEXTS)
    assert not CITATION.search(sent_to_eve)
    assert "don't know" in eve["choices"][0]["message"]["content"]
    assert "Postgres" in dana["choices"][0]["message"]["content"]
    # the same session and ids exist in both namespaces, apart
    assert records[0].ingest is not None and records[1].ingest is not None
    assert records[0].ingest.ids == records[1].ingest.ids
    with pool.lease(pool.namespace(user="eve")) as controller:
        assert controller.store.count() == 2
        assert "Postgres" not in controller.show(records[1].ingest.ids[0])
    with pool.lease(pool.namespace(user="dana")) as controller:
        assert controller.store.count() == len(SAMPLE_TEXTS) + 2


@pytest.mark.parametrize(
    ("placement", "roles"),
    [
        (ContextPlacement.BEFORE_SYSTEM, ["memory", "system", "user", "assistant", "user"]),
        (ContextPlacement.AFTER_SYSTEM, ["system", "memory", "user", "assistant", "user"]),
        (ContextPlacement.BEFORE_LAST_USER, ["system", "user", "assistant", "memory", "user"]),
    ],
)
def test_placement_puts_the_context_where_asked(
    pool: ControllerPool, placement: ContextPlacement, roles: list[str]
) -> None:
    """before_system, after_system and before_last_user place the memory message."""
    wrapper = DisclosureMiddleware(pool, placement=placement, namespace={"user": "dana"})
    messages = [
        SYSTEM,
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": QUESTION},
    ]
    prepared = wrapper.prepare(messages)
    seen = [
        "memory" if m["content"].startswith("<memory-reference>") else m["role"]
        for m in prepared.messages
    ]
    assert seen == roles


@pytest.mark.parametrize("window", [120, 200, 400, 1000, 16_384])
def test_the_request_never_exceeds_the_context_window(pool: ControllerPool, window: int) -> None:
    """Whatever the window, conversation + injected context fits in it."""
    wrapper = DisclosureMiddleware(pool, namespace={"user": "dana"}, context_window=window)
    long_turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Filler turn {i}. " * 8}
        for i in range(6)
    ]
    messages = [SYSTEM, *long_turns, {"role": "user", "content": QUESTION}]
    with pool.lease(pool.namespace(user="dana")) as controller:
        counter = controller.counter
        config = controller.profile.middleware
    prepared = wrapper.prepare(messages, CallOptions(level=DisclosureLevel.COMPREHENSIVE))
    sent = conversation_tokens(
        prepared.messages, counter, per_message=config.message_tokens, reply=config.reply_tokens
    )
    own = conversation_tokens(
        messages, counter, per_message=config.message_tokens, reply=config.reply_tokens
    )
    if own >= window:
        assert prepared.messages == messages  # no room: nothing injected
    assert sent <= max(window, own)
    assert prepared.request_tokens == sent
    if window == 16_384:
        assert len(prepared.messages) == len(messages) + 1


def test_a_budget_override_is_clamped_to_the_window(pool: ControllerPool) -> None:
    """Even an explicit budget cannot push the request over the window."""
    wrapper = DisclosureMiddleware(pool, namespace={"user": "dana"}, context_window=300)
    messages = [{"role": "user", "content": QUESTION}]
    prepared = wrapper.prepare(messages, {"budget": 5000, "level": "comprehensive"})
    assert prepared.request_tokens <= 300
    assert prepared.result is not None and prepared.result.budget < 300


def test_per_model_windows(pool: ControllerPool) -> None:
    """A mapping of model names to windows picks the called model's."""
    wrapper = DisclosureMiddleware(
        pool, namespace={"user": "dana"}, context_window={"small": 150, "big": 100_000}
    )
    messages = [{"role": "user", "content": QUESTION}]
    assert wrapper.prepare(messages, model="small").context_window == 150
    assert wrapper.prepare(messages, model="big").context_window == 100_000
    assert wrapper.prepare(messages, model="other").context_window == 16_384  # the profile's


def test_a_regenerated_reply_replaces_the_stored_one(pool: ControllerPool) -> None:
    """Positional ids: resending a turn with a new reply replaces it instead of adding."""
    records: list[TurnRecord] = []
    answers = iter(["First answer about billing.", "Second, better answer about billing."])

    def model(*, model: str, messages: list[dict[str, str]]) -> str:
        return next(answers)

    chat = middleware(pool, records, namespace={"user": "dana"}).wrap(model)
    messages = [{"role": "user", "content": "Summarise billing."}]
    chat(model="m", messages=messages)
    chat(model="m", messages=messages)
    first, second = records[0].ingest, records[1].ingest
    assert first is not None and second is not None
    assert (first.added, second.unchanged, second.replaced) == (2, 1, 1)
    with pool.lease(pool.namespace(user="dana")) as controller:
        assert "Second, better" in controller.show(second.ids[-1])


def test_turns_sent_one_message_at_a_time_are_all_kept(pool: ControllerPool) -> None:
    """A client that sends only the new message (same session) loses no earlier turn."""
    records: list[TurnRecord] = []

    def model(*, model: str, messages: list[dict[str, str]]) -> str:
        return "Noted."

    chat = middleware(pool, records, namespace={"user": "eve"}, session_id="s1").wrap(model)
    for text in ("Billing moves to Postgres 16.", "Priya writes the migration."):
        chat(model="m", messages=[{"role": "user", "content": text}])
    ids = [i for r in records for i in r.ingest.ids]  # type: ignore[union-attr]
    assert len(set(ids)) == 4
    with pool.lease(pool.namespace(user="eve")) as controller:
        assert controller.store.count() == 4


def test_streamed_replies_pass_through_and_are_recorded(
    pool: ControllerPool, chat_model: ChatModel
) -> None:
    """stream=True: chunks arrive untouched; the turn is recorded when the stream ends."""
    records: list[TurnRecord] = []
    chat = middleware(pool, records, namespace={"user": "dana"}).wrap(chat_model.create)
    stream = chat(model="m", messages=[{"role": "user", "content": QUESTION}], stream=True)
    assert records == []
    chunks = list(stream)
    text = "".join(stream_delta(c) for c in chunks)
    assert "Postgres" in text
    assert records[-1].reply == text
    assert records[-1].ingest is not None and records[-1].ingest.added == 2

    async def consume() -> str:
        achat = middleware(pool, records, namespace={"user": "dana"}).wrap_async(chat_model.acreate)
        astream = await achat(model="m", messages=[{"role": "user", "content": "x?"}], stream=True)
        return "".join([stream_delta(c) async for c in astream])

    assert asyncio.run(consume()) == records[-1].reply


def test_a_recording_failure_is_reported_not_raised(tmp_path: Path) -> None:
    """If the store fails after the model answered, the reply still comes back."""
    controller = DisclosureController.from_profile("default", data_dir=tmp_path / "d")
    records: list[TurnRecord] = []
    wrapper = DisclosureMiddleware(controller, on_turn=records.append)
    prepared = wrapper.prepare([{"role": "user", "content": "Hello there, remember me?"}])
    controller.close()  # simulate the store going away mid-call
    record = wrapper.complete(prepared, "Hello!")
    assert record.ingest is None
    assert record.errors and "closed" in record.errors[0]


def test_call_mistakes_are_clear_errors(pool: ControllerPool, chat_model: ChatModel) -> None:
    """Unknown options, parts outside the scope, missing messages: errors naming the fix."""
    chat = DisclosureMiddleware(pool).wrap(chat_model.create)
    with pytest.raises(InvalidInputError, match="unknown disclosure option 'usr'"):
        chat(model="m", messages=[], disclosure={"usr": "dana"})
    with pytest.raises(NamespaceError, match="'conversation' is not in"):
        chat(model="m", messages=[], disclosure={"conversation": "c1"})
    with pytest.raises(NamespaceError, match="path separator"):
        chat(model="m", messages=[], disclosure={"user": "../dana"})
    with pytest.raises(InvalidInputError, match="messages="):
        chat(model="m")
    assert chat_model.requests == []  # nothing reached the model
    with (
        pool.lease(pool.namespace(user="dana")) as controller,
        pytest.raises(InvalidInputError, match="ControllerPool"),
    ):
        DisclosureMiddleware(controller, namespace={"user": "eve"})


def test_no_user_message_means_no_disclosure(pool: ControllerPool) -> None:
    """A call without a user message passes through unchanged."""
    wrapper = DisclosureMiddleware(pool, namespace={"user": "dana"})
    prepared = wrapper.prepare([SYSTEM])
    assert prepared.messages == [SYSTEM]
    assert prepared.result is None


def test_replies_are_read_from_sdk_objects_dicts_and_strings() -> None:
    """.choices[0].message.content, its dict form, a str; None for anything else."""
    message = SimpleNamespace(role="assistant", content="from an object")
    assert (
        reply_text(SimpleNamespace(choices=[SimpleNamespace(message=message)])) == "from an object"
    )
    assert reply_text({"choices": [{"message": {"content": "from a dict"}}]}) == "from a dict"
    assert reply_text("plain") == "plain"
    assert reply_text({"choices": []}) is None
    assert reply_text(42) is None
    assert (
        stream_delta(SimpleNamespace(choices=[SimpleNamespace(delta=message)])) == "from an object"
    )


def test_insert_context_leaves_the_callers_list_alone() -> None:
    """insert_context returns a new list; with no user message, before_last_user appends."""
    messages = [SYSTEM]
    injected = {"role": "system", "content": "memory"}
    assert insert_context(messages, injected, ContextPlacement.BEFORE_LAST_USER)[-1] == injected
    assert messages == [SYSTEM]

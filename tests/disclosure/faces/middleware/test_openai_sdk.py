"""The chat middleware around the real ``openai`` SDK (its Stream, raw responses and async
client), talking to a stand-in upstream on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from disclosure import ControllerPool, DisclosureMiddleware, TurnRecord  # noqa: E402
from disclosure.sample import load_sample_conversation  # noqa: E402
from tests.disclosure.faces.upstream import UPSTREAM_KEY, Upstream, start_upstream  # noqa: E402

QUESTION = "Which database did we pick for billing, and who writes the migration?"
DANA = {"user": "dana", "level": "comprehensive"}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    state, stop = start_upstream()
    yield state
    stop()


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path_factory.mktemp("sdk")) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


def sdk(upstream: Upstream) -> Any:
    return openai.OpenAI(base_url=upstream.url, api_key=UPSTREAM_KEY, max_retries=0)


def stored(pool: ControllerPool, record: TurnRecord) -> list[Any]:
    assert record.ingest is not None
    with pool.lease(pool.namespace(user="dana")) as controller:
        return controller.store.get(list(record.ingest.ids))


def test_a_wrapped_stream_is_an_iterator_and_records_the_whole_reply(
    pool: ControllerPool, upstream: Upstream
) -> None:
    records: list[TurnRecord] = []
    chat = DisclosureMiddleware(pool, on_turn=records.append).wrap(
        sdk(upstream).chat.completions.create
    )
    stream = chat(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        disclosure={**DANA, "session_id": "sdk-1"},
    )
    first = next(stream)  # an iterator, like openai.Stream
    assert isinstance(first, openai.types.chat.ChatCompletionChunk)
    rest = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in [first, *rest])
    assert "[mem:" in text
    assert records[-1].reply == text and not records[-1].partial
    assert [m.content for m in stored(pool, records[-1])] == [QUESTION, text]


@pytest.mark.parametrize("how", ["close", "with", "break"])
def test_a_stream_ended_early_keeps_the_question_and_the_partial_reply(
    pool: ControllerPool, upstream: Upstream, how: str
) -> None:
    """close(), leaving a ``with`` block, or breaking out and dropping it: the user's turn is
    stored, and the reply so far, marked partial."""
    records: list[TurnRecord] = []
    chat = DisclosureMiddleware(pool, on_turn=records.append).wrap(
        sdk(upstream).chat.completions.create
    )
    question = f"Who owns billing? ({how})"
    stream = chat(
        model="m",
        messages=[{"role": "user", "content": question}],
        stream=True,
        disclosure={**DANA, "session_id": f"sdk-{how}"},
    )
    if how == "close":
        first = next(stream)
        stream.close()
    elif how == "with":
        with stream as entered:
            first = next(entered)
    else:
        for chunk in stream:
            first = chunk
            break
        del stream
    record = records[-1]
    assert record.partial and record.reply == first.choices[0].delta.content
    memories = stored(pool, record)
    assert memories[0].content == question
    assert memories[1].metadata["partial"] is True


def test_with_raw_response_keeps_the_reply(pool: ControllerPool, upstream: Upstream) -> None:
    records: list[TurnRecord] = []
    chat = DisclosureMiddleware(pool, on_turn=records.append).wrap(
        sdk(upstream).chat.completions.with_raw_response.create
    )
    raw = chat(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        disclosure={**DANA, "session_id": "sdk-raw"},
    )
    assert raw.http_response.status_code == 200
    reply = raw.parse().choices[0].message.content
    assert reply and records[-1].reply == reply
    assert [m.content for m in stored(pool, records[-1])] == [QUESTION, reply]


def test_wrap_on_the_async_client_records_the_reply(
    pool: ControllerPool, upstream: Upstream
) -> None:
    """wrap() given AsyncOpenAI's method (not marked async) still awaits and records."""
    records: list[TurnRecord] = []
    client = openai.AsyncOpenAI(base_url=upstream.url, api_key=UPSTREAM_KEY, max_retries=0)
    chat = DisclosureMiddleware(pool, on_turn=records.append).wrap(client.chat.completions.create)

    async def ask() -> tuple[Any, str]:
        response = await chat(
            model="m",
            messages=[{"role": "user", "content": QUESTION}],
            disclosure={**DANA, "session_id": "sdk-async"},
        )
        stream = await chat(
            model="m",
            messages=[{"role": "user", "content": "and streamed?"}],
            stream=True,
            disclosure={**DANA, "session_id": "sdk-async-stream"},
        )
        parts = [c.choices[0].delta.content or "" async for c in stream]
        await client.close()
        return response, "".join(parts)

    response, streamed = asyncio.run(ask())
    reply = response.choices[0].message.content
    assert reply and records[0].reply == reply
    assert records[1].reply == streamed and not records[1].partial


def test_unknown_options_are_errors(pool: ControllerPool, upstream: Upstream) -> None:
    from tiers.errors import InvalidInputError

    chat = DisclosureMiddleware(pool).wrap(sdk(upstream).chat.completions.create)
    with pytest.raises(InvalidInputError, match="usr"):
        chat(model="m", messages=[{"role": "user", "content": "x"}], disclosure={"usr": "dana"})

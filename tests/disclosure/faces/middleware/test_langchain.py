"""The LangChain adapters: a retriever of Documents and Runnables that inject and record."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed")

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda

from disclosure import ControllerPool, TurnRecord
from disclosure.faces.middleware.langchain import DisclosureRetriever, memory_injector, with_memory
from disclosure.sample import load_sample_conversation
from tests.disclosure.conftest import CITATION, ChatModel
from tiers.errors import InvalidInputError

QUESTION = "Which database did we pick for billing?"


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path_factory.mktemp("lc-root")) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


def chat_model() -> RunnableLambda[list[BaseMessage], AIMessage]:
    """A LangChain Runnable standing in for a chat model (the same answering function)."""
    answering = ChatModel()

    def respond(messages: list[BaseMessage]) -> AIMessage:
        roles = {"human": "user", "ai": "assistant", "system": "system"}
        plain = [{"role": roles[m.type], "content": m.text} for m in messages]
        return AIMessage(content=answering.answer(plain))

    return RunnableLambda(respond)


def test_the_retriever_returns_one_document_per_disclosed_memory(pool: ControllerPool) -> None:
    """Documents carry the memory's text; metadata its citation, layer, tier and score."""
    retriever = DisclosureRetriever(memory=pool, namespace={"user": "dana"}, level="detailed")
    documents = retriever.invoke(QUESTION)
    assert documents and all(isinstance(d, Document) for d in documents)
    assert any("Postgres" in d.page_content for d in documents)
    meta = documents[0].metadata
    assert meta["citation"].startswith("mem:") and meta["level"] == "detailed"
    assert {"id", "tier", "layer", "score", "session_id", "timestamp", "speaker"} <= set(meta)
    assert asyncio.run(retriever.ainvoke(QUESTION))[0].metadata["id"] == meta["id"]
    eve = DisclosureRetriever(memory=pool, namespace={"user": "eve"})
    assert eve.invoke(QUESTION) == []
    assert not pool.exists(pool.namespace(user="eve"))  # a read creates no namespace


def test_the_injector_adds_the_memory_as_a_marked_block(pool: ControllerPool) -> None:
    """memory_injector: LangChain messages or dicts in, messages with the memory out."""
    inject = memory_injector(pool, namespace={"user": "dana"})
    out = inject.invoke([SystemMessage("Be brief."), HumanMessage(QUESTION)])
    assert [m.type for m in out] == ["system", "human", "human"]
    assert CITATION.search(out[1].text) and "Postgres" in out[1].text
    assert out[1].text.startswith("<memory-reference>") and "never instructions" in out[0].text
    from_dicts = inject.invoke([{"role": "user", "content": QUESTION}])
    assert [m.type for m in from_dicts] == ["system", "human", "human"]


def test_with_memory_answers_and_records_the_turn(pool: ControllerPool) -> None:
    """with_memory: inject, call the model, ingest the turn, feed the reply back (sync, async)."""
    records: list[TurnRecord] = []
    chain = with_memory(chat_model(), pool, namespace={"user": "dana"}, on_turn=records.append)
    reply = chain.invoke([HumanMessage("Which database did billing move to, and who migrates it?")])
    assert "Postgres" in reply.content and CITATION.search(reply.content)
    assert records[-1].ingest is not None and records[-1].ingest.added == 2
    assert records[-1].feedback is not None and records[-1].feedback.cited
    again: Any = asyncio.run(chain.ainvoke([HumanMessage("Who writes the billing migration?")]))
    assert CITATION.search(again.content)
    assert len(records) == 2 and records[1].ingest is not None and records[1].ingest.added == 2
    first_turn = records[0].ingest.ids[0]
    assert first_turn in {i.id for i in records[1].prepared.result.items}  # type: ignore[union-attr]


def fake_model(*replies: str) -> Any:
    """langchain-core's own fake chat model: streams each reply in pieces."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]))


def test_the_retriever_honours_k_and_search_kwargs(pool: ControllerPool) -> None:
    """k caps the documents (best first), in the constructor, search_kwargs or per call;
    an unknown keyword is an error, not ignored."""
    every = DisclosureRetriever(memory=pool, namespace={"user": "dana"}, level="comprehensive")
    documents = every.invoke(QUESTION)
    assert len(documents) >= 3
    one = DisclosureRetriever(memory=pool, namespace={"user": "dana"}, level="comprehensive", k=1)
    assert len(one.invoke(QUESTION)) == 1
    assert one.invoke(QUESTION)[0].metadata["score"] == max(d.metadata["score"] for d in documents)
    two = DisclosureRetriever(
        memory=pool, namespace={"user": "dana"}, search_kwargs={"k": 2, "level": "comprehensive"}
    )
    assert len(two.invoke(QUESTION)) == 2
    assert len(every.invoke(QUESTION, k=2)) == 2
    with pytest.raises(InvalidInputError, match="fetch_k"):
        every.invoke(QUESTION, fetch_k=10)
    with pytest.raises(InvalidInputError, match="k must be"):
        every.invoke(QUESTION, k=0)


def test_with_memory_takes_a_string_as_one_user_message(pool: ControllerPool) -> None:
    model = fake_model("Postgres 16.")
    seen: list[Any] = []
    spy = RunnableLambda(lambda messages: seen.append(messages) or model.invoke(messages))
    chain = with_memory(spy, pool, namespace={"user": "dana"}, ingest=False)
    chain.invoke(QUESTION)
    humans = [m.text for m in seen[-1] if m.type == "human"]
    asked = [t for t in humans if not t.startswith("<memory-reference>")]  # memory rides apart
    assert asked == [QUESTION]  # one message, not one per character


def test_with_memory_streams_chunk_by_chunk_and_records(pool: ControllerPool) -> None:
    """.stream() yields the model's chunks as they come; the whole reply is recorded."""
    records: list[TurnRecord] = []
    chain = with_memory(
        fake_model("Billing moved to Postgres 16, Priya writes it."),
        pool,
        namespace={"user": "dana"},
        on_turn=records.append,
    )
    chunks = list(chain.stream([HumanMessage(QUESTION)]))
    assert len(chunks) > 3
    assert "".join(c.text for c in chunks) == "Billing moved to Postgres 16, Priya writes it."
    assert records[-1].reply == "Billing moved to Postgres 16, Priya writes it."
    assert not records[-1].partial and records[-1].ingest is not None
    assert records[-1].ingest.added == 2


def test_a_stream_left_early_records_the_partial_reply(pool: ControllerPool) -> None:
    records: list[TurnRecord] = []
    chain = with_memory(
        fake_model("one two three four five six"),
        pool,
        namespace={"user": "dana"},
        on_turn=records.append,
    )
    stream = chain.stream("a question asked and abandoned")
    first = next(stream)
    stream.close()
    assert records[-1].partial and records[-1].reply == first.text
    with pool.lease(pool.namespace(user="dana")) as controller:
        stored = controller.store.get(list(records[-1].ingest.ids))  # type: ignore[union-attr]
    assert [m.content for m in stored] == ["a question asked and abandoned", first.text]
    assert stored[1].metadata["partial"] is True

    async def astream_one() -> Any:
        agen = chain.astream("another abandoned question")
        chunk = await anext(agen)
        await agen.aclose()
        return chunk

    chain = with_memory(
        fake_model("seven eight nine"), pool, namespace={"user": "dana"}, on_turn=records.append
    )
    chunk = asyncio.run(astream_one())
    assert records[-1].partial and records[-1].reply == chunk.text


def test_per_call_configurable_picks_the_namespace_and_session(pool: ControllerPool) -> None:
    """config={"configurable": ...} names the user and session per call; LangGraph's thread_id
    is the session; a bad key under "disclosure" is an error."""
    records: list[TurnRecord] = []
    chain = with_memory(fake_model("a", "b", "c"), pool, on_turn=records.append)
    chain.invoke("hello", config={"configurable": {"user": "cfg-user", "session_id": "s-cfg"}})
    assert records[-1].prepared.namespace == pool.namespace(user="cfg-user")
    assert records[-1].prepared.session_id == "s-cfg"
    chain.invoke("hello again", config={"configurable": {"user": "cfg-user", "thread_id": "t-9"}})
    assert records[-1].prepared.session_id == "t-9"
    with pytest.raises(InvalidInputError, match="usr"):
        chain.invoke("x", config={"configurable": {"disclosure": {"usr": "bob"}}})
    inject = memory_injector(pool)
    injected = inject.invoke(QUESTION, config={"configurable": {"user": "dana"}})
    assert injected[0].type == "system" and injected[-1].text == QUESTION

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
from disclosure.middleware.langchain import DisclosureRetriever, memory_injector, with_memory
from disclosure.sample import load_sample_conversation
from tests.disclosure.conftest import CITATION, ChatModel

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

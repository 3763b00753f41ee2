"""The LlamaIndex adapters against real llama-index-core objects: a retriever of nodes, and a
memory block inside LlamaIndex's own ``Memory`` (no model needed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

pytest.importorskip("llama_index.core", reason="the [llamaindex] extra is not installed")

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
from sqlalchemy.ext.asyncio import create_async_engine

from disclosure import ControllerPool
from disclosure.faces.memories import Memories
from disclosure.faces.middleware.llamaindex import DisclosureMemoryBlock, DisclosureRetriever
from disclosure.sample import load_sample_conversation
from tests.disclosure.conftest import CITATION
from tiers.errors import InvalidInputError

QUESTION = "Which database did we pick for billing?"


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path_factory.mktemp("li-root")) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


def test_the_retriever_returns_scored_nodes_of_disclosed_memories(pool: ControllerPool) -> None:
    """NodeWithScore per memory, best first; the model sees each node's citation."""
    retriever = DisclosureRetriever(pool, namespace={"user": "dana"}, level="detailed")
    found = retriever.retrieve(QUESTION)
    assert found and all(isinstance(n, NodeWithScore) for n in found)
    assert all(isinstance(n.node, TextNode) for n in found)
    assert any("Postgres" in n.node.get_content() for n in found)
    scores = [n.score or 0.0 for n in found]
    assert scores == sorted(scores, reverse=True)
    first = found[0].node
    assert first.metadata["citation"].startswith("mem:") and first.metadata["level"] == "detailed"
    shown = first.get_content(metadata_mode=MetadataMode.LLM)
    assert first.metadata["citation"] in shown and "tier" not in shown
    two = DisclosureRetriever(pool, namespace={"user": "dana"}, similarity_top_k=2)
    assert len(two.retrieve(QUESTION)) == 2
    again = asyncio.run(retriever.aretrieve(QUESTION))
    assert [n.node.node_id for n in again] == [n.node.node_id for n in found]


def test_the_retriever_reads_nothing_where_nothing_is_stored(pool: ControllerPool) -> None:
    assert DisclosureRetriever(pool, namespace={"user": "nobody"}).retrieve(QUESTION) == []
    assert not pool.exists(pool.namespace(user="nobody"))
    with pytest.raises(InvalidInputError, match="positive whole number"):
        DisclosureRetriever(pool, similarity_top_k=0)


def test_the_memory_block_stores_what_memory_flushes_and_discloses_for_the_latest_message(
    pool: ControllerPool,
) -> None:
    """Inside LlamaIndex's Memory: flushed turns are stored under its session id, and the
    latest user message gets the disclosed context, marked as reference data."""
    block = DisclosureMemoryBlock(memory=pool, namespace={"user": "erin"})
    turns = [
        ("user", "The billing service moves to Postgres 16 next Tuesday."),
        ("assistant", "Noted: billing runs on Postgres 16 from Tuesday."),
        ("user", "Ivan writes the migration scripts for it."),
        ("assistant", "Ivan owns the billing migration."),
        ("user", "The office plants need watering on Fridays."),
        ("assistant", "Friday is plant day."),
    ]

    async def converse() -> list[ChatMessage]:
        engine = create_async_engine("sqlite+aiosqlite:///:memory:")
        memory = Memory(
            session_id="chat-7",
            token_limit=120,
            chat_history_token_ratio=0.25,
            token_flush_size=20,
            memory_blocks=[block],
            sql_store=SQLAlchemyChatStore(table_name="chat", async_engine=engine),
        )
        try:
            assert await memory.aget(input="anything") == []  # nothing stored, nothing made
            assert not pool.exists(pool.namespace(user="erin"))
            await memory.aput_messages([ChatMessage(role=r, content=t) for r, t in turns])
            return await memory.aget(input="Which database does billing run on?")
        finally:
            await engine.dispose()

    messages = asyncio.run(converse())
    stored = Memories(pool).get_all(user_id="erin")
    assert stored.total >= 2 and stored.items[0].content == turns[0][1]
    assert {m.session_id for m in stored.items} == {"chat-7"}
    assert stored.total < len(turns)  # the latest turns stay in Memory's short-term queue
    context = messages[0].content or ""
    assert messages[0].role.value == "system" and "<disclosed_memory>" in context
    assert "<memory-reference>" in context and "Postgres 16" in context
    assert CITATION.search(context)
    assert asyncio.run(block.aget([ChatMessage(role="assistant", content="hi")])) == ""


def test_a_block_that_does_not_record_leaves_the_store_alone(pool: ControllerPool) -> None:
    block = DisclosureMemoryBlock(memory=pool, namespace={"user": "fay"}, record=False)
    asyncio.run(block.aput([ChatMessage(role="user", content="Remember my locker is 12.")]))
    assert not pool.exists(pool.namespace(user="fay"))
    asked = [ChatMessage(role="user", content="Where is my locker?")]
    assert asyncio.run(block.aget(asked)) == ""

"""LangChain adapters (the ``[langchain]`` extra, ``langchain-core``).

- :class:`DisclosureRetriever`: a ``BaseRetriever``; one Document per disclosed memory, its
  layer, tier, score and citation in the metadata.
- :func:`memory_injector`: a Runnable from chat messages to the same messages with the
  disclosed context inserted as the middleware does (a marked user block by default).
- :func:`with_memory`: a Runnable around a chat model that injects, calls the model, then
  records the turn (ingest and feedback), like :class:`~disclosure.middleware.DisclosureMiddleware`.

Messages may be LangChain messages or OpenAI-style dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from disclosure.extras import require

require("langchain", "the LangChain adapter")

from langchain_core.callbacks import (  # noqa: E402
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    BaseMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import Runnable, RunnableLambda  # noqa: E402
from pydantic import Field  # noqa: E402

from disclosure.middleware.chat import CallOptions, DisclosureMiddleware  # noqa: E402
from disclosure.pool import ControllerPool  # noqa: E402

if TYPE_CHECKING:
    from disclosure.controller import DisclosureController

__all__ = ["DisclosureRetriever", "memory_injector", "with_memory"]


class DisclosureRetriever(BaseRetriever):
    """Disclosed memories as Documents (``memory``: a controller, or a pool and ``namespace``)."""

    memory: Any
    namespace: dict[str, str] = Field(default_factory=dict)
    level: str | None = None
    budget: int | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        with self._lease() as controller:
            result = controller.disclose(query, level=self.level, budget=self.budget)
            memories = {m.id: m for m in controller.store.get([i.id for i in result.items])}
        documents = []
        for item in result.items:
            memory = memories.get(item.id)
            if memory is None:
                continue
            metadata = {
                "id": item.id,
                "citation": item.citation,
                "tier": item.tier,
                "layer": item.layer.value,
                "score": item.score,
                "tokens": item.tokens,
                "session_id": memory.session_id,
                "timestamp": memory.timestamp.isoformat(),
                "speaker": memory.speaker,
                "kind": memory.kind.value,
                "level": result.level.value,
            }
            documents.append(Document(page_content=memory.content, metadata=metadata))
        return documents

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        import asyncio

        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync()
        )

    def _lease(self) -> AbstractContextManager[DisclosureController]:
        if isinstance(self.memory, ControllerPool):
            return self.memory.lease(self.memory.namespace(self.namespace))
        return nullcontext(self.memory)


def memory_injector(
    memory: DisclosureController | ControllerPool,
    *,
    namespace: Mapping[str, str] | None = None,
    **middleware: Any,
) -> Runnable[Any, list[BaseMessage]]:
    """A Runnable: messages in, the same messages with the disclosed context inserted out."""
    injector = DisclosureMiddleware(memory, namespace=namespace, **middleware)

    def inject(messages: Sequence[Any]) -> list[BaseMessage]:
        prepared = injector.prepare(_as_dicts(messages), CallOptions(record=False))
        return convert_to_messages([dict(m) for m in prepared.messages])

    return RunnableLambda(inject, name="memory_injector")


def with_memory(
    model: Runnable[Any, Any],
    memory: DisclosureController | ControllerPool,
    *,
    namespace: Mapping[str, str] | None = None,
    **middleware: Any,
) -> Runnable[Any, Any]:
    """A Runnable around ``model``: inject the context, call the model, record the turn."""
    wrapper = DisclosureMiddleware(memory, namespace=namespace, **middleware)

    def run(messages: Sequence[Any]) -> Any:
        prepared = wrapper.prepare(_as_dicts(messages))
        reply = model.invoke(convert_to_messages([dict(m) for m in prepared.messages]))
        wrapper.complete(prepared, _text(reply))
        return reply

    async def arun(messages: Sequence[Any]) -> Any:
        import asyncio

        prepared = await asyncio.to_thread(wrapper.prepare, _as_dicts(messages))
        reply = await model.ainvoke(convert_to_messages([dict(m) for m in prepared.messages]))
        await wrapper.acomplete(prepared, _text(reply))
        return reply

    return RunnableLambda(run, afunc=arun, name="with_memory")


def _as_dicts(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return list(convert_to_openai_messages(convert_to_messages(messages)))


def _text(reply: Any) -> str | None:
    content = getattr(reply, "content", reply)
    if isinstance(content, str):
        return content
    if isinstance(reply, BaseMessage):
        return reply.text if isinstance(reply.text, str) else None
    return None

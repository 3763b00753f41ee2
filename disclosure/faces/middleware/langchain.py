"""LangChain adapters (the ``[langchain]`` extra, ``langchain-core``).

- :class:`DisclosureRetriever`: a ``BaseRetriever``; one Document per disclosed memory, its
  layer, tier, score and citation in the metadata.
- :func:`memory_injector`: a Runnable from chat messages to the same messages with the
  disclosed context inserted as the middleware does (a marked user block by default).
- :func:`with_memory`: a Runnable around a chat model that injects, calls the model, then
  records the turn (ingest and feedback), like
  :class:`~disclosure.faces.middleware.DisclosureMiddleware`; it streams when the model does, and
  takes per-call settings from ``config["configurable"]``.

Input may be LangChain messages, OpenAI-style dicts, a prompt value or a plain string (one user
message).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from disclosure.faces.extras import require

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
from langchain_core.prompt_values import PromptValue  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda  # noqa: E402
from pydantic import Field  # noqa: E402

from disclosure.faces.middleware.chat import (  # noqa: E402
    OPTIONS_KEY,
    CallOptions,
    DisclosureMiddleware,
    PreparedCall,
)
from disclosure.faces.middleware.retrieval import retrieve  # noqa: E402
from disclosure.service.pool import ControllerPool  # noqa: E402
from tiers.errors import InvalidInputError  # noqa: E402

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

__all__ = ["DisclosureRetriever", "memory_injector", "with_memory"]


class DisclosureRetriever(BaseRetriever):
    """Disclosed memories as Documents (``memory``: a controller, or a pool and ``namespace``)."""

    memory: Any
    namespace: dict[str, str] = Field(default_factory=dict)
    level: str | None = None
    budget: int | None = None
    k: int | None = Field(default=None, ge=1, description="at most k documents, best first")
    search_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="k, level and/or budget, as per-call keywords are"
    )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        settings: dict[str, Any] = {"k": self.k, "level": self.level, "budget": self.budget}
        given = {**self.search_kwargs, **kwargs}
        unknown = sorted(set(given) - set(settings))
        if unknown:
            raise InvalidInputError(
                f"DisclosureRetriever does not know {unknown[0]!r}; it takes k, level and budget"
            )
        settings.update(given)
        found = retrieve(
            self.memory,
            self.namespace,
            query,
            level=settings["level"],
            budget=settings["budget"],
            k=settings["k"],
        )
        return [Document(page_content=r.memory.content, metadata=r.metadata()) for r in found]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs
        )


def memory_injector(
    memory: DisclosureController | ControllerPool,
    *,
    namespace: Mapping[str, str] | None = None,
    **middleware: Any,
) -> Runnable[Any, list[BaseMessage]]:
    """A Runnable: messages in, the same messages with the disclosed context inserted out."""
    injector = DisclosureMiddleware(memory, namespace=namespace, **middleware)

    def inject(messages: Any, config: RunnableConfig) -> list[BaseMessage]:
        options = replace(_options(config), record=False)
        prepared = injector.prepare(_as_dicts(messages), options)
        return convert_to_messages([dict(m) for m in prepared.messages])

    return RunnableLambda(inject, name="memory_injector")


def with_memory(
    model: Runnable[Any, Any],
    memory: DisclosureController | ControllerPool,
    *,
    namespace: Mapping[str, str] | None = None,
    **middleware: Any,
) -> Runnable[Any, Any]:
    """A Runnable around ``model``: inject the context, call the model, record the turn.

    ``invoke``/``ainvoke`` and ``stream``/``astream`` (chunk by chunk, as the model streams; a
    stream left early records the reply so far, marked partial). Per call,
    ``config={"configurable": {...}}`` may name ``user``, ``tenant``, ``conversation``,
    ``session_id`` (LangGraph's ``thread_id`` is taken for it), ``level`` and ``budget``, or
    give them all under ``"disclosure"`` (unknown keys there are errors).
    """
    return _WithMemory(model, DisclosureMiddleware(memory, namespace=namespace, **middleware))


class _WithMemory(Runnable[Any, Any]):
    """What :func:`with_memory` returns."""

    name = "with_memory"

    def __init__(self, model: Runnable[Any, Any], wrapper: DisclosureMiddleware) -> None:
        self.model = model
        self.wrapper = wrapper

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        prepared = self.wrapper.prepare(_as_dicts(input), _options(config))
        reply = self.model.invoke(_messages(prepared), config, **kwargs)
        self.wrapper.complete(prepared, _text(reply))
        return reply

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        prepared = await asyncio.to_thread(self.wrapper.prepare, _as_dicts(input), _options(config))
        reply = await self.model.ainvoke(_messages(prepared), config, **kwargs)
        await self.wrapper.acomplete(prepared, _text(reply))
        return reply

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[Any]:
        prepared = self.wrapper.prepare(_as_dicts(input), _options(config))
        parts: list[str] = []
        finished = False
        try:
            for chunk in self.model.stream(_messages(prepared), config, **kwargs):
                parts.append(_text(chunk) or "")
                yield chunk
            finished = True
        finally:
            self.wrapper.complete(prepared, "".join(parts) or None, partial=not finished)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> AsyncIterator[Any]:
        prepared = await asyncio.to_thread(self.wrapper.prepare, _as_dicts(input), _options(config))
        parts: list[str] = []
        finished = False
        try:
            async for chunk in self.model.astream(_messages(prepared), config, **kwargs):
                parts.append(_text(chunk) or "")
                yield chunk
            finished = True
        finally:
            await asyncio.shield(
                self.wrapper.acomplete(prepared, "".join(parts) or None, partial=not finished)
            )


_CONFIGURABLE = ("tenant", "user", "conversation", "session_id", "level", "budget")


def _options(config: RunnableConfig | None) -> CallOptions:
    """Per-call settings from ``config["configurable"]``."""
    configurable = dict((config or {}).get("configurable") or {})
    picked = {k: configurable[k] for k in _CONFIGURABLE if configurable.get(k) is not None}
    thread = configurable.get("thread_id")
    if "session_id" not in picked and isinstance(thread, str) and thread:
        picked["session_id"] = thread
    nested = configurable.get(OPTIONS_KEY)
    if nested is not None:
        if not isinstance(nested, Mapping):
            raise InvalidInputError(f'configurable["{OPTIONS_KEY}"] must be a mapping')
        picked.update(nested)
    return CallOptions.coerce(picked)


def _messages(prepared: PreparedCall) -> list[BaseMessage]:
    return convert_to_messages([dict(m) for m in prepared.messages])


def _as_dicts(given: Any) -> list[dict[str, Any]]:
    """OpenAI-style dicts from what a chat model accepts: a string (one user message), a
    prompt value, one message, or a sequence of messages or dicts."""
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    if isinstance(given, PromptValue):
        given = given.to_messages()
    elif isinstance(given, BaseMessage):
        given = [given]
    if not isinstance(given, Sequence):
        raise InvalidInputError(
            f"give messages, a string or a prompt value, not {type(given).__name__}"
        )
    return list(convert_to_openai_messages(convert_to_messages(given)))


def _text(reply: Any) -> str | None:
    content = getattr(reply, "content", reply)
    if isinstance(content, str):
        return content
    if isinstance(reply, BaseMessage):
        return reply.text if isinstance(reply.text, str) else None
    return None

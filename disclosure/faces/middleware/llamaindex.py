"""LlamaIndex adapters (the ``[llamaindex]`` extra, ``llama-index-core``).

- :class:`DisclosureRetriever`: a ``BaseRetriever`` returning ``NodeWithScore``, one
  ``TextNode`` per disclosed memory (its citation, tier, layer and score in the metadata; the
  model sees the citation, speaker and time of each).
- :class:`DisclosureMemoryBlock`: a memory block for LlamaIndex's ``Memory``. Asked for its
  content, it discloses for the latest user message (the turns before it as history) and
  returns the context as a marked reference block; handed the messages ``Memory`` flushes
  from its short-term queue, it stores them, one memory per message, in the block's
  namespace, under the ``Memory``'s session id::

      from llama_index.core.memory import Memory
      from disclosure.faces.middleware.llamaindex import DisclosureMemoryBlock

      memory = Memory.from_defaults(
          session_id="chat-42",
          memory_blocks=[DisclosureMemoryBlock(memory=pool, namespace={"user": "dana"})],
      )

``memory`` is a controller, or a :class:`~disclosure.service.pool.ControllerPool` and ``namespace``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from disclosure.faces.extras import require

require("llamaindex", "the LlamaIndex adapter")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.bridge.pydantic import Field  # noqa: E402
from llama_index.core.callbacks import CallbackManager  # noqa: E402
from llama_index.core.memory.memory import BaseMemoryBlock  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

from disclosure.faces.memories import MemoryBook  # noqa: E402
from disclosure.faces.middleware.messages import (  # noqa: E402
    MEMORY_CLOSE,
    MEMORY_OPEN,
    last_user_index,
)
from disclosure.faces.middleware.retrieval import check_k, leased, retrieve, stored  # noqa: E402
from disclosure.service.pool import ControllerPool  # noqa: E402

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

__all__ = ["DisclosureMemoryBlock", "DisclosureRetriever"]

# what a model is shown of each node's metadata besides its text
_SHOWN = ("citation", "speaker", "timestamp")
_HISTORY_TURNS = 6


class DisclosureRetriever(BaseRetriever):
    """Disclosed memories as ``NodeWithScore`` (best first, at most ``similarity_top_k``)."""

    def __init__(
        self,
        memory: DisclosureController | ControllerPool,
        *,
        namespace: Mapping[str, str] | None = None,
        level: str | None = None,
        budget: int | None = None,
        similarity_top_k: int | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.memory = memory
        self.namespace = dict(namespace or {})
        self.level = level
        self.budget = budget
        self.similarity_top_k = check_k(similarity_top_k)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = retrieve(
            self.memory,
            self.namespace,
            query_bundle.query_str,
            level=self.level,
            budget=self.budget,
            k=self.similarity_top_k,
        )
        nodes = []
        for entry in found:
            metadata = entry.metadata()
            node = TextNode(
                id_=entry.memory.id,
                text=entry.memory.content,
                metadata=metadata,
                excluded_llm_metadata_keys=[k for k in metadata if k not in _SHOWN],
                excluded_embed_metadata_keys=list(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=entry.item.score))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


class DisclosureMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for LlamaIndex's ``Memory``: disclosure for the latest messages, and
    the flushed messages stored (``record``). ``level``/``budget``: as ``disclose`` takes them."""

    name: str = Field(default="disclosed_memory", description="The name of the memory block.")
    memory: Any = Field(description="A DisclosureController, or a ControllerPool")
    namespace: dict[str, str] = Field(default_factory=dict)
    level: str | None = None
    budget: int | None = Field(default=None, ge=1)
    record: bool = Field(default=True, description="store the messages Memory flushes")

    async def _aget(
        self,
        messages: list[ChatMessage] | None = None,
        session_id: str | None = None,
        **block_kwargs: Any,
    ) -> str:
        turns = [t for t in (_turn(m) for m in messages or []) if t["content"]]
        asking = last_user_index(turns)
        if asking is None:
            return ""
        query, history = turns[asking]["content"], turns[:asking][-_HISTORY_TURNS:]
        return await asyncio.to_thread(self._disclose, query, history)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if not self.record or not messages:
            return
        session = next(
            (m.additional_kwargs.get("session_id") for m in messages if m.additional_kwargs),
            None,
        )
        turns = [t for t in (_turn(m) for m in messages) if t["content"].strip()]
        if turns:
            await asyncio.to_thread(self._store, turns, session)

    def _disclose(self, query: str, history: Sequence[Mapping[str, str]]) -> str:
        if not stored(self.memory, self.namespace):
            return ""  # nothing stored yet: nothing to disclose, and a read creates nothing
        with leased(self.memory, self.namespace) as controller:
            result = controller.disclose(
                query, history=list(history), level=self.level, budget=self.budget
            )
            settings = controller.profile.middleware
        if not result.items:
            return ""
        body = f"{settings.preamble}\n\n{result.text}" if settings.preamble else result.text
        return f"{settings.memory_rule}\n{MEMORY_OPEN}\n{body}\n{MEMORY_CLOSE}"

    def _store(self, turns: list[dict[str, str]], session: str | None) -> None:
        session_id = session if isinstance(session, str) and session else None
        if isinstance(self.memory, ControllerPool):
            with self.memory.writing(self.memory.namespace(self.namespace)) as controller:
                MemoryBook(controller).add(turns, session_id=session_id)
            return
        MemoryBook(self.memory).add(turns, session_id=session_id)


def _turn(message: ChatMessage) -> dict[str, str]:
    """A chat message as the library's plain ``{role, content}`` (its text blocks only)."""
    role = message.role.value if hasattr(message.role, "value") else str(message.role)
    return {"role": role, "content": message.content or ""}

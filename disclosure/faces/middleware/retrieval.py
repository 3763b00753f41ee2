"""What the framework retrievers share (LangChain's and LlamaIndex's): a disclosure's memories,
best first, with the metadata each framework's documents or nodes carry.

Reading a pool's namespace that nothing was written to answers nothing and creates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from disclosure.service.pool import ControllerPool
from tiers.errors import InvalidInputError

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController
    from disclosure.core.result import DisclosedItem, DisclosureResult
    from tiers.memory import Memory

__all__ = ["Retrieved", "check_k", "leased", "retrieve"]


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One disclosed memory: the item the disclosure chose and the memory in full."""

    item: DisclosedItem
    memory: Memory
    result: DisclosureResult

    def metadata(self) -> dict[str, Any]:
        """Its citation, tier, layer, score, tokens, session, time, speaker, kind and level."""
        return {
            "id": self.item.id,
            "citation": self.item.citation,
            "tier": self.item.tier,
            "layer": self.item.layer.value,
            "score": self.item.score,
            "tokens": self.item.tokens,
            "session_id": self.memory.session_id,
            "timestamp": self.memory.timestamp.isoformat(),
            "speaker": self.memory.speaker,
            "kind": self.memory.kind.value,
            "level": self.result.level.value,
        }


def check_k(k: Any) -> int | None:
    """``k`` if it is None or a positive whole number; else InvalidInputError."""
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise InvalidInputError(f"k must be a positive whole number, not {k!r}")
    return k


def leased(
    memory: DisclosureController | ControllerPool, namespace: Mapping[str, str]
) -> AbstractContextManager[DisclosureController]:
    """The controller to read: a pool's namespace (leased), or the controller itself."""
    if isinstance(memory, ControllerPool):
        return memory.lease(memory.namespace(dict(namespace)))
    return nullcontext(memory)


def stored(memory: DisclosureController | ControllerPool, namespace: Mapping[str, str]) -> bool:
    """Whether anything was ever written where ``memory`` and ``namespace`` point."""
    if isinstance(memory, ControllerPool):
        return memory.exists(memory.namespace(dict(namespace)))
    return True


def retrieve(
    memory: DisclosureController | ControllerPool,
    namespace: Mapping[str, str],
    query: str,
    *,
    level: str | None = None,
    budget: int | None = None,
    k: int | None = None,
) -> list[Retrieved]:
    """The memories a disclosure for ``query`` shows, best first, at most ``k``."""
    check_k(k)
    if not stored(memory, namespace):
        return []  # nothing stored: nothing to show, and a read creates no namespace
    with leased(memory, namespace) as controller:
        result = controller.disclose(query, level=level, budget=budget)
        found = {m.id: m for m in controller.store.get([i.id for i in result.items])}
    items = sorted(result.items, key=lambda i: -i.score)[:k]
    return [Retrieved(i, found[i.id], result) for i in items if i.id in found]

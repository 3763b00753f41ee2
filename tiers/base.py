"""The plug-in points of the tiers: the Tier protocol and the Embedder protocol.

Every tier (hot, warm, cold) passes one contract test class (``tests/tiers/contract.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tiers.memory import Memory, ScoredMemory

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@runtime_checkable
class Tier(Protocol):
    """A place where memories live and can be searched.

    ``add`` is idempotent by id (same id and content: no change; new content: replaces the old
    version). ``search`` returns at most ``k`` hits, best first, with scores in [0, 1] and ranks
    from 0. ``get`` returns the memories it holds, in the order of ``ids``, skipping unknown
    ids. ``forget`` returns how many of ``ids`` it removed. After ``close`` the tier is unusable.
    """

    name: str

    def add(self, memories: Sequence[Memory]) -> None: ...

    def search(self, query: str, k: int) -> list[ScoredMemory]: ...

    def get(self, ids: Sequence[str]) -> list[Memory]: ...

    def forget(self, ids: Sequence[str]) -> int: ...

    def count(self) -> int: ...

    def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    ``name`` identifies the vector space (model and pooling): an index built with one name is
    never queried with vectors of another.
    """

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An array of shape (len(texts), dimension); row i embeds texts[i]."""
        ...

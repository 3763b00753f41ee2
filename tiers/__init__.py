"""Where memories live: the Memory record, the Tier protocol, and the hot / warm / cold tiers."""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from tiers.chroma_server import ChromaServer
    from tiers.citations import citation_code
    from tiers.cold import ColdArchive
    from tiers.embedders import (
        QueryEmbeddingCache,
        available_embedders,
        get_embedder,
        register_embedder,
    )
    from tiers.errors import (
        CorruptDataError,
        DisclosureError,
        IncompatibleDataError,
        InvalidInputError,
        MemoryNotFoundError,
        MemoryValidationError,
        StorageError,
        TierClosedError,
        TierUnavailableError,
    )
    from tiers.history import history_line
    from tiers.hot import HotTier
    from tiers.memory import Memory, MemoryKind, ScoredMemory
    from tiers.minilm import SentenceTransformerEmbedder
    from tiers.onnx_embedder import OnnxEmbedder
    from tiers.reports import ForgetReport, IngestReport, StoreStats
    from tiers.store import TieredStore
    from tiers.text import Tokenizer, tokenize
    from tiers.warm import WarmTier

# Public names load on first use: importing one light module of this package (its errors, its
# records) does not import the heavy ones (numpy, the engines).
_WHERE: dict[str, tuple[str, ...]] = {
    "tiers.chroma_server": ("ChromaServer",),
    "tiers.citations": ("citation_code",),
    "tiers.cold": ("ColdArchive",),
    "tiers.embedders": (
        "QueryEmbeddingCache",
        "available_embedders",
        "get_embedder",
        "register_embedder",
    ),
    "tiers.errors": (
        "CorruptDataError",
        "DisclosureError",
        "IncompatibleDataError",
        "InvalidInputError",
        "MemoryNotFoundError",
        "MemoryValidationError",
        "StorageError",
        "TierClosedError",
        "TierUnavailableError",
    ),
    "tiers.history": ("history_line",),
    "tiers.hot": ("HotTier",),
    "tiers.memory": ("Memory", "MemoryKind", "ScoredMemory"),
    "tiers.minilm": ("SentenceTransformerEmbedder",),
    "tiers.onnx_embedder": ("OnnxEmbedder",),
    "tiers.reports": ("ForgetReport", "IngestReport", "StoreStats"),
    "tiers.store": ("TieredStore",),
    "tiers.text": ("Tokenizer", "tokenize"),
    "tiers.warm": ("WarmTier",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> _Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ChromaServer",
    "ColdArchive",
    "CorruptDataError",
    "DisclosureError",
    "ForgetReport",
    "HotTier",
    "IncompatibleDataError",
    "IngestReport",
    "InvalidInputError",
    "Memory",
    "MemoryKind",
    "MemoryNotFoundError",
    "MemoryValidationError",
    "OnnxEmbedder",
    "QueryEmbeddingCache",
    "ScoredMemory",
    "SentenceTransformerEmbedder",
    "StorageError",
    "StoreStats",
    "TierClosedError",
    "TierUnavailableError",
    "TieredStore",
    "Tokenizer",
    "WarmTier",
    "available_embedders",
    "citation_code",
    "get_embedder",
    "history_line",
    "register_embedder",
    "tokenize",
]

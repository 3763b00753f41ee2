"""Where memories live: the Memory record, the Tier protocol, and the hot / warm / cold tiers."""

from tiers.chroma_server import ChromaServer
from tiers.embedders import (
    QueryEmbeddingCache,
    SentenceTransformerEmbedder,
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
    TierUnavailableError,
)
from tiers.memory import Memory, MemoryKind, ScoredMemory
from tiers.onnx_embedder import OnnxEmbedder
from tiers.warm import WarmTier

__all__ = [
    "ChromaServer",
    "CorruptDataError",
    "DisclosureError",
    "IncompatibleDataError",
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
    "TierUnavailableError",
    "WarmTier",
    "available_embedders",
    "get_embedder",
    "register_embedder",
]

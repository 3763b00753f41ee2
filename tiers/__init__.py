"""Where memories live: the Memory record, the Tier protocol, and the hot / warm / cold tiers."""

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

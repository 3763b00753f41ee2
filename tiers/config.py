"""The tiers' profile section: capacities, engines and the write path's policies."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HotConfig(_Section):
    """The in-memory working set (seed 003: 100 events within 24 hours)."""

    max_items: int = Field(default=100, gt=0)
    max_age_hours: float = Field(default=24.0, gt=0)


class WarmConfig(_Section):
    """Vectors in ChromaDB: embedded in the data directory, or a Chroma server."""

    backend: Literal["embedded", "server"] = "embedded"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, gt=0, lt=65536)
    collection: str = Field(
        default="memories",
        min_length=3,
        max_length=512,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]$",  # Chroma's rule for collection names
    )
    max_items: int = Field(default=1_000_000, gt=0)
    embedder: str = Field(default="auto", min_length=1)
    embedder_cache_dir: Path | None = None
    embed_batch_size: int = Field(default=64, gt=0)
    write_batch_size: int = Field(default=1000, gt=0)
    query_cache_size: int = Field(default=256, ge=0)
    timeout_seconds: float = Field(default=30.0, gt=0)


class ColdConfig(_Section):
    """The durable archive and its BM25 engine."""

    engine: Literal["rank_bm25", "fts5"] = "fts5"


class IngestConfig(_Section):
    """Write-path limits and retry policy."""

    max_content_chars: int = Field(default=100_000, gt=0)


class TiersConfig(_Section):
    hot: HotConfig = HotConfig()
    warm: WarmConfig = WarmConfig()
    cold: ColdConfig = ColdConfig()
    ingest: IngestConfig = IngestConfig()

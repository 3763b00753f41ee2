"""The tiers' profile section: capacities, engines and the write path's policies."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DATABASE_URL_VARIABLE = "TIERED_DISCLOSURE_DATABASE_URL"  # the archive's PostgreSQL, if any


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenizerConfig(_Section):
    """One tokenisation for every lexical index (the hot set's BM25 and both cold engines).

    Documents are indexed with every token; ``stopwords`` are dropped from queries only, so
    changing them never needs a reindex. ``english`` is a built-in list, ``none`` keeps every
    word, or give your own list. ``stem: porter`` reduces words to their Porter stems in
    documents and queries alike ("painted" meets "paintings"); changing it rebuilds the FTS5
    index when the archive next opens.
    """

    stopwords: Literal["english", "none"] | tuple[str, ...] = "english"
    stem: Literal["porter", "none"] = "porter"


class HotWeights(_Section):
    """How the hot tier blends lexical match, recency and importance (renormalised to sum 1)."""

    lexical: float = Field(default=0.6, ge=0.0)
    recency: float = Field(default=0.25, ge=0.0)
    importance: float = Field(default=0.15, ge=0.0)

    @model_validator(mode="after")
    def _some_weight(self) -> HotWeights:
        if self.lexical + self.recency + self.importance <= 0:
            raise ValueError("at least one weight must be positive")
        return self


class HotConfig(_Section):
    """The in-memory working set (by default the last 100 memories within 24 hours).

    ``clock: latest`` measures ages from the newest memory seen (a replayed or resumed
    conversation keeps its working set); ``wall`` measures them from the system clock.
    """

    max_items: int = Field(default=100, gt=0)
    max_age_hours: float = Field(default=24.0, gt=0)
    clock: Literal["latest", "wall"] = "latest"
    recency_half_life_hours: float = Field(default=6.0, gt=0)
    weights: HotWeights = HotWeights()


class WarmConfig(_Section):
    """Vectors in ChromaDB: embedded in the data directory, or a Chroma server.

    ``context: previous`` embeds each memory's ``speaker: content`` line after the line of the
    turn before it in its session (contextual vectors: a reply is found by its question's topic);
    ``line`` embeds the ``speaker: content`` line alone, ``none`` the content alone. Changing it
    needs a rebuild of the warm index.
    ``context_chars``: the turn before is cut to its first this many characters, so a long
    previous turn (an assistant's answer) cannot fill the embedder's window and push out the
    memory's own words; 0 keeps it whole.
    ``backend: server`` talks to a Chroma server at ``host``:``port`` (``ssl``: over https);
    each data directory (namespace) gets its own collection there, named ``collection`` plus
    the directory's name (see :mod:`tiers.warm_layout`).
    ``passage_words``: a memory whose content runs past this many words is also indexed by
    passages of about this many words, so any part of a long memory can be found by meaning
    (:mod:`tiers.passages`); 0 turns it off.
    ``exact_max_items``: in embedded mode, while a collection holds at most this many vectors,
    searches compare the query with every one of them in memory (exact, and faster than Chroma's
    HNSW index at that size; 1.5 KB of memory per 384-d vector; :mod:`tiers.exact_index`),
    once the process has searched twice; 0 keeps every search on Chroma.
    ``search_ef``: how many candidates Chroma's HNSW index weighs per query (its ``ef_search``;
    Chroma's own default is 100). More finds more of the true nearest vectors and costs time:
    see the Warm tier in docs/tiers.md for the measured curve. Set on every collection this tier
    opens, before its first search.
    """

    backend: Literal["embedded", "server"] = "embedded"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, gt=0, lt=65536)
    ssl: bool = False
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
    context: Literal["previous", "line", "none"] = "previous"
    context_chars: int = Field(default=300, ge=0)
    passage_words: int = Field(default=0, ge=0)
    exact_max_items: int = Field(default=20_000, ge=0)
    search_ef: int = Field(default=300, ge=10, le=10_000)


class ColdConfig(_Section):
    """The durable archive and its BM25 engine.

    ``synchronous: full`` fsyncs the write-ahead log at every commit, so an ingest that returned
    survives a power loss or OS crash too (``normal`` survives a killed process only).
    ``verify_on_open_max_mb``: archives up to this size run ``PRAGMA quick_check`` when opened
    (0: never; a damaged file is still reported as soon as SQLite reads a bad page).
    ``fts5_budget``: rows FTS5 may score per query; beyond it the commonest query terms only
    re-score the best ``fts5_rescore`` memories found by the rarer ones (0: always exact; see
    :mod:`tiers.fts5`). ``versions_kept``: how many earlier versions of a memory whose content
    was replaced stay readable (``history``), the oldest dropped first; forgetting a memory
    erases them all (0: keep none).
    ``database_url``: ``postgresql://user@host:port/db`` puts the archive (memories, versions,
    outbox, BM25 statistics) in PostgreSQL, one schema per namespace, so several replicas share
    it (:mod:`tiers.pg_archive`; ``$TIERED_DISCLOSURE_DATABASE_URL`` sets it too). Unset: the
    embedded SQLite archive in the data directory; ``engine`` and the SQLite settings apply to
    that one only.
    """

    engine: Literal["rank_bm25", "fts5"] = "fts5"
    database_url: str | None = Field(
        default=None, pattern=r"^postgres(ql)?://", min_length=14, repr=False
    )
    synchronous: Literal["full", "normal"] = "full"
    verify_on_open_max_mb: int = Field(default=256, ge=0)
    fts5_budget: int = Field(default=30_000, ge=0)
    fts5_rescore: int = Field(default=400, gt=0)
    versions_kept: int = Field(default=20, ge=0, le=10_000)


class IngestConfig(_Section):
    """Write-path limits and policies. ``redact_secrets``: recognisable secrets (API keys,
    tokens, private keys, passwords in URLs and assignments) are replaced by a marker naming
    their kind before anything is stored (``safeguards.secrets``); off stores text as given."""

    max_content_chars: int = Field(default=100_000, gt=0)
    redact_secrets: bool = True


class OutboxConfig(_Section):
    """The persistent queue that feeds the warm index: batching, draining and retries.

    ``drain``: ``inline`` embeds during ``ingest`` (failures stay queued), ``background`` in a
    worker thread, ``manual`` only on ``flush()``. A failed batch waits
    ``retry_base_seconds * 2**(attempts - 1)``, at most ``retry_max_seconds``; it is never
    dropped. ``lease_seconds`` (PostgreSQL archive): a replica's claim on the items it is
    embedding; if it dies, another replica takes them over once the lease has run out.
    """

    drain: Literal["inline", "background", "manual"] = "inline"
    lease_seconds: float = Field(default=120.0, gt=0)
    batch_size: int = Field(default=64, gt=0, le=5000)
    retry_base_seconds: float = Field(default=1.0, gt=0)
    retry_max_seconds: float = Field(default=300.0, gt=0)


class LifecycleConfig(_Section):
    """How items move between tiers with use (capacity and age move them down).

    A cold-only memory used ``cold_to_warm_uses`` times is re-embedded into the warm index; a
    memory used ``warm_to_hot_uses`` times since it last moved joins the hot working set.
    """

    cold_to_warm_uses: int = Field(default=2, gt=0)
    warm_to_hot_uses: int = Field(default=2, gt=0)


class TiersConfig(_Section):
    hot: HotConfig = HotConfig()
    warm: WarmConfig = WarmConfig()
    cold: ColdConfig = ColdConfig()
    ingest: IngestConfig = IngestConfig()
    tokenizer: TokenizerConfig = TokenizerConfig()
    outbox: OutboxConfig = OutboxConfig()
    lifecycle: LifecycleConfig = LifecycleConfig()

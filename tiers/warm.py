"""The warm tier: memory vectors in ChromaDB, embedded in the data directory or on a server.

Each record is the memory's id, its content's vector from our own :class:`~tiers.base.Embedder`
(Chroma's default embedding function, which downloads a model, never runs) and one metadata
field, ``memory``, holding the memory's JSON, so a hit becomes a :class:`Memory` without another
lookup. The collection uses cosine HNSW, searched weighing ``tiers.warm.search_ef`` candidates
(300: with Chroma's own 100, 74% of the true top 100 came back at 50k vectors, 90% with 300;
``python -m benchmarks.hnsw_ef``); below ``tiers.warm.exact_max_items`` vectors an exact copy
in memory answers instead (:mod:`tiers.exact_index`). Chroma reports cosine *distance*
``d = 1 - cos``, in [0, 2]; a hit's score is the cosine similarity clipped to [0, 1]:
``score = max(0, min(1, 1 - d))`` (opposite or unrelated texts score 0, identical texts 1).
Nothing on the query path uses a metadata ``where`` filter (slow at scale).

What is embedded (``tiers.warm.context``): with ``previous`` (the default) a memory's history
line (``speaker: content``) preceded by the line of the turn before it in its session, given by
the caller as ``contexts``; answers are often replies whose topic sits in the turn before. With
``line``, the history line alone; with ``none``, the content alone. The collection's metadata
records the embedder's ``name`` and dimension and the context mode; reopening with others
raises :class:`IncompatibleDataError`. Adding re-embeds only memories whose embedded text
changed. Use counts for least-used eviction live in :mod:`tiers.warm_usage`.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tiers.base import Embedder
from tiers.chroma_client import (
    acquire_client,
    location,
    open_client,
    release_client,
    return_client,
)
from tiers.config import WarmConfig
from tiers.embedders import QueryEmbeddingCache
from tiers.erasure import erase_chroma
from tiers.errors import (
    DisclosureError,
    IncompatibleDataError,
    InvalidInputError,
    TierUnavailableError,
)
from tiers.exact_index import ExactCopy
from tiers.history import history_line
from tiers.memory import Memory, ScoredMemory
from tiers.passages import parent_of, passage_id, split_passages
from tiers.warm_usage import UsageLog

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the record layout changes; a newer index is refused
META_FORMAT, META_EMBEDDER, META_DIMENSION = "td_format", "td_embedder", "td_dimension"
META_CONTEXT = "td_context"
PASSAGES_SUFFIX = ".passages"  # the collection of a collection's passage vectors
PARENT_FIELD = "parent"
MEMORY_FIELD = "memory"
TEXT_FIELD = "text_sha"  # hash of the text the vector embeds: re-embed only when it changes
# The exact in-memory copy is read after this many searches: a process that asks once (a CLI
# query) never pays for reading every vector.
EXACT_AFTER_SEARCHES = 2


class WarmTier:
    """Vectors in ChromaDB; thread-safe (searches run concurrently, writes one at a time)."""

    name = "warm"

    def __init__(
        self,
        path: Path | None,
        config: WarmConfig,
        embedder: Embedder,
        *,
        state_dir: Path | None = None,
        exclusive: bool = False,
    ) -> None:
        """Open (or create) the collection.

        ``path`` is Chroma's directory in embedded mode (None only with ``backend: server``).
        ``state_dir`` holds the usage counts; default ``path``; with neither, they stay in memory.
        ``exclusive``: nothing but this tier writes the collection (the store says so when it
        holds its directory's lock); then, in embedded mode, searches may use an exact copy of
        the vectors in memory (``exact_max_items``).
        """
        self.path = Path(path) if path is not None else None
        self.config = config
        self.embedder = embedder
        self._closed = False
        self._passage_count = 0
        self._write_lock = threading.RLock()
        self._queries = QueryEmbeddingCache(embedder, config.query_cache_size)
        self._exact: dict[str, ExactCopy] = {}  # collection name -> its copy, when wanted
        self._searches = 0
        self._count_lock = threading.Lock()
        self._filler: threading.Thread | None = None
        self._stop_filling = threading.Event()
        self._client: Any = acquire_client(self.path, config)
        self._usage_synced = False
        try:
            self._collection = self._open_collection()
            self._passages = self._open_passages()
            self._batch = min(config.write_batch_size, self._client.get_max_batch_size())
            if exclusive and config.backend == "embedded" and config.exact_max_items > 0:
                for collection in (self._collection, self._passages):
                    if collection is not None:
                        self._exact[collection.name] = ExactCopy(
                            embedder.dimension, config.exact_max_items
                        )
            state = state_dir if state_dir is not None else self.path
            self._usage = UsageLog(state / usage_file(config) if state is not None else None)
            if config.backend == "embedded":
                self._resync_usage()  # on a server: when first needed (see _resync_usage)
        except BaseException:
            if hasattr(self, "_usage"):
                self._usage.close()
            return_client(self._client)
            raise

    def __repr__(self) -> str:
        where = self._location()
        return f"WarmTier({self.config.backend} at {where}, embedder={self.embedder.name!r})"

    # -- opening ------------------------------------------------------------------------------

    def _open_collection(self) -> Any:
        from chromadb.errors import NotFoundError

        name = self.config.collection
        try:
            try:
                collection = self._client.get_collection(name, embedding_function=None)
            except NotFoundError:
                collection = self._client.get_or_create_collection(
                    name,
                    embedding_function=None,
                    configuration=self._hnsw(),
                    metadata={
                        META_FORMAT: FORMAT,
                        META_EMBEDDER: self.embedder.name,
                        META_DIMENSION: self.embedder.dimension,
                        META_CONTEXT: self.config.context,
                    },
                )
        except Exception as exc:
            raise self._failure(f"opening collection {name!r}", exc) from exc
        self._check_compatible(dict(collection.metadata or {}))
        self._set_search_ef(collection)
        return collection

    def _hnsw(self) -> dict[str, Any]:
        return {"hnsw": {"space": "cosine", "ef_search": self.config.search_ef}}

    def _set_search_ef(self, collection: Any) -> None:
        """Give a collection made with another ``search_ef`` (or before the setting) this
        tier's, before its index is first searched: Chroma reads it when it loads the index.
        A server that refuses the change keeps its own, with a warning."""
        hnsw = (getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}
        if hnsw.get("ef_search") == self.config.search_ef:
            return
        try:
            with warnings.catch_warnings():  # "legacy embedding function config": we have
                warnings.simplefilter("ignore", DeprecationWarning)  # none, on purpose
                collection.modify(configuration={"hnsw": {"ef_search": self.config.search_ef}})
        except Exception as exc:
            log.warning(
                "could not set ef_search %d on collection %r (%s); it keeps %s",
                self.config.search_ef,
                collection.name,
                exc,
                hnsw.get("ef_search"),
            )

    def _open_passages(self) -> Any | None:
        """The passage vectors' collection: created when ``passage_words`` is set, opened
        whenever it exists (so that forget still erases passages written under another
        setting), None otherwise."""
        from chromadb.errors import NotFoundError

        name = self._collection.name + PASSAGES_SUFFIX
        try:
            try:
                passages = self._client.get_collection(name, embedding_function=None)
            except NotFoundError:
                if not self.config.passage_words:
                    return None
                passages = self._client.get_or_create_collection(
                    name,
                    embedding_function=None,
                    configuration=self._hnsw(),
                    metadata={META_EMBEDDER: self.embedder.name},
                )
        except Exception as exc:
            raise self._failure(f"opening collection {name!r}", exc) from exc
        self._set_search_ef(passages)
        self._passage_count = int(passages.count())
        return passages

    def _check_compatible(self, meta: dict[str, Any]) -> None:
        where = f"collection {self.config.collection!r} at {self._location()}"
        rebuild = (
            "rebuild it: WarmTier.drop(...) deletes the collection, then re-add the memories "
            "from the archive (or point tiers.warm.collection at a new collection)"
        )
        if META_EMBEDDER not in meta:
            raise IncompatibleDataError(f"{where} was not written by tiered-disclosure; {rebuild}")
        if int(meta.get(META_FORMAT, 0)) > FORMAT:
            raise IncompatibleDataError(
                f"{where} has record format {meta[META_FORMAT]}, newer than this version's "
                f"{FORMAT}; upgrade tiered-disclosure or {rebuild}"
            )
        context = meta.get(META_CONTEXT, "none")
        if context != self.config.context:
            raise IncompatibleDataError(
                f"{where} embeds texts with context {context!r}; this tier is set to "
                f"{self.config.context!r} (tiers.warm.context). Set it back, or {rebuild}"
            )
        found = (meta[META_EMBEDDER], int(meta.get(META_DIMENSION, 0)))
        wanted = (self.embedder.name, self.embedder.dimension)
        if found != wanted:
            raise IncompatibleDataError(
                f"{where} holds vectors of embedder {found[0]!r} ({found[1]}-d); this tier's "
                f"embedder is {wanted[0]!r} ({wanted[1]}-d). Set tiers.warm.embedder to one "
                f"producing {found[0]!r} vectors, or {rebuild}"
            )

    def _resync_usage(self) -> None:
        """Make the use counts cover exactly the indexed ids. In embedded mode on open (after a
        crash between index and log); on a server, whose collection other replicas write too,
        only when the counts are first read (eviction, :meth:`usage`): listing every id of a
        large collection would otherwise make each namespace's first open on a replica slow,
        while a collection below ``max_items`` never needs them."""
        if self._usage_synced:
            return
        self._usage_synced = True
        if self._usage.count() != self.count():
            self._usage.resync(set(self._all_ids()))

    # -- the Tier protocol ----------------------------------------------------------------------

    def add(self, memories: Sequence[Memory], *, contexts: Mapping[str, str] | None = None) -> None:
        """Index ``memories`` (idempotent by id; a new text replaces the old vector).

        ``contexts``: per memory id, the line of the turn before it (``context: previous``).

        The embedder runs first: if it fails nothing is written. Chroma writes go in batches, each
        complete (vector and memory together); if one fails, the batches before it are indexed,
        the rest keep their previous state, and :class:`TierUnavailableError` says how far it got.
        """
        self._check_open()
        latest = {m.id: m for m in memories}  # the last version of an id in one call wins
        if not latest:
            return
        texts = {i: self.text_of(m, (contexts or {}).get(i)) for i, m in latest.items()}
        with self._write_lock:
            stored = self._stored(list(latest))
            embed, relabel = _plan(latest.values(), texts, stored)
            passages = self._passages_of(embed)
            vectors = self._embed([texts[m.id] for m in embed] + [t for _, _, t in passages])
            self._upsert(embed, vectors[: len(embed)], texts)
            self._relabel(relabel, texts)
            changed = [m.id for m in embed if m.id in stored]
            self._replace_passages(changed, passages, vectors[len(embed) :])

    def _passages_of(self, memories: Sequence[Memory]) -> list[tuple[str, str, str]]:
        """(passage id, memory id, text) of the passages ``memories`` are also indexed by."""
        words = self.config.passage_words
        if not words or self._passages is None:
            return []
        out: list[tuple[str, str, str]] = []
        for memory in memories:
            speaker = memory.speaker or memory.kind.value
            for n, passage in enumerate(split_passages(memory.content, words)):
                out.append((passage_id(memory.id, n), memory.id, f"{speaker}: {passage}"))
        return out

    def _replace_passages(
        self,
        changed: Sequence[str],
        passages: Sequence[tuple[str, str, str]],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """Drop the passages of memories whose text changed, then write the new ones."""
        if self._passages is None:
            return
        self._drop_passages(changed)
        for start in range(0, len(passages), self._batch):
            chunk = passages[start : start + self._batch]
            try:
                self._passages.upsert(
                    ids=[i for i, _, _ in chunk],
                    embeddings=vectors[start : start + len(chunk)],
                    metadatas=[{PARENT_FIELD: parent} for _, parent, _ in chunk],
                )
            except Exception as exc:
                self._exact_write_failed(self._passages)
                raise self._failure("upsert of passages", exc) from exc
            self._copy_upsert(
                self._passages, [i for i, _, _ in chunk], vectors[start : start + len(chunk)]
            )
        if passages or changed:
            self._passage_count = int(self._passages.count())

    def _passage_ids(self, parents: Sequence[str]) -> list[str]:
        """The ids of the passages of ``parents``."""
        if self._passages is None or not self._passage_count:
            return []
        found: list[str] = []
        for chunk in _chunks(_valid_ids(parents), self._batch):
            try:
                got = self._passages.get(where={PARENT_FIELD: {"$in": chunk}}, include=[])
            except Exception as exc:
                raise self._failure("get of passages", exc) from exc
            found += got["ids"]
        return found

    def _drop_passages(self, parents: Sequence[str]) -> list[str]:
        """Delete the passages of ``parents``; return their ids."""
        ids = self._passage_ids(parents)
        if ids and self._passages is not None:
            for chunk in _chunks(ids, self._batch):
                try:
                    self._passages.delete(ids=chunk)
                except Exception as exc:
                    self._exact_write_failed(self._passages)
                    raise self._failure("delete of passages", exc) from exc
                self._copy_remove(self._passages, chunk)
            self._passage_count = int(self._passages.count())
        return ids

    def text_of(self, memory: Memory, context: str | None = None) -> str:
        """What the vector of ``memory`` embeds (see the module's docstring)."""
        if self.config.context == "none":
            return memory.content
        line = history_line(memory)
        if self.config.context == "line":
            return line
        limit = self.config.context_chars
        if context and limit and len(context) > limit:
            context = context[:limit] + "…"
        return f"{context}\n{line}" if context else line

    def search(self, query: str, k: int) -> list[ScoredMemory]:
        """Up to ``k`` memories nearest to ``query``, best first, scores in [0, 1]."""
        self._check_open()
        if k <= 0 or not query.strip():
            return []
        return self.search_vector(self._query_vector(query), k)

    def prefetch(self, query: str) -> None:
        """Embed ``query`` into the query cache now, so a search that follows finds its vector
        (or waits for it) instead of embedding it then. Failures are left to that search."""
        if self._closed or not query.strip():
            return
        try:
            self._queries.vector(query)
        except Exception:  # the search reports it, as a degraded tier
            log.debug("prefetching a query embedding failed", exc_info=True)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32]:
        """The (cached) query embedding; an embedder failure is a TierUnavailableError."""
        try:
            return self._queries.vector(query)
        except DisclosureError:
            raise
        except Exception as exc:
            raise TierUnavailableError(f"embedder {self.embedder.name!r} failed: {exc}") from exc

    def search_ids(self, query: str, k: int) -> list[tuple[str, float]]:
        """Like :meth:`search`, as ``(id, score)`` pairs: nothing stored is fetched or parsed
        (the store reads the memories from the archive, which it does anyway)."""
        self._check_open()
        if k <= 0 or not query.strip():
            return []
        vector = np.asarray(self._query_vector(query), dtype=np.float32).reshape(-1)
        self._count_search()
        pairs = self._nearest(self._collection, vector, k, "query")
        return self._with_passages(pairs, vector, k)

    def _nearest(
        self, collection: Any, vector: npt.NDArray[np.float32], k: int, operation: str
    ) -> list[tuple[str, float]]:
        """The ``k`` ids of ``collection`` nearest to ``vector``, scores in [0, 1]: from its
        exact copy when that is ready, else from Chroma."""
        copy = self._exact.get(collection.name)
        exact = copy.search(vector, k) if copy is not None else None
        if exact is not None:
            return [(i, min(1.0, max(0.0, s))) for i, s in exact]
        try:
            result = collection.query(query_embeddings=[vector], n_results=k, include=["distances"])
        except Exception as exc:
            raise self._failure(operation, exc) from exc
        return [
            (str(i), min(1.0, max(0.0, 1.0 - float(d))))
            for i, d in zip(result["ids"][0], result["distances"][0], strict=False)
        ]

    def _count_search(self) -> None:
        """Start reading the exact copies in the background at the right search."""
        if not self._exact or self._filler is not None:
            return
        with self._count_lock:  # not the write lock: an ingest holds that while it embeds
            self._searches += 1
            if self._filler is None and self._searches >= EXACT_AFTER_SEARCHES:
                self._filler = threading.Thread(
                    target=self._fill_exact, name="warm-exact", daemon=True
                )
                self._filler.start()

    def _fill_exact(self) -> None:
        """Read every vector into the exact copies, holding the write lock so that no write
        falls between the reading and the copy (writes wait, searches use Chroma meanwhile)."""
        for collection in (c for c in (self._collection, self._passages) if c is not None):
            copy = self._exact.get(collection.name)
            if copy is None:
                continue
            try:
                with self._write_lock:
                    if self._stop_filling.is_set():
                        return
                    count = int(collection.count())
                    copy.fill(self._pages(collection), self._stop_filling, expected=count)
            except Exception:  # the copy is an optimisation: searches stay on Chroma
                log.warning("reading the exact copy of %s failed", collection.name, exc_info=True)
                copy.fail()

    def _pages(self, collection: Any) -> Iterator[tuple[list[str], Any]]:
        offset = 0
        while True:
            page = collection.get(include=["embeddings"], limit=self._batch, offset=offset)
            ids = [str(i) for i in page["ids"]]
            yield ids, page["embeddings"] if ids else []
            if len(ids) < self._batch:
                return
            offset += len(ids)

    def _with_passages(
        self, pairs: list[tuple[str, float]], vector: npt.NDArray[np.float32], k: int
    ) -> list[tuple[str, float]]:
        """``pairs`` merged with the memories whose passages are nearest: each memory scores
        the best of its own vector and its passages', best first, ``k`` at most."""
        if self._passages is None or not self._passage_count:
            return pairs
        nearest = self._nearest(
            self._passages, vector, min(k, self._passage_count), "query of passages"
        )
        best = dict(pairs)
        for i, score in nearest:
            parent = parent_of(i)
            if score > best.get(parent, -1.0):
                best[parent] = score
        return sorted(best.items(), key=lambda pair: -pair[1])[:k]

    def search_vector(self, vector: npt.ArrayLike, k: int) -> list[ScoredMemory]:
        """Like :meth:`search` with a precomputed query vector (1-D, the embedder's dimension)."""
        self._check_open()
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape != (self.embedder.dimension,):
            raise InvalidInputError(
                f"query vector has {query.size} values; the warm index holds "
                f"{self.embedder.dimension}-d vectors"
            )
        if k <= 0:
            return []
        try:
            result = self._collection.query(
                query_embeddings=[query], n_results=k, include=["metadatas", "distances"]
            )
        except Exception as exc:
            raise self._failure("query", exc) from exc
        hits = self._hits(result["ids"][0], result["metadatas"][0], result["distances"][0])
        if self._passages is None or not self._passage_count:
            return hits
        pairs = self._with_passages([(h.id, h.score) for h in hits], query, k)
        known = {h.id: h.memory for h in hits}
        stored = self._stored([i for i, _ in pairs if i not in known])
        known.update((i, Memory.from_json(json)) for i, (json, _) in stored.items())
        kept = [(i, score) for i, score in pairs if i in known]
        return [ScoredMemory(known[i], self.name, s, n) for n, (i, s) in enumerate(kept)]

    def get(self, ids: Sequence[str]) -> list[Memory]:
        """The memories held among ``ids``, in that order; unknown ids are skipped."""
        self._check_open()
        stored = self._stored(ids)
        return [Memory.from_json(stored[i][0]) for i in ids if i in stored]

    def forget(self, ids: Sequence[str]) -> int:
        """Remove ``ids``; return how many were indexed."""
        self._check_open()
        with self._write_lock:
            present = self.contains(ids)
            self._delete(sorted(present))
            passages = self._drop_passages(list(ids))
            self._usage.removed(present)
            gone = sorted(present) + passages
            if gone and self.config.backend == "embedded" and self.path is not None:
                erase_chroma(self.path, gone)  # no byte of them left on disk
        return len(present)

    def count(self) -> int:
        self._check_open()
        try:
            return int(self._collection.count())
        except Exception as exc:
            raise self._failure("count", exc) from exc

    def close(self) -> None:
        """Flush the usage counts and release Chroma; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop_filling.set()
        if self._filler is not None:
            self._filler.join()
        try:
            self._usage.close()
        finally:
            return_client(self._client)

    # -- beyond the protocol: what the write path and the lifecycle use -------------------------

    def contains(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are indexed (to reconcile after a crash)."""
        self._check_open()
        found: set[str] = set()
        for chunk in _chunks(_valid_ids(ids), self._batch):
            try:
                found.update(self._collection.get(ids=chunk, include=[])["ids"])
            except Exception as exc:
                raise self._failure("get", exc) from exc
        return found

    def touch(self, ids: Sequence[str]) -> None:
        """Record that these hits were used (cheap: counted in memory, flushed in batches)."""
        self._check_open()
        self._usage.touch(ids)

    def evict_least_used(self, n: int) -> list[str]:
        """Remove up to ``n`` of the least-used vectors from Chroma; return their ids.

        The memories stay in the archive; only the warm index forgets them.
        """
        self._check_open()
        evicted: list[str] = []
        with self._write_lock:
            self._resync_usage()
            while len(evicted) < n:
                candidates = self._usage.least_used(n - len(evicted))
                if not candidates:
                    break
                present = self.contains(candidates)
                self._delete([i for i in candidates if i in present])
                self._drop_passages(candidates)
                self._usage.removed(candidates)
                evicted += [i for i in candidates if i in present]
        return evicted

    def usage(self, ids: Sequence[str]) -> dict[str, int]:
        """How many times each of ``ids`` was touched (indexed ids only)."""
        self._check_open()
        with self._write_lock:
            self._resync_usage()
        return self._usage.uses(ids)

    def stats(self) -> dict[str, Any]:
        """Count, backend, embedder and query-cache figures, for ``disclosure stats``."""
        return {
            "count": self.count(),
            "backend": self.config.backend,
            "location": self._location(),
            "embedder": self.embedder.name,
            "embedder_backend": getattr(self.embedder, "backend", type(self.embedder).__name__),
            "dimension": self.embedder.dimension,
            "passages": self._passage_count if self._passages is not None else 0,
            "query_cache": {"size": len(self._queries), "hits": self._queries.hits},
            "exact": {n: {"state": c.state, "vectors": len(c)} for n, c in self._exact.items()},
        }

    @staticmethod
    def drop(path: Path | None, config: WarmConfig, *, state_dir: Path | None = None) -> bool:
        """Delete the collection (and its usage counts) so it can be rebuilt; True if it existed.

        Close every tier open on it first.
        """
        client = open_client(path, config)
        try:
            names = {getattr(c, "name", c) for c in client.list_collections()}
            if config.collection in names:
                client.delete_collection(config.collection)
            if config.collection + PASSAGES_SUFFIX in names:
                client.delete_collection(config.collection + PASSAGES_SUFFIX)
        except Exception as exc:
            raise TierUnavailableError(f"dropping {config.collection!r} failed: {exc}") from exc
        finally:
            release_client(client)
        state = state_dir if state_dir is not None else path
        if state is not None:
            for suffix in ("", "-wal", "-shm"):
                (Path(state) / (usage_file(config) + suffix)).unlink(missing_ok=True)
        return config.collection in names

    # -- internals ------------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Vectors for ``texts`` in order; embedded shortest first, so batches pad little."""
        out = np.empty((len(texts), self.embedder.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.config.embed_batch_size):
            rows = order[start : start + self.config.embed_batch_size]
            out[rows] = self._embed_chunk([texts[i] for i in rows])
        return out

    def _embed_chunk(self, texts: list[str]) -> npt.NDArray[np.float32]:
        try:
            vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        except DisclosureError:
            raise
        except Exception as exc:
            raise TierUnavailableError(
                f"embedder {self.embedder.name!r} failed; nothing was indexed: {exc}"
            ) from exc
        expected = (len(texts), self.embedder.dimension)
        if vectors.shape != expected or not np.isfinite(vectors).all():
            raise TierUnavailableError(
                f"embedder {self.embedder.name!r} returned an array of shape {vectors.shape} "
                f"(expected {expected}, finite); nothing was indexed"
            )
        return vectors

    def _upsert(
        self, memories: list[Memory], vectors: npt.NDArray[np.float32], texts: Mapping[str, str]
    ) -> None:
        for start in range(0, len(memories), self._batch):
            chunk = memories[start : start + self._batch]
            try:
                self._collection.upsert(
                    ids=[m.id for m in chunk],
                    embeddings=vectors[start : start + len(chunk)],
                    metadatas=[_record(m, texts[m.id]) for m in chunk],
                )
            except Exception as exc:
                self._exact_write_failed(self._collection)
                raise self._failure(
                    f"upsert (indexed {start} of {len(memories)} memories of this call)", exc
                ) from exc
            self._copy_upsert(
                self._collection, [m.id for m in chunk], vectors[start : start + len(chunk)]
            )
            self._usage.added(m.id for m in chunk)

    def _relabel(self, memories: list[Memory], texts: Mapping[str, str]) -> None:
        """Same text, other fields changed: rewrite the stored JSON, keep the vector."""
        for start in range(0, len(memories), self._batch):
            chunk = memories[start : start + self._batch]
            try:
                self._collection.update(
                    ids=[m.id for m in chunk],
                    metadatas=[_record(m, texts[m.id]) for m in chunk],
                )
            except Exception as exc:
                raise self._failure("update", exc) from exc

    def _delete(self, ids: list[str]) -> None:
        for chunk in _chunks(ids, self._batch):
            try:
                self._collection.delete(ids=chunk)
            except Exception as exc:
                self._exact_write_failed(self._collection)
                raise self._failure("delete", exc) from exc
            self._copy_remove(self._collection, chunk)

    # The exact copies follow every write, under the write lock (see _fill_exact).

    def _copy_upsert(self, collection: Any, ids: list[str], vectors: Any) -> None:
        copy = self._exact.get(collection.name)
        if copy is not None:
            copy.upsert(ids, vectors)

    def _copy_remove(self, collection: Any, ids: list[str]) -> None:
        copy = self._exact.get(collection.name)
        if copy is not None:
            copy.remove(ids)

    def _exact_write_failed(self, collection: Any) -> None:
        """A write Chroma refused may have been applied in part: the copy cannot know which
        part, so searches go back to Chroma for good."""
        copy = self._exact.get(collection.name)
        if copy is not None:
            copy.fail()

    def _stored(self, ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """(memory JSON, text hash) of the ids held."""
        stored: dict[str, tuple[str, str | None]] = {}
        for chunk in _chunks(_valid_ids(ids), self._batch):
            try:
                got = self._collection.get(ids=chunk, include=["metadatas"])
            except Exception as exc:
                raise self._failure("get", exc) from exc
            for i, meta in zip(got["ids"], got["metadatas"] or [], strict=False):
                if meta and isinstance(meta.get(MEMORY_FIELD), str):
                    sha = meta.get(TEXT_FIELD)
                    stored[i] = (meta[MEMORY_FIELD], sha if isinstance(sha, str) else None)
        return stored

    def _all_ids(self) -> Iterator[str]:
        offset = 0
        while True:
            try:
                page = self._collection.get(include=[], limit=self._batch, offset=offset)["ids"]
            except Exception as exc:
                raise self._failure("listing ids", exc) from exc
            yield from page
            if len(page) < self._batch:
                return
            offset += len(page)

    def _hits(
        self, ids: list[str], metas: list[Any] | None, distances: list[float] | None
    ) -> list[ScoredMemory]:
        hits: list[ScoredMemory] = []
        for i, meta, distance in zip(ids, metas or [], distances or [], strict=False):
            text = (meta or {}).get(MEMORY_FIELD)
            if not isinstance(text, str):
                log.warning("warm record %r has no stored memory; skipped", i)
                continue
            score = min(1.0, max(0.0, 1.0 - float(distance)))
            hits.append(ScoredMemory(Memory.from_json(text), self.name, score, len(hits)))
        return hits

    def _check_open(self) -> None:
        if self._closed:
            raise TierUnavailableError("the warm tier is closed")

    def _failure(self, operation: str, exc: Exception) -> DisclosureError:
        if isinstance(exc, DisclosureError):
            return exc
        return TierUnavailableError(f"Chroma {operation} failed at {self._location()}: {exc}")

    def _location(self) -> str:
        return location(self.path, self.config)


def usage_file(config: WarmConfig) -> str:
    """The usage log's file name (per collection) inside the state directory."""
    return f"warm_usage.{config.collection}.sqlite3"


def _plan(
    memories: Iterable[Memory],
    texts: Mapping[str, str],
    stored: Mapping[str, tuple[str, str | None]],
) -> tuple[list[Memory], list[Memory]]:
    """Split into (to embed: new, or its text changed) and (same text, other fields changed)."""
    embed: list[Memory] = []
    relabel: list[Memory] = []
    for memory in memories:
        old = stored.get(memory.id)
        if old is None or old[1] != _sha(texts[memory.id]):
            embed.append(memory)
        elif old[0] != memory.to_json():
            relabel.append(memory)
    return embed, relabel


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record(memory: Memory, text: str) -> dict[str, str]:
    return {MEMORY_FIELD: memory.to_json(), TEXT_FIELD: _sha(text)}


def _valid_ids(ids: Sequence[str]) -> list[str]:
    """Unique non-empty string ids, first occurrence order (Chroma rejects duplicates)."""
    return list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]

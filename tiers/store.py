"""The tiered store: one write path and one lifecycle over the hot, warm and cold tiers.

Ingest validates every memory, then writes the whole batch to the cold archive in one
transaction, together with the outbox rows that will carry it to the warm index; that commit
(fsynced) is the moment a memory is safe. Then the hot working set takes it, and the outbox is
drained (inline, by a worker thread, or on ``flush``). A failing embedder or Chroma leaves items
queued, visible in ``pending()``, retried with backoff; nothing is lost. Reopening a data
directory rebuilds the hot set from the archive's newest memories and re-queues whatever the
warm index lacks.

The store never returns a warm hit the archive does not back: warm hits are re-read from the
archive, and dropped if their memory was forgotten or changed since it was embedded (a warm
index that answers with ids only is checked against the archive's record of which memories'
current content has a vector: nothing stored in Chroma is fetched or parsed).

Data directory layout: ``archive.sqlite3`` (+ ``-wal``/``-shm``), ``warm/`` (Chroma, when the
store builds the warm tier), ``.lock`` (one store per directory at a time). With the archive in
PostgreSQL and the vectors on a Chroma server (or none), the store keeps nothing in its
directory and takes no lock (:attr:`TieredStore.shared`): replicas open the same namespace at
once, each following the others' writes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from tiers.backends import database_url, open_archive
from tiers.base import Embedder
from tiers.citations import DEFAULT_ALPHABET
from tiers.cold import ArchiveTxn, ColdArchive, LineCounter, content_sha
from tiers.config import TiersConfig
from tiers.errors import InvalidInputError, TierClosedError
from tiers.hot import HotTier
from tiers.lifecycle import (
    DrainWorker,
    IdSearch,
    WarmIndex,
    WarmSync,
    count_uses,
    requeue_for_warm,
)
from tiers.locking import DirectoryLock
from tiers.memory import Memory, ScoredMemory, memories_of
from tiers.outbox import OutboxItem
from tiers.reports import ForgetReport, IngestReport, StoreStats
from tiers.schema import WARM_EVICTED
from tiers.text import Tokenizer
from tiers.versions import MemoryVersion, Page, page, versions
from tiers.warm_layout import server_config

logger = logging.getLogger(__name__)

TierName = Literal["hot", "warm", "cold"]
_WARM_SEEN = "warm_seen"  # meta key: a warm index has been attached to this archive
REPLICA_CHECK_SECONDS = 0.25  # how stale another replica's write may look (PostgreSQL archive)


class TieredStore:
    """Hot, warm and cold tiers behind one durable write path. Thread-safe; a context manager.

    ``warm``: a ready warm tier (the store takes ownership and closes it), or built from
    ``config.warm`` in ``data_dir/warm`` when an ``embedder`` is given; with neither the store
    runs on hot and cold only (if a warm index was attached before, deletions queue for it).
    ``line_counter`` counts the tokens of each memory's history line (pass the profile's token
    counter); ``citation_length`` and ``citation_alphabet`` are the profile's ``citations.length``
    and ``citations.alphabet``.

    ``enricher``: fills what is worked out from a memory's content (entities, summary), for
    memories ingested without it. With a background drain worker and a SQLite archive the
    store then *defers* it (:attr:`defers_enrichment`): the caller may ingest memories not yet
    enriched, the worker enriches each upsert batch before embedding it and writes the fields
    into the archive (and the hot set), then calls ``on_enriched`` with the records as now
    stored. An outbox row is kept until then, so ``pending()`` counts this work too and a crash
    loses none of it. Otherwise the enricher is not used (the caller enriches before ingest).
    ``on_forgotten`` is called with the records a ``forget`` removed, once they are gone from
    the archive (so what was derived from them elsewhere can go too).
    """

    def __init__(
        self,
        data_dir: Path | str,
        config: TiersConfig | None = None,
        *,
        embedder: Embedder | None = None,
        warm: WarmIndex | None = None,
        line_counter: LineCounter | None = None,
        citation_length: int = 6,
        citation_alphabet: str = DEFAULT_ALPHABET,
        namespace: str | None = None,
        enricher: Callable[[list[Memory]], list[Memory]] | None = None,
        on_enriched: Callable[[list[Memory]], None] | None = None,
        on_forgotten: Callable[[list[Memory]], None] | None = None,
    ) -> None:
        self.config = config or TiersConfig()
        self.data_dir = Path(data_dir)
        self.database_url = database_url(self.config)
        #: every tier's state is on a server: nothing in ``data_dir``, no lock (see the module)
        self.shared = (
            self.database_url is not None
            and warm is None  # a warm tier the caller built may keep files of its own
            and (embedder is None or self.config.warm.backend == "server")
        )
        self._lock = None if self.shared else DirectoryLock(self.data_dir)
        self._closed = False
        self._worker: DrainWorker | None = None
        self.tokenizer = Tokenizer.from_setting(
            self.config.tokenizer.stopwords, self.config.tokenizer.stem
        )
        self._hot_lock = threading.RLock()  # the hot set against a reload (follow_other_writers)
        self._next_check = 0.0
        self._enricher = enricher
        self._on_enriched = on_enriched
        self._on_forgotten = on_forgotten
        self.cold: ColdArchive | None = None
        self.warm: WarmIndex | None = None
        self._sync: WarmSync | None = None
        try:
            self.cold, self.outbox = open_archive(
                self.data_dir,
                self.config,
                database_url=self.database_url,
                namespace=namespace,
                tokenizer=self.tokenizer,
                line_counter=line_counter,
                citation_length=citation_length,
                citation_alphabet=citation_alphabet,
                check_vectors=warm is None,  # a warm tier the caller built is the caller's
            )
            self.hot = HotTier(self.config.hot, self.tokenizer)
            if warm is None and embedder is not None and self.config.warm.backend == "server":
                self.warm = self._restore_beside_warm(embedder)
            else:
                self._restore_hot()
                self.warm = warm if warm is not None else self._build_warm(embedder)
            self._sync = self._start_sync()
        except BaseException:
            self.close()
            raise

    # -- opening --------------------------------------------------------------------------------

    def _build_warm(self, embedder: Embedder | None) -> WarmIndex | None:
        if embedder is None:
            return None
        from tiers.warm import WarmTier  # chromadb is heavy: imported only when needed

        path = None if self.config.warm.backend == "server" else self.data_dir / "warm"
        config = server_config(self.config.warm, self.data_dir)  # a collection per directory
        state = None if self.shared else self.data_dir / "warm"  # shared: use counts in memory
        warm: WarmIndex = WarmTier(  # the directory's lock makes this store its only writer
            path, config, embedder, state_dir=state, exclusive=not self.shared
        )
        return warm

    def _restore_beside_warm(self, embedder: Embedder) -> WarmIndex | None:
        """The hot set restored while a thread finds the Chroma server's collection: two
        round trips to two servers, waited for at once instead of one after the other."""
        built: list[WarmIndex | None] = []
        failed: list[BaseException] = []

        def build() -> None:
            try:
                built.append(self._build_warm(embedder))
            except BaseException as exc:  # raised below, in the opening thread
                failed.append(exc)

        thread = threading.Thread(target=build, name="warm-open", daemon=True)
        thread.start()
        try:
            self._restore_hot()
        finally:
            thread.join()
            if built:
                self.warm = built[0]  # closed by close() if the restore failed
        if failed:
            raise failed[0]
        return self.warm

    def _start_sync(self) -> WarmSync | None:
        if self.warm is None:
            return None
        if self._archive.meta(_WARM_SEEN) is None:
            self._archive.set_meta(_WARM_SEEN, "1")
        sync = WarmSync(
            self._archive,
            self.outbox,
            self.warm,
            max_items=self.config.warm.max_items,
            batch_size=self.config.outbox.batch_size,
        )
        sync.reconcile()
        if self.config.outbox.drain == "background":
            if self._enricher is not None and self.database_url is None:
                sync.derive = self._enrich_later
            self._worker = DrainWorker(sync)
        return sync

    @property
    def defers_enrichment(self) -> bool:
        """Whether memories may be ingested without entities and summary, the drain worker
        filling them in (see the class)."""
        return self._sync is not None and self._sync.derive is not None

    def _enrich_later(self, memories: list[Memory]) -> list[Memory]:
        """The drain worker's step before embedding: enrich what lacks it, store the fields."""
        assert self._enricher is not None
        try:
            enriched = self._enricher(memories)
        except Exception as exc:  # a memory the analyzers choke on is still embedded
            logger.warning("enriching %d memories after ingest failed: %s", len(memories), exc)
            return memories
        changed = [new for new, old in zip(enriched, memories, strict=True) if new is not old]
        if not changed:
            return enriched
        with self._hot_lock, self._archive.transaction() as txn:
            written = [m for m in (txn.add_derived(c) for c in changed) if m is not None]
        if not written:
            return enriched
        self.hot.refresh(written)
        if self._on_enriched is not None:
            self._on_enriched(written)
        stored = {m.id: m for m in written}
        return [stored.get(m.id, m) for m in enriched]

    def _restore_hot(self) -> None:
        recent = self._archive.recent(self.config.hot.max_items)
        self.hot.admit(list(reversed(recent)))

    # -- writing --------------------------------------------------------------------------------

    def ingest(
        self,
        memories: Sequence[Memory | Mapping[str, Any]],
        *,
        strict: bool = True,
        refresh: bool = False,
    ) -> IngestReport:
        """Store ``memories`` in every tier; return what was added, replaced or left alone.

        Re-ingesting an id with the same content changes nothing (with ``refresh``, a memory
        whose other fields differ is rewritten, without a new vector); with new content the new
        version replaces the old one everywhere (and is embedded again); the replaced version
        is kept for :meth:`versions`. ``strict``: any invalid memory raises
        :class:`InvalidInputError` and nothing is written; otherwise invalid ones are skipped
        and reported. Returns once the batch is committed to the archive.
        """
        self._check_open()
        valid, errors = self._validate(memories, strict=strict)
        added: list[str] = []
        replaced: list[str] = []
        changed: list[Memory] = []
        embed: list[Memory] = []
        with self._hot_lock, self._archive.transaction() as txn:
            for memory in valid:
                result = txn.put(memory, refresh=refresh)
                if result.status == "unchanged":
                    continue
                (added if result.status == "added" else replaced).append(memory.id)
                changed.append(memory)
                if not result.same_content:
                    embed.append(memory)
            if self.warm is not None and embed:
                self.outbox.enqueue_upserts(txn, [(m.id, content_sha(m.content)) for m in embed])
                self._requeue_successors(txn, [m.id for m in embed])
            admitted = self.hot.admit(_latest_versions(changed))  # with the commit: see replicas
        self._moved_down(admitted)
        self._after_write(len(embed))
        return IngestReport(
            added=len(added),
            replaced=len(replaced),
            unchanged=len(valid) - len(changed),
            rejected=len(errors),
            ids=tuple(dict.fromkeys(added + replaced)),
            errors=tuple(errors),
        )

    def _validate(
        self, items: Sequence[Memory | Mapping[str, Any]], *, strict: bool
    ) -> tuple[list[Memory], list[str]]:
        memories, errors = memories_of(items, strict=strict)
        limit = self.config.ingest.max_content_chars
        valid: list[Memory] = []
        for memory in memories:
            if len(memory.content) <= limit:
                valid.append(memory)
                continue
            message = (
                f"memory {memory.id!r}: content has {len(memory.content):,} characters; "
                f"the limit is {limit:,} (tiers.ingest.max_content_chars)"
            )
            if strict:
                raise InvalidInputError(message)
            errors.append(message)
        return valid, errors

    def _moved_down(self, evicted: Sequence[Memory]) -> None:
        """Memories leaving the hot set go back to the warm index if they had left it."""
        if not evicted or self.warm is None:
            return
        ids = [m.id for m in evicted]
        marks = ",".join("?" * len(ids))
        rows = self._archive.query(
            f"SELECT id, content_sha FROM memories WHERE warm = ? AND id IN ({marks})",
            (WARM_EVICTED, *ids),
        )
        if rows:
            with self._archive.transaction() as txn:
                requeue_for_warm(txn, self.outbox, [(str(i), str(s)) for i, s in rows])

    def _after_write(self, queued: int) -> None:
        """Drain inline what was just queued plus one batch of any backlog (or wake the worker).

        A large backlog (a warm tier attached to a big archive) thus drains a batch per write;
        ``flush()`` or ``drain: background`` drains it all.
        """
        if self._sync is None:
            return
        if self._worker is not None:
            self._worker.notify()
        elif self.config.outbox.drain == "inline":
            self._sync.drain(limit=queued + self.config.outbox.batch_size)

    def forget(
        self, ids: Sequence[str] | None = None, *, session_id: str | None = None
    ) -> ForgetReport:
        """Remove memories by id and/or a whole session from every tier; report what went.

        The archive rows, citations and outbox work go in one transaction; the hot set at
        once; the warm index at once if it answers, else through the outbox (and until then the
        store drops its hits).
        """
        self._check_open()
        if isinstance(ids, str):
            raise InvalidInputError("forget takes a sequence of ids, not a single string")
        with self._hot_lock, self._archive.transaction() as txn:
            targets = list(dict.fromkeys([*(ids or []), *self._session_ids(session_id)]))
            citations = self._archive.citation_of(targets)
            requeued = self._requeue_successors(txn, targets) if self.warm is not None else 0
            removed = [m for m in (txn.delete(i) for i in targets) if m is not None]
            if self.warm is not None or self._archive.meta(_WARM_SEEN) is not None:
                self.outbox.enqueue_deletes(txn, targets)  # a warm index may hold them
        if removed:
            self._archive.erase()
            if self._on_forgotten is not None:
                self._on_forgotten(removed)
        self.hot.forget(targets)
        if requeued:
            self._after_write(requeued)
        if self._sync is not None and targets:
            self._sync.forget_now(targets)
        gone = tuple(m.id for m in removed)
        return ForgetReport(
            ids=gone,
            citations=tuple(citations[i] for i in gone),
            sessions=tuple(sorted({m.session_id for m in removed})),
            speakers=tuple(sorted({m.speaker for m in removed if m.speaker})),
        )

    def _requeue_successors(self, txn: ArchiveTxn, ids: Sequence[str]) -> int:
        """With contextual vectors, a memory's vector includes the turn before it: a write to
        that turn re-queues the next one (it is re-embedded only if its text changed)."""
        if self.config.warm.context != "previous":
            return 0
        written = set(ids)
        following = [(i, sha) for i, sha in txn.successors(ids) if i not in written]
        if following:
            self.outbox.enqueue_upserts(txn, following)
        return len(following)

    def _session_ids(self, session_id: str | None) -> list[str]:
        return [] if session_id is None else self._archive.ids_in_session(session_id)

    def follow_other_writers(self) -> bool:
        """With several replicas on one PostgreSQL archive: if another one wrote to this
        namespace, rebuild the hot set from the archive, and say so (the caller drops the
        caches built on what it saw before). One small read, at most every
        :data:`REPLICA_CHECK_SECONDS`, so another replica's write is seen within that; always
        False for a SQLite archive (one store owns it)."""
        self._check_open()
        if self.database_url is None:
            return False
        now = time.monotonic()
        with self._hot_lock:
            if now < self._next_check:
                return False
            self._next_check = now + REPLICA_CHECK_SECONDS
            if not self._archive.changed_elsewhere():
                return False
            fresh = HotTier(self.config.hot, self.tokenizer)
            fresh.admit(list(reversed(self._archive.recent(self.config.hot.max_items))))
            self.hot = fresh  # readers holding the old set finish with it
        logger.debug("%s: written by another replica; hot set reloaded", self.data_dir.name)
        return True

    # -- the lifecycle --------------------------------------------------------------------------

    def record_use(self, ids: Sequence[str], *, now: datetime | None = None) -> None:
        """Count a use of each memory (the controller calls this for disclosed, used items).

        A cold-only memory used ``lifecycle.cold_to_warm_uses`` times is queued for the warm
        index again; any memory used ``lifecycle.warm_to_hot_uses`` times since it last moved
        joins the hot set; hot and warm record the use for their own eviction.
        """
        self._check_open()
        distinct = [i for i in dict.fromkeys(ids) if isinstance(i, str)]
        if not distinct:
            return
        moment = now or self.hot.now()
        to_warm, to_hot = count_uses(
            self._archive,
            self.outbox,
            distinct,
            moment=moment,
            config=self.config.lifecycle,
            warm=self.warm is not None,
            in_hot=self.hot.__contains__,
        )
        self.hot.touch([i for i in distinct if i in self.hot], now=moment)
        if to_hot:
            self._moved_down(self.hot.admit(self._archive.get(to_hot), anchor=moment))
        if self.warm is not None:
            self._touch_warm(distinct)
        if to_warm:
            self._after_write(len(to_warm))

    def _touch_warm(self, ids: Sequence[str]) -> None:
        assert self.warm is not None
        try:
            self.warm.touch(ids)
        except Exception as exc:  # use counts are advisory: never fail the caller
            logger.warning("warm tier could not record use: %s", exc)

    # -- the outbox -----------------------------------------------------------------------------

    def pending(self) -> int:
        """Warm-index work still queued (embeddings and deletions)."""
        self._check_open()
        return self.outbox.pending()

    def pending_items(self, limit: int = 100) -> list[OutboxItem]:
        """The head of the queue, with attempts and last errors."""
        self._check_open()
        return self.outbox.items(limit)

    def flush(self, timeout: float = 30.0) -> int:
        """Drain the outbox now, retrying with backoff until ``timeout``; return what is left.

        The first pass tries every queued item at once, whatever its retry schedule.
        """
        self._check_open()
        if self._sync is None:
            return self.outbox.pending()
        deadline = time.monotonic() + max(timeout, 0.0)
        self._sync.drain(ignore_schedule=True)
        while (left := self.outbox.pending()) > 0:
            wait = self.outbox.seconds_until_due() or 0.0
            if time.monotonic() + wait >= deadline:
                return left
            time.sleep(wait)
            self._sync.drain()
        return 0

    # -- reading --------------------------------------------------------------------------------

    def search(
        self, tier: TierName, query: str, k: int, *, now: datetime | None = None
    ) -> list[ScoredMemory]:
        """One tier's hits for ``query`` (scores in [0, 1], best first). ``now``: hot only."""
        self._check_open()
        if tier == "hot":
            return self.hot.search(query, k, now=now)
        if tier == "cold":
            return self._archive.search(query, k)
        if tier == "warm":
            return self._search_warm(query, k)
        raise InvalidInputError(f"unknown tier {tier!r}; available: hot, warm, cold")

    def prefetch(self, query: str) -> None:
        """Start the work a warm search of ``query`` needs before it is searched (its
        embedding); a no-op without a warm tier or for one that cannot prefetch."""
        if self._closed or self.warm is None:
            return
        prefetch = getattr(self.warm, "prefetch", None)
        if prefetch is not None:
            prefetch(query)

    def _search_warm(self, query: str, k: int) -> list[ScoredMemory]:
        if self.warm is None:
            return []
        if isinstance(self.warm, IdSearch):  # ids only; the archive says which vectors are current
            pairs = self.warm.search_ids(query, k)
            current = self._archive.get_indexed([i for i, _ in pairs])
            fresh = [(current[i], score) for i, score in pairs if i in current]
            return [ScoredMemory(m, self.warm.name, s, rank) for rank, (m, s) in enumerate(fresh)]
        hits = self.warm.search(query, k)
        current = {m.id: m for m in self._archive.get([h.id for h in hits])}
        kept = [h for h in hits if h.id in current and current[h.id].content == h.memory.content]
        return [ScoredMemory(current[h.id], h.tier, h.score, rank) for rank, h in enumerate(kept)]

    def active(self, k: int, *, now: datetime | None = None) -> list[ScoredMemory]:
        """The hot set in "active context" order (recent and important first)."""
        self._check_open()
        return self.hot.active(k, now=now)

    def get(self, ids: Sequence[str]) -> list[Memory]:
        """Archived memories in the order of ``ids``, skipping unknown ones."""
        self._check_open()
        return self._archive.get(ids)

    def neighbours(self, memory_id: str, window: int) -> list[Memory]:
        self._check_open()
        return self._archive.neighbours(memory_id, window)

    def session(self, memory_id: str) -> str | None:
        self._check_open()
        return self._archive.session(memory_id)

    def ids_in_session(self, session_id: str) -> list[str]:
        self._check_open()
        return self._archive.ids_in_session(session_id)

    def recent(self, n: int) -> list[Memory]:
        self._check_open()
        return self._archive.recent(n)

    def iter_memories(self) -> Iterator[Memory]:
        self._check_open()
        return self._archive.iter_memories()

    def versions(self, memory_id: str) -> list[MemoryVersion]:
        """Every version of a memory the archive keeps, oldest first, the current one last."""
        self._check_open()
        return versions(self._archive.query, memory_id)

    def page(
        self, *, session_id: str | None = None, cursor: str | None = None, limit: int = 100
    ) -> Page:
        """Memories in time order, a page at a time (of one session, or all)."""
        self._check_open()
        return page(self._archive.query, session_id=session_id, cursor=cursor, limit=limit)

    def speaks(self, speaker: str) -> bool:
        """Whether some stored memory has ``speaker`` as its speaker (one pass of the archive in
        SQL, stopping at the first; SQLite's LIKE folds ASCII case, so a name differing only in
        case counts as present)."""
        self._check_open()
        fragment = '"speaker":' + json.dumps(speaker, ensure_ascii=False)
        escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._archive.query(
            "SELECT 1 FROM memories WHERE body LIKE ? ESCAPE '\\' LIMIT 1", (f"%{escaped}%",)
        )
        return bool(rows)

    def citation_of(self, ids: Sequence[str]) -> dict[str, str]:
        self._check_open()
        return self._archive.citation_of(ids)

    def resolve_citation(self, code: str) -> str | None:
        self._check_open()
        return self._archive.resolve_citation(code)

    def line_tokens(self, ids: Sequence[str]) -> dict[str, int]:
        """Each memory's history-line token count, as the archive keeps it."""
        self._check_open()
        return self._archive.line_tokens(ids)

    def total_line_tokens(self) -> int:
        self._check_open()
        return self._archive.total_line_tokens()

    def count(self) -> int:
        self._check_open()
        return self._archive.count()

    def stats(self) -> StoreStats:
        """Counts per tier, queued work, disk use and engine names."""
        self._check_open()
        states = dict(self._archive.query("SELECT warm, COUNT(*) FROM memories GROUP BY warm"))
        archive = self._archive.disk_bytes()  # in the database server, for PostgreSQL
        return StoreStats(
            hot=self.hot.count(),
            warm=None if self.warm is None else self.warm.count(),
            cold=self._archive.count(),
            cold_only=int(states.get(WARM_EVICTED, 0)),
            pending=self.outbox.pending(),
            disk_bytes=_disk_bytes(self.data_dir) + (archive if self.database_url else 0),
            archive_bytes=archive,
            cold_engine=self._archive.engine_name,
            warm_embedder=None if self.warm is None else self.warm.embedder.name,
            total_line_tokens=self._archive.total_line_tokens(),
        )

    def check_integrity(self) -> None:
        """Raise CorruptDataError if the archive or its FTS5 index is damaged."""
        self._check_open()
        self._archive.check_integrity()

    # -- closing --------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the worker and close every tier (queued work stays in the archive)."""
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            self._worker.stop()
        for closer in (self.warm, getattr(self, "hot", None), self.cold):
            if closer is not None:
                try:
                    closer.close()
                except Exception as exc:  # close everything we can
                    logger.warning("closing %s failed: %s", type(closer).__name__, exc)
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> TieredStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def _archive(self) -> ColdArchive:
        if self.cold is None:
            raise TierClosedError(f"{self.data_dir}: the store is closed")
        return self.cold

    def _check_open(self) -> None:
        if self._closed:
            raise TierClosedError(f"{self.data_dir}: the store is closed")


def _latest_versions(memories: Sequence[Memory]) -> list[Memory]:
    """The last version of each id, in first-seen order (a batch may repeat an id)."""
    latest: dict[str, Memory] = {}
    for memory in memories:
        latest[memory.id] = memory
    return list(latest.values())


def _disk_bytes(root: Path) -> int:
    total = 0
    for path in root.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:  # a file removed while we walked
            continue
    return total

"""What the store's write and status calls return: small frozen values."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one ``ingest`` call did. ``ids``: the memories added or replaced, in input order.

    Every memory passed is counted once: ``added + replaced + unchanged + rejected + private``.
    """

    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    rejected: int = 0
    ids: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # one message per rejected memory (strict=False)
    private: int = 0  # entirely inside <private> spans: not stored
    secrets: int = 0  # secrets replaced by a [redacted:<kind>] marker before storing

    @property
    def total(self) -> int:
        """How many memories the call was given."""
        return self.added + self.replaced + self.unchanged + self.rejected + self.private


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What ``forget`` removed: ids, their citation codes, the sessions they belonged to and
    who spoke them."""

    ids: tuple[str, ...] = ()
    citations: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counts per tier, queued warm-index work, disk use and the engines in play.

    ``warm`` and ``warm_embedder`` are None without a warm tier; ``cold_only`` counts archived
    memories whose vectors left the warm index (capacity); ``disk_bytes`` is the whole data
    directory, ``archive_bytes`` the SQLite file and its log.
    """

    hot: int
    warm: int | None
    cold: int
    cold_only: int
    pending: int
    disk_bytes: int
    archive_bytes: int
    cold_engine: str
    warm_embedder: str | None
    total_line_tokens: int

"""Which archive a store opens: the embedded SQLite file in its data directory (the default),
or the server backend's PostgreSQL database, chosen by ``tiers.cold.database_url`` or
``$TIERED_DISCLOSURE_DATABASE_URL``."""

from __future__ import annotations

import os
from pathlib import Path

from tiers.citations import DEFAULT_ALPHABET
from tiers.cold import ColdArchive, LineCounter
from tiers.config import DATABASE_URL_VARIABLE, TiersConfig
from tiers.erasure import CHROMA_FILE
from tiers.errors import CorruptDataError, InvalidInputError
from tiers.outbox import Outbox
from tiers.schema import ARCHIVE_FILE
from tiers.text import Tokenizer


def database_url(config: TiersConfig) -> str | None:
    """The PostgreSQL archive's URL: ``tiers.cold.database_url``, else
    ``$TIERED_DISCLOSURE_DATABASE_URL``; None for the embedded SQLite archive."""
    url = config.cold.database_url or os.environ.get(DATABASE_URL_VARIABLE, "").strip() or None
    if url is not None and not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInputError(
            f"${DATABASE_URL_VARIABLE} must be a postgresql:// URL, not {url[:20]!r}..."
        )
    return url


def single_writer_state(config: TiersConfig, *, vectors: bool) -> str | None:
    """What a store of ``config`` keeps in its data directory that only one process may own:
    ``"a SQLite archive"``, ``"an embedded Chroma"`` (``vectors``: the store has a warm
    tier), or None when the archive is in PostgreSQL and the vectors (if any) on a Chroma
    server, so the directory holds nothing but the process's own caches."""
    if database_url(config) is None:
        return "a SQLite archive"
    if vectors and config.warm.backend != "server":
        return "an embedded Chroma"
    return None


def written_in_database(config: TiersConfig, namespace: str) -> bool:
    """Whether the PostgreSQL archive (if one is configured) holds writes to ``namespace``: a
    replica that never served it has no directory for it, yet must serve it."""
    url = database_url(config)
    if url is None:
        return False
    from tiers.pg_schema import redact, schema_name, was_written

    schema = schema_name(namespace)
    return was_written(url, schema, f"{redact(url)} schema {schema}")


def drop_from_database(config: TiersConfig, namespace: str) -> bool:
    """Delete ``namespace`` from the PostgreSQL archive (if one is configured): its schema,
    every row of it. Whether there was one."""
    url = database_url(config)
    if url is None:
        return False
    from tiers.pg_schema import drop_namespace, redact, schema_name

    schema = schema_name(namespace)
    return drop_namespace(url, schema, f"{redact(url)} schema {schema}")


def open_archive(
    data_dir: Path,
    config: TiersConfig,
    *,
    database_url: str | None,
    namespace: str | None,
    tokenizer: Tokenizer,
    line_counter: LineCounter | None,
    citation_length: int,
    check_vectors: bool,
    citation_alphabet: str = DEFAULT_ALPHABET,
) -> tuple[ColdArchive, Outbox]:
    """The archive and its outbox. PostgreSQL: the namespace's schema (by default named after
    the data directory, which is the service's directory name of the namespace)."""
    if database_url is not None:
        from tiers.pg_archive import PgArchive  # psycopg is imported only when used
        from tiers.pg_outbox import PgOutbox

        archive = PgArchive(
            database_url,
            namespace or data_dir.resolve().name,
            config.cold,
            tokenizer=tokenizer,
            line_counter=line_counter,
            citation_length=citation_length,
            citation_alphabet=citation_alphabet,
        )
        return archive, PgOutbox(archive, config.outbox)
    if check_vectors:
        refuse_orphaned_vectors(data_dir)
    cold = ColdArchive(
        data_dir,
        config.cold,
        tokenizer=tokenizer,
        line_counter=line_counter,
        citation_length=citation_length,
        citation_alphabet=citation_alphabet,
    )
    return cold, Outbox(cold, config.outbox)


def refuse_orphaned_vectors(data_dir: Path) -> None:
    """An archive that is missing or empty beside a warm index is not a new store: it was
    deleted or truncated, and opening it would silently serve an empty memory."""
    archive = data_dir / ARCHIVE_FILE
    vectors = data_dir / "warm" / CHROMA_FILE
    if archive.is_file() and archive.stat().st_size > 0:
        return
    if not vectors.is_file() or vectors.stat().st_size == 0:
        return
    state = "empty" if archive.exists() else "missing"
    raise CorruptDataError(
        f"{data_dir}: the archive {ARCHIVE_FILE} is {state} but a warm index (vectors of stored "
        f"memories) is there: restore {ARCHIVE_FILE} from a backup, or run `disclosure doctor "
        f"--repair` to set the orphaned index aside (the archive is the source of truth; the "
        f"vectors alone cannot bring the memories back)"
    )

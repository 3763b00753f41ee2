"""The side stores' tables in a namespace's PostgreSQL schema: created once, when missing,
and found again by every later open (one catalog read at the open, no DDL per store)."""

from __future__ import annotations

from tests.pg_server import unique_namespace
from tiers.pg_archive import PgArchive
from tiers.pg_schema import created_by, drop_namespace

DDL = """
CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS notes_by_body ON notes (body)
"""


def test_created_by_names_what_a_ddl_creates_or_nothing_when_unsure() -> None:
    assert created_by(DDL) == frozenset({"notes", "notes_by_body"})
    assert created_by("create unique index if not exists Ix on t (a)") == frozenset({"ix"})
    assert created_by(DDL + "; ALTER TABLE notes ADD COLUMN IF NOT EXISTS n INTEGER") is None
    assert created_by("CREATE TABLE notes (id INTEGER)") is None  # no IF NOT EXISTS


def test_side_tables_are_created_once_and_found_by_later_opens(pg_url: str) -> None:
    namespace = unique_namespace("side")
    first = PgArchive(pg_url, namespace)
    try:
        assert "notes" not in first._relations
        side = first.side_connection(DDL)
        side.execute("INSERT INTO notes (id, body) VALUES (?, ?)", (1, "kept"))
        assert {"notes", "notes_by_body"} <= first._relations
        first.side_connection(DDL)  # again on the same open archive: nothing to create
        later = PgArchive(pg_url, namespace)
        try:
            assert {"notes", "notes_by_body"} <= later._relations
            rows = later.side_connection(DDL).execute("SELECT body FROM notes").fetchall()
            assert [tuple(r) for r in rows] == [("kept",)]
            other = "CREATE TABLE IF NOT EXISTS marks (id INTEGER PRIMARY KEY)"
            later.side_connection(other).execute("INSERT INTO marks (id) VALUES (?)", (7,))
            assert "marks" in later._relations
        finally:
            later.close()
    finally:
        first.close()


def test_a_dropped_namespace_gets_its_side_tables_again_and_empty(pg_url: str) -> None:
    """Forgetting a namespace drops its schema: the next open finds no side table, so the
    first side store creates it again, with none of the forgotten rows."""
    namespace = unique_namespace("side")
    archive = PgArchive(pg_url, namespace)
    archive.side_connection(DDL).execute("INSERT INTO notes (id, body) VALUES (?, ?)", (1, "x"))
    schema = archive.schema
    archive.close()
    assert drop_namespace(pg_url, schema, schema)
    again = PgArchive(pg_url, namespace)
    try:
        assert "notes" not in again._relations
        rows = again.side_connection(DDL).execute("SELECT body FROM notes").fetchall()
        assert rows == []
    finally:
        again.close()

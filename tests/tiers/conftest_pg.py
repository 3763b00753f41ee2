"""Fixtures for the PostgreSQL archive: one real server per session, a namespace (schema) per
test, and ``backend``, which runs a test once on each archive backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pg_server import PostgresServer
from tiers.config import DATABASE_URL_VARIABLE


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster of its own on a free loopback port, for the whole session."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    """The session server's URL; the namespaces a test created are dropped after it."""
    yield pg_server.url
    drop_namespaces(pg_server.url)


def drop_namespaces(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'td\\_%'"
        ).fetchall()
        for (schema,) in rows:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every store the test opens uses this archive backend (PostgreSQL through
    ``$TIERED_DISCLOSURE_DATABASE_URL``, a namespace per data directory name)."""
    if request.param == "sqlite":
        monkeypatch.delenv(DATABASE_URL_VARIABLE, raising=False)
        yield "sqlite"
        return
    url = request.getfixturevalue("pg_url")
    monkeypatch.setenv(DATABASE_URL_VARIABLE, url)
    yield "postgres"

"""Fixtures every test directory may use: the session's real PostgreSQL and one real Chroma
server, each started on first use only, so a run that needs neither starts neither.

Every test that runs on the real PostgreSQL server is marked ``slow`` here (its fixtures, or the
``postgres`` case of ``backend``): a cluster's start and its schemas cost minutes over the suite,
so they run in ``.ci/run`` (``pytest -m slow``) and not on every local ``pytest``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tiers.conftest_pg import (  # noqa: F401 - fixtures are found by name
    backend,
    pg_server,
    pg_url,
)
from tiers.chroma_server import ChromaServer

POSTGRES_FIXTURES = frozenset({"pg_server", "pg_url"})


def _uses_postgres(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    if names & POSTGRES_FIXTURES:
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") == "postgres"


@pytest.hookimpl(tryfirst=True)  # before `-m 'not slow'` deselects by marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_postgres(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One `chroma run` on a free loopback port for the whole session (the tiers' and the
    service's tests share it; each test uses collections of its own)."""
    with ChromaServer(tmp_path_factory.mktemp("chroma-server")) as server:
        yield server

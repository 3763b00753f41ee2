"""Fixtures every test directory may use: the session's real PostgreSQL and one real Chroma
server, each started on first use only, so a run that needs neither starts neither."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tiers.conftest_pg import (  # noqa: F401 - fixtures are found by name
    backend,
    pg_server,
    pg_url,
)
from tiers.chroma_server import ChromaServer


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One `chroma run` on a free loopback port for the whole session (the tiers' and the
    service's tests share it; each test uses collections of its own)."""
    with ChromaServer(tmp_path_factory.mktemp("chroma-server")) as server:
        yield server

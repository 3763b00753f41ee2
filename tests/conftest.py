"""Fixtures shared by every test package: one real Chroma server for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tiers.chroma_server import ChromaServer


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One `chroma run` on a free loopback port for the whole session (the tiers' and the
    service's tests share it; each test uses collections of its own)."""
    with ChromaServer(tmp_path_factory.mktemp("chroma-server")) as server:
        yield server

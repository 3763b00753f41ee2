"""Fixtures for the HTTP API: apps over real pools, and the sample conversation as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")

from fastapi.testclient import TestClient

from disclosure import ControllerPool, Profile
from disclosure.faces.api import create_app
from disclosure.sample import load_sample_conversation

API_KEY = "test-key-0123456789abcdef"
BASE = "http://localhost"  # the server answers loopback Host names only


def sample_json() -> list[dict[str, Any]]:
    return [json.loads(m.model_dump_json()) for m in load_sample_conversation()]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The default profile over a real pool; Dana's namespace holds the sample conversation."""
    root = tmp_path_factory.mktemp("api-root")
    with TestClient(create_app("default", root=root), base_url=BASE) as test_client:
        response = test_client.post("/v1/ingest?user=dana", json={"memories": sample_json()})
        assert response.status_code == 200, response.text
        yield test_client


@pytest.fixture
def lean_client(lean_profile: Profile, tmp_path: Path) -> Iterator[TestClient]:
    """A cheap app (no warm tier) for tests of limits and errors."""
    with TestClient(create_app(lean_profile, root=tmp_path / "root"), base_url=BASE) as test_client:
        yield test_client


@pytest.fixture
def keyed_client(lean_profile: Profile, tmp_path: Path) -> Iterator[TestClient]:
    with (
        ControllerPool(lean_profile, root=tmp_path / "root") as pool,
        TestClient(create_app(pool=pool, api_keys=[API_KEY]), base_url=BASE) as test_client,
    ):
        yield test_client

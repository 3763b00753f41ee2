"""Bad requests over HTTP: each gets a 4xx with the JSON error shape, none a 5xx, and a failed
write creates nothing. A full disk (a real, small tmpfs) answers 507 and the store works again
once there is space."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from disclosure import Profile
from disclosure.faces.api import create_app
from disclosure.storage.namespaces import NAMESPACES_DIR
from tests.disclosure.faces.api.conftest import BASE

JSON = {"content-type": "application/json"}


def deep(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def memory_body(metadata: str = "{}", content: str = '"x"') -> bytes:
    text = f'{{"memories": [{{"id": "m", "content": {content}, "metadata": {metadata}}}]}}'
    return text.encode("utf-8", "surrogatepass")


BAD = [
    ("/v1/ingest", memory_body(deep(5000)), 422),
    ("/v1/ingest", memory_body(deep(50)), 422),
    ("/v1/ingest", memory_body('{"k": "\\udc00"}'), 422),
    ("/v1/ingest", memory_body(content='"lone \\ud800 surrogate"'), 422),
    ("/v1/ingest", memory_body(content=json.dumps("w " * 60_000)), 422),
    ("/v1/ingest", b'{"memories": [' + b"[" * 200_000, 422),
    ("/v1/ingest", b'{"memories": [{"id": "m", "content": "x", "timestamp": "2026-13-45"}]}', 422),
    ("/v1/ingest", b"\xff\xfe not utf-8", 422),
    (
        "/v1/ingest",
        b'{"memories": [{"id": "m", "content": "x", "entities": '
        + b'["e"'
        + b', "e"' * 2000
        + b"]}]}",
        422,
    ),
    ("/v1/disclose", b'{"query": "' + b"\\ud800" + b'"}', 422),
    ("/v1/disclose", b"[" * 500_000, 422),
]


@pytest.fixture
def client(lean_profile: Profile, tmp_path: Path) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path / "root"
    with TestClient(create_app(lean_profile, root=root), base_url=BASE) as test_client:
        yield test_client, root


@pytest.mark.parametrize(("path", "body", "status"), BAD)
def test_bad_bodies_get_a_4xx_and_create_nothing(
    client: tuple[TestClient, Path], path: str, body: bytes, status: int
) -> None:
    test_client, root = client
    response = test_client.post(path, content=body, headers=JSON, params={"user": "u"})
    assert response.status_code == status, response.text[:300]
    assert response.json()["error"]["message"]
    base = root / NAMESPACES_DIR
    assert not base.exists() or list(base.iterdir()) == []


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    if not _mount_tmpfs(where, "24m"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_answers_507_and_the_store_works_once_space_returns(
    lean_profile: Profile, small_disk: Path
) -> None:
    root = small_disk / "root"
    filler = small_disk / "filler"
    with TestClient(create_app(lean_profile, root=root), base_url=BASE) as client:
        first = {"memories": [{"id": "m0", "content": "the first memory about the garden"}]}
        assert client.post("/v1/ingest", json=first).status_code == 200
        with filler.open("wb") as handle:  # fill the disk to the last byte
            try:
                while True:
                    handle.write(b"\0" * 65536)
                    handle.flush()
            except OSError:
                pass
        statuses = set()
        for i in range(1, 6):
            text = f"memory {i} about the garden " + "words " * 3000
            body = {"memories": [{"id": f"m{i}", "content": text}]}
            response = client.post("/v1/ingest", json=body)
            statuses.add(response.status_code)
            if response.status_code != 200:
                assert response.json()["error"]["code"] == "disk_full", response.text
        assert 507 in statuses and not any(s >= 500 and s != 507 for s in statuses)
        filler.unlink()
        again = {"memories": [{"id": "m9", "content": "after the disk was freed, the garden"}]}
        assert client.post("/v1/ingest", json=again).status_code == 200
        found = client.post("/v1/search", json={"query": "garden freed"}).json()["results"]
        assert found and client.get("/v1/stats").status_code == 200

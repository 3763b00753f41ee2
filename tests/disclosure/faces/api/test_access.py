"""Who may do what: tenant-scoped and read-only keys, Host and Origin checks, reads that create
nothing, misspelled parameters refused."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from disclosure import ControllerPool, Profile
from disclosure.faces.api import create_app, hash_key, load_api_keys
from disclosure.storage.namespaces import NAMESPACES_DIR
from tests.disclosure.faces.api.conftest import BASE
from tiers.errors import InvalidInputError

ADMIN = "admin-key-0123456789abcdef"
ACME = "acme-key-0123456789abcdef"
ACME_READER = "acme-reader-0123456789abc"
GLOBEX = "globex-key-0123456789abcd"
MEMORY = {"memories": [{"id": "m1", "content": "the acme launch is on friday"}]}


def tenant_profile(lean: Profile) -> Profile:
    data = lean.model_dump(mode="json")
    data["isolation"]["scope"] = ["tenant", "user"]
    return Profile.model_validate(data)


@pytest.fixture
def scoped(lean_profile: Profile, tmp_path: Path) -> Iterator[TestClient]:
    keys = [
        ADMIN,
        f"{ACME} tenant=acme label=acme-app",
        f"{hash_key(ACME_READER)} tenant=acme read-only",
        f"{GLOBEX} tenant=globex",
    ]
    with (
        ControllerPool(tenant_profile(lean_profile), root=tmp_path / "root") as pool,
        TestClient(create_app(pool=pool, api_keys=keys), base_url=BASE) as client,
    ):
        for tenant in ("acme", "globex"):
            response = client.post(
                "/v1/ingest", params={"tenant": tenant}, json=MEMORY, headers={"X-API-Key": ADMIN}
            )
            assert response.status_code == 200, response.text
        yield client


def operations(client: TestClient) -> list[tuple[str, str]]:
    """Every (method, path) of a namespaced route, from the OpenAPI schema."""
    schema = client.get("/openapi.json").json()
    found = []
    for path, methods in schema["paths"].items():
        for method, spec in methods.items():
            names = {p["name"] for p in spec.get("parameters", [])}
            if "tenant" in names:
                found.append((method.upper(), path.replace("{ref}", "m1")))
    return found


def call(client: TestClient, method: str, path: str, key: str, tenant: str) -> Any:
    body = {"memories": MEMORY["memories"], "query": "launch", "ids": ["m1"], "refs": ["m1"]}
    bodies = {
        "/v1/ingest": {"memories": MEMORY["memories"]},
        "/v1/disclose": {"query": "launch"},
        "/v1/search": {"query": "launch"},
        "/v1/forget": {"ids": ["m1"]},
        "/v1/feedback": {"disclosure_id": "x", "reply": "y"},
        "/v1/timeline": {"refs": ["m1"]},
    }
    kwargs: dict[str, Any] = {"params": {"tenant": tenant}, "headers": {"X-API-Key": key}}
    if method == "POST":
        kwargs["json"] = bodies.get(path, body)
    return client.request(method, path, **kwargs)


def test_a_scoped_key_gets_403_on_every_route_of_another_tenant(scoped: TestClient) -> None:
    found = operations(scoped)
    assert len(found) >= 7, found  # ingest, disclose, show, stats, search, timeline, forget, ...
    for method, path in found:
        response = call(scoped, method, path, ACME, "globex")
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["error"]["code"] == "forbidden"
        assert "launch" not in response.text
        # a tenant that is nothing but a prefix, a case variant or absent is another tenant
        for other in ("acm", "ACME", "acme "):
            assert call(scoped, method, path, ACME, other).status_code in (403, 422)
    # the globex memory is still there: nothing of the above acted
    shown = scoped.get("/v1/memories/m1", params={"tenant": "globex"}, headers={"X-API-Key": ADMIN})
    assert shown.status_code == 200 and "launch" in shown.json()["text"]


def test_a_scoped_key_acts_in_its_own_tenant_and_the_missing_part_is_not_a_loophole(
    scoped: TestClient,
) -> None:
    own = call(scoped, "POST", "/v1/disclose", ACME, "acme")
    assert own.status_code == 200 and "launch" in own.json()["text"]
    no_tenant = scoped.post("/v1/disclose", json={"query": "x"}, headers={"X-API-Key": ACME})
    assert no_tenant.status_code == 403  # the default tenant is not acme's


def test_a_read_only_key_reads_but_never_writes(scoped: TestClient) -> None:
    assert call(scoped, "POST", "/v1/disclose", ACME_READER, "acme").status_code == 200
    assert call(scoped, "GET", "/v1/stats", ACME_READER, "acme").status_code == 200
    for path in ("/v1/ingest", "/v1/forget", "/v1/feedback"):
        response = call(scoped, "POST", path, ACME_READER, "acme")
        assert response.status_code == 403, (path, response.text)
    shown = scoped.get("/v1/memories/m1", params={"tenant": "acme"}, headers={"X-API-Key": ADMIN})
    assert shown.status_code == 200  # the forget above did not act


def test_the_log_names_the_key_by_its_label_never_the_key(
    scoped: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="disclosure.faces.api.app")
    call(scoped, "GET", "/v1/stats", ACME, "acme")
    call(scoped, "GET", "/v1/stats", ACME_READER, "acme")
    assert "acme-app" in caplog.text
    assert f"key-{hash_key(ACME_READER)[7:15]}" in caplog.text
    assert ACME not in caplog.text and ACME_READER not in caplog.text


def test_key_entries_in_the_file_and_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"# comment\n{ACME} tenant=acme read-only label=ro\n", encoding="utf-8")
    keys = load_api_keys(path, environ={"TIERED_DISCLOSURE_API_KEYS": f"{ADMIN},{GLOBEX} tenant=g"})
    ro, admin, globex = keys.grant(ACME), keys.grant(ADMIN), keys.grant(GLOBEX)
    assert ro is not None and (ro.tenant, ro.read_only, ro.label) == ("acme", True, "ro")
    assert admin is not None and admin.tenant is None and not admin.read_only
    assert globex is not None and globex.tenant == "g"
    assert keys.grant(ACME[:-1]) is None
    for bad in (f"{ACME} tenant", f"{ACME} admin=yes", "sha256:abc"):
        with pytest.raises(InvalidInputError):
            load_api_keys(environ={"TIERED_DISCLOSURE_API_KEYS": bad})


@pytest.fixture
def open_client(lean_profile: Profile, tmp_path: Path) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path / "root"
    app = create_app(lean_profile, root=root, cors_origins=["https://app.example"])
    with TestClient(app, base_url=BASE) as client:
        yield client, root


def test_unknown_hosts_and_cross_site_requests_are_refused(
    open_client: tuple[TestClient, Path],
) -> None:
    """DNS rebinding (a foreign Host) and a foreign page's fetch get 403; loopback names and
    an allowed CORS origin are served."""
    client, _ = open_client
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.evil"):
        response = client.get("/v1/stats", headers={"Host": host})
        assert (response.status_code, response.json()["error"]["code"]) == (
            403,
            "forbidden_origin",
        )
    for host in ("localhost", "localhost:8765", "127.0.0.1:8765", "[::1]:8765"):
        assert client.get("/health", headers={"Host": host}).status_code == 200, host
    foreign = client.post("/v1/ingest", json=MEMORY, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    fetch = client.post("/v1/ingest", json=MEMORY, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch.status_code == 403
    allowed = client.post("/v1/ingest", json=MEMORY, headers={"Origin": "https://app.example"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"


def test_allowed_host_serves_more_names(lean_profile: Profile, tmp_path: Path) -> None:
    app = create_app(lean_profile, root=tmp_path / "r", allowed_hosts=["memory.internal"])
    with TestClient(app, base_url="http://memory.internal") as client:
        assert client.get("/health").status_code == 200
        assert client.get("/health", headers={"Host": "other.internal"}).status_code == 403


def test_reads_create_nothing_and_misspelled_parameters_are_refused(
    open_client: tuple[TestClient, Path],
) -> None:
    client, root = open_client
    for i in range(5):
        params = {"user": f"nobody-{i}"}
        stats = client.get("/v1/stats", params=params)  # empty answers, each with a warning
        assert stats.status_code == 200 and stats.json()["warnings"]
        found = client.post("/v1/search", params=params, json={"query": "x"})
        assert found.status_code == 200 and found.json()["results"] == []
        disclosed = client.post("/v1/disclose", params=params, json={"query": "x"})
        assert disclosed.status_code == 200 and disclosed.json()["items"] == []
        assert client.get("/v1/memories/m1", params=params).status_code == 404
        forgot = client.post("/v1/forget", params=params, json={"ids": ["m1"]})
        assert forgot.status_code == 200 and forgot.json()["count"] == 0
    assert not (root / NAMESPACES_DIR).exists() or not list((root / NAMESPACES_DIR).iterdir())
    typo = client.post("/v1/ingest", params={"usr": "dana"}, json=MEMORY)
    assert typo.status_code == 422 and "usr" in typo.json()["error"]["message"]
    assert not (root / NAMESPACES_DIR).exists() or not list((root / NAMESPACES_DIR).iterdir())
    assert client.get("/health").json()["open_namespaces"] == 0


def test_names_differing_only_in_invalid_utf8_are_refused_not_merged(
    open_client: tuple[TestClient, Path],
) -> None:
    client, root = open_client
    for query in ("user=a%FF", "user=a%FE", "user=%C3", "user=a%EF%BF%BD"):
        response = client.post(f"/v1/ingest?{query}", json=MEMORY)
        assert response.status_code == 422, (query, response.text)
        assert response.json()["error"]["code"] == "invalid_namespace"
    assert not (root / NAMESPACES_DIR).exists() or not list((root / NAMESPACES_DIR).iterdir())
    assert client.post("/v1/ingest?user=%C3%A9", json=MEMORY).status_code == 200  # "é" is fine

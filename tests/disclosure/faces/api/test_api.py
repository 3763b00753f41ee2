"""The HTTP API through FastAPI's test client: the flow, isolation, errors, limits, keys."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from disclosure.faces.api import ERROR_CODES, load_api_keys
from disclosure.faces.api.guards import RecentResults
from disclosure.faces.api.keys import ApiKeys
from disclosure.service.error_codes import exception_for
from tests.disclosure.faces.api.conftest import API_KEY, sample_json
from tiers.errors import InvalidInputError

QUESTION = "Which database did we pick for billing?"
SAMPLE_TEXTS = [m["content"] for m in sample_json()]
JSON = {"content-type": "application/json"}


def disclose(client: TestClient, query: str = QUESTION, **params: str) -> dict[str, Any]:
    response = client.post("/v1/disclose", params=params, json={"query": query})
    assert response.status_code == 200, response.text
    return dict(response.json())


def error_of(response: Any) -> str:
    return str(response.json()["error"]["code"])


def test_health_and_the_openapi_schema(client: TestClient) -> None:
    """/health needs nothing; the schema lists every route, the namespace parameters and errors."""
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["profile"] == "default"
    schema = client.get("/openapi.json").json()
    assert {
        "/v1/ingest",
        "/v1/disclose",
        "/v1/memories/{ref}",
        "/v1/feedback",
        "/v1/forget",
        "/v1/stats",
        "/v1/search",
        "/v1/timeline",
        "/health",
    } <= set(schema["paths"])
    params = {p["name"]: p for p in schema["paths"]["/v1/disclose"]["post"]["parameters"]}
    assert set(params) == {"tenant", "user"}
    assert all(
        p["in"] == "query" and p["schema"]["anyOf"][0]["maxLength"] == 128 for p in params.values()
    )
    responses = schema["paths"]["/v1/disclose"]["post"]["responses"]
    assert responses["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "ErrorResponse"
    )


def test_disclose_show_feedback_and_stats(client: TestClient) -> None:
    """A disclosure cites memories; show expands one; feedback on it counts once."""
    result = disclose(client, user="dana")
    assert "Postgres" in result["text"] and result["tokens_used"] <= result["budget"]
    assert "savings via progressive disclosure" in result["savings_line"]
    citation = result["items"][0]["citation"]
    shown = client.get(f"/v1/memories/{citation}", params={"user": "dana"})
    assert shown.status_code == 200 and f"[{citation}]" in shown.json()["text"]
    reply = {"disclosure_id": result["disclosure_id"], "reply": f"Postgres 16 [{citation}]"}
    used = client.post("/v1/feedback", params={"user": "dana"}, json=reply)
    assert used.status_code == 200 and used.json()["cited"] == [result["items"][0]["id"]]
    again = client.post("/v1/feedback", params={"user": "dana"}, json=reply)
    assert (again.status_code, error_of(again)) == (404, "unknown_disclosure")
    stats = client.get("/v1/stats", params={"user": "dana"}).json()
    assert stats["namespace"] == {"tenant": "default", "user": "dana"}
    assert stats["stats"]["store"]["cold"] == len(SAMPLE_TEXTS)
    assert "data_dir" not in stats["stats"]  # no server paths for clients


def test_search_then_timeline_then_details(client: TestClient) -> None:
    """The three layers over HTTP: an index, the timeline around a hit, the hit in full."""
    found = client.post(
        "/v1/search", params={"user": "dana"}, json={"query": "postgres", "limit": 3}
    )
    assert found.status_code == 200
    hits = found.json()["results"]
    assert len(hits) == 3 and all(h["citation"].startswith("mem:") for h in hits)
    timeline = client.post(
        "/v1/timeline", params={"user": "dana"}, json={"refs": [hits[0]["citation"]], "window": 1}
    )
    assert timeline.status_code == 200 and "\u2192" in timeline.json()["text"]


def test_namespaces_cannot_be_crossed(client: TestClient) -> None:
    """Same ids elsewhere, citations, disclosure ids, show and forget: nothing crosses."""
    dana = disclose(client, user="dana")
    citation, dana_id = dana["items"][0]["citation"], dana["items"][0]["id"]
    # mallory stores memories with Dana's ids but her own content
    forged = [
        {"id": m["id"], "content": f"mallory note {i}", "session_id": m["session_id"]}
        for i, m in enumerate(sample_json())
    ]
    assert (
        client.post("/v1/ingest", params={"user": "mallory"}, json={"memories": forged}).status_code
        == 200
    )
    mallory = disclose(client, user="mallory")
    assert not any(text in mallory["text"] for text in SAMPLE_TEXTS)
    # the same citation in mallory's namespace names mallory's own memory
    shown = client.get(f"/v1/memories/{citation}", params={"user": "mallory"}).json()["text"]
    assert "mallory note" in shown and "Postgres" not in shown
    # Dana's disclosure id is unknown to mallory
    stolen = {"disclosure_id": dana["disclosure_id"], "reply": "x"}
    assert (
        error_of(client.post("/v1/feedback", params={"user": "mallory"}, json=stolen))
        == "unknown_disclosure"
    )
    # forgetting Dana's session in mallory's namespace leaves Dana's memories alone
    forgot = client.post(
        "/v1/forget", params={"user": "mallory"}, json={"session_id": "s1-kickoff"}
    )
    assert forgot.json()["count"] > 0
    assert client.get(f"/v1/memories/{dana_id}", params={"user": "dana"}).status_code == 200
    assert "Postgres" in disclose(client, user="dana")["text"]


@pytest.mark.parametrize(
    "params",
    [
        {"user": "Dana"},  # case
        {"user": "d\u0430na"},  # Cyrillic a
        {"user": "\uff44ana"},  # full-width d
        {"user": "dana", "tenant": "other"},
        {"tenant": "dana"},  # the value in another part
    ],
)
def test_look_alike_namespaces_see_nothing(client: TestClient, params: dict[str, str]) -> None:
    """Names that look like Dana's are other namespaces: nothing stored, nothing created;
    a read answers empty and says why."""
    before = client.get("/health").json()["open_namespaces"]
    response = client.post("/v1/disclose", params=params, json={"query": QUESTION})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["text"], body["items"], body["tokens_used"]) == ("", [], 0)
    assert any("nothing is stored for" in w for w in body["warnings"])
    assert not any(t in response.text for t in SAMPLE_TEXTS)
    found = client.post("/v1/search", params=params, json={"query": QUESTION})
    assert found.status_code == 200 and found.json()["results"] == []
    assert not any(t in found.text for t in SAMPLE_TEXTS)
    assert client.get("/health").json()["open_namespaces"] == before


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("user=../dana", "path separator"),
        ("user=%2e%2e", "path component"),
        ("user=dana%2F..%2Fdana", "path separator"),
        ("user=%00dana", "character U+0000"),
        ("user=dana&user=eve", "more than once"),
        ("conversation=c1", "not in this profile's isolation scope"),
    ],
)
def test_crafted_namespaces_are_refused(client: TestClient, query: str, needle: str) -> None:
    """Traversal, NULs, repeated or out-of-scope parts: 422 invalid_namespace, nothing opened."""
    before = client.get("/health").json()["open_namespaces"]
    response = client.post(f"/v1/disclose?{query}", json={"query": QUESTION})
    assert (response.status_code, error_of(response)) == (422, "invalid_namespace")
    assert needle in response.json()["error"]["message"]
    assert client.get("/health").json()["open_namespaces"] == before


def test_ids_with_slashes_and_hashes_can_be_shown(lean_client: TestClient) -> None:
    """Transcript and LoCoMo ids hold '/', '#' and ':'; percent-encoded, they reach show."""
    memory = {"id": "chat/kickoff#1", "content": "Dana: kickoff notes", "session_id": "kickoff"}
    assert lean_client.post("/v1/ingest", json={"memories": [memory]}).status_code == 200
    shown = lean_client.get("/v1/memories/chat/kickoff%231")
    assert shown.status_code == 200 and "kickoff notes" in shown.json()["text"]
    assert lean_client.get("/v1/memories/chat%2Fkickoff%231").status_code == 200


def test_an_explicit_default_is_the_default_namespace(client: TestClient) -> None:
    """?tenant=default&user=dana and ?user=dana are the same store."""
    assert disclose(client, tenant="default", user="dana")["items"]


def test_errors_carry_stable_codes(lean_client: TestClient) -> None:
    """Every failure is {"error": {"code", "message"}} with the documented status."""
    c = lean_client
    assert c.get("/v1/memories/m1").status_code == 404  # nothing stored yet: no such memory
    stored = c.post("/v1/ingest", json={"memories": [{"id": "m1", "content": "hello"}]})
    assert stored.status_code == 200
    cases = [
        (c.get("/nope"), 404, "not_found"),
        (c.delete("/v1/stats"), 405, "method_not_allowed"),
        (c.get("/v1/memories/mem:zzzzzz"), 404, "not_found"),
        (c.post("/v1/disclose", json={}), 422, "validation_error"),
        (c.post("/v1/disclose", content=b'{"query":', headers=JSON), 422, "validation_error"),
        (c.post("/v1/disclose", json={"query": "   "}), 422, "invalid_input"),
        (c.post("/v1/disclose", json={"query": "x" * 4001}), 422, "query_too_long"),
        (
            c.post("/v1/disclose", json={"query": "x", "history": ["h"] * 101}),
            422,
            "history_too_long",
        ),
        (
            c.post("/v1/disclose", json={"query": "x", "now": "0001-01-01T00:00:00"}),
            422,
            "validation_error",
        ),
        (
            c.post("/v1/disclose", content=b'{"query": "\\ud800"}', headers=JSON),
            422,
            "validation_error",
        ),
        (
            c.post("/v1/ingest", json={"memories": [{"id": "a\nb", "content": "x"}]}),
            422,
            "invalid_memory",
        ),
        (
            c.post(
                "/v1/ingest",
                content=b'{"memories": [{"id": "a", "content": "x", "metadata": {"\\udc00": 1}}]}',
                headers=JSON,
            ),
            422,
            "invalid_input",
        ),
        (c.post("/v1/forget", json={}), 422, "invalid_input"),
        (
            c.post("/v1/feedback", json={"disclosure_id": "nope", "reply": "x"}),
            404,
            "unknown_disclosure",
        ),
        (
            c.post("/v1/disclose", content=b"[" * 50_000, headers=JSON),
            422,
            "too_deep",
        ),
    ]
    for response, status, code in cases:
        assert (response.status_code, error_of(response)) == (status, code), response.text
        assert response.json()["error"]["message"]


def test_request_size_limits(lean_client: TestClient) -> None:
    """Bodies over max_body_bytes, with or without Content-Length, and too many memories: 413."""
    big = b'{"query": "' + b"x" * 1_100_000 + b'"}'
    response = lean_client.post(
        "/v1/disclose", content=big, headers={"content-type": "application/json"}
    )
    assert (response.status_code, error_of(response)) == (413, "payload_too_large")

    def chunks() -> Any:
        yield b'{"query": "'
        for _ in range(20):
            yield b"y" * 60_000
        yield b'"}'

    streamed = lean_client.post(
        "/v1/disclose", content=chunks(), headers={"content-type": "application/json"}
    )
    assert (streamed.status_code, error_of(streamed)) == (413, "payload_too_large")
    many = {"memories": [{"id": f"m{i}", "content": "x"} for i in range(1001)]}
    response = lean_client.post("/v1/ingest", json=many)
    assert (response.status_code, error_of(response)) == (413, "too_many_memories")


def test_api_keys_are_required_checked_and_never_echoed(
    keyed_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """No key or a wrong key: 401; X-API-Key or Bearer: served; /health stays open."""
    caplog.set_level(logging.DEBUG)
    first = {"memories": [{"id": "m1", "content": "hello"}]}
    assert keyed_client.post("/v1/ingest", json=first, headers={"X-API-Key": API_KEY}).is_success
    missing = keyed_client.get("/v1/stats")
    assert (missing.status_code, error_of(missing)) == (401, "unauthorized")
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = keyed_client.get("/v1/stats", headers={"X-API-Key": API_KEY[:-1] + "X"})
    assert wrong.status_code == 401
    assert keyed_client.get("/v1/stats", headers={"X-API-Key": API_KEY}).status_code == 200
    bearer = keyed_client.get("/v1/stats", headers={"Authorization": f"Bearer {API_KEY}"})
    assert bearer.status_code == 200
    assert keyed_client.get("/health").status_code == 200
    assert API_KEY not in caplog.text and API_KEY not in wrong.text
    schema = keyed_client.get("/openapi.json").json()
    assert "401" in schema["paths"]["/v1/stats"]["get"]["responses"]


def test_keys_come_from_the_environment_and_a_file(tmp_path: Path) -> None:
    """$TIERED_DISCLOSURE_API_KEYS and a key file (comments skipped); short keys refused."""
    path = tmp_path / "keys"
    path.write_text("# ops\nfile-key-0123456789abc\n\n", encoding="utf-8")
    keys = load_api_keys(path, environ={"TIERED_DISCLOSURE_API_KEYS": "env-key-0123456789abcd, "})
    assert len(keys) == 2 and keys.accepts("file-key-0123456789abc")
    assert keys.accepts("env-key-0123456789abcd") and not keys.accepts("env-key")
    assert "0123" not in repr(keys)
    assert not load_api_keys(environ={})
    with pytest.raises(InvalidInputError, match="shorter than 16"):
        ApiKeys(["short"])
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_api_keys(tmp_path / "missing", environ={})


def test_recent_results_are_bounded_and_expire() -> None:
    """The feedback store keeps the newest results, per namespace, for a while."""
    from disclosure.faces.api.models import DiscloseRequest  # noqa: F401  (imports cleanly)

    results = RecentResults(max_items=2, ttl_seconds=3600)
    fake = object()
    ids = [results.put("ns", fake) for _ in range(3)]  # type: ignore[arg-type]
    assert len(results) == 2
    assert results.take("ns", ids[0]) is None
    assert results.take("other", ids[2]) is None
    assert results.take("ns", ids[2]) is fake
    expired = RecentResults(max_items=2, ttl_seconds=1e-9)
    token = expired.put("ns", fake)  # type: ignore[arg-type]
    assert expired.take("ns", token) is None


def test_every_library_error_has_a_code() -> None:
    """The mapping covers the hierarchy with distinct, stable codes."""
    codes = [code for _, _, code in ERROR_CODES]
    assert len(codes) == len(set(codes))
    assert all(code.islower() and " " not in code for code in codes)


def test_a_client_raises_again_the_class_the_server_mapped() -> None:
    """One table serves both sides: each library error the server names comes back to a client
    as the same class (an unexpected 500 stays a ServiceError: no class to name)."""
    for kind, _status, code in ERROR_CODES:
        expected = None if code == "internal_error" else kind
        assert exception_for(code) is expected, code
    assert exception_for("validation_error") is InvalidInputError
    assert exception_for("no_such_code") is None

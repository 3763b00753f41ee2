"""Reads of a namespace nothing was written to: empty answers with a warning, nothing created.

Every read route answers 200 with nothing in it and says why (a single memory or summary
asked by reference is 404 ``not_found``: it does not exist); no directory appears and no
controller opens. A write creates the namespace, and from then on the warnings stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from disclosure.storage.namespaces import iter_namespaces

GHOST = {"user": "ghost"}
HARD = "Compare every decision we made about billing and the database and explain the tradeoffs"


def error_of(response: Any) -> str:
    return str(response.json()["error"]["code"])


def root_of(client: TestClient) -> Path:
    return Path(client.app.state.pool.root)  # type: ignore[attr-defined]


def created(client: TestClient) -> list[dict[str, str]]:
    return [parts for parts, _ in iter_namespaces(root_of(client))]


def test_every_read_route_answers_empty_and_creates_nothing(lean_client: TestClient) -> None:
    c = lean_client
    empty = {
        ("POST", "/v1/disclose", "items"): {"query": "what did we decide?"},
        ("POST", "/v1/search", "results"): {"query": "billing"},
        ("GET", "/v1/summaries", "summaries"): None,
        ("POST", "/v1/summaries/search", "summaries"): {"query": "billing"},
        ("POST", "/v1/citations", "citations"): {"top": 5},
        ("GET", "/v1/citations/mem:abcdef", "uses"): None,
    }
    for (method, path, field), body in empty.items():
        response = c.request(method, path, params=GHOST, json=body)
        assert response.status_code == 200, (path, response.text)
        assert response.json()[field] == [], path
        warnings = response.json()["warnings"]
        assert warnings and "user='ghost'" in warnings[0], path
    around = c.post("/v1/timeline", params=GHOST, json={"refs": ["mem:abcdef"]})
    assert around.status_code == 200 and around.json()["text"] == ""
    assert "created by its first write" in around.json()["warnings"][0]
    stats = c.get("/v1/stats", params=GHOST).json()
    assert stats["namespace"]["user"] == "ghost" and stats["stats"]["store"]["cold"] == 0
    assert stats["stats"]["full_history_tokens"] == 0 and stats["warnings"]
    assert "data_dir" not in stats["stats"]
    page = c.get("/v1/memories", params=GHOST).json()
    assert page["items"] == [] and page["warning"]
    for path in ("/v1/memories/m1", "/v1/memories/m1/history", "/v1/summaries/sum:abc"):
        missing = c.get(path, params=GHOST)
        assert (missing.status_code, error_of(missing)) == (404, "not_found"), path
    assert "nothing is stored" in c.get("/v1/memories/m1", params=GHOST).text
    consolidated = c.post("/v1/consolidate", params=GHOST, json={})
    assert consolidated.status_code == 200 and consolidated.json()["warnings"]
    forgot = c.post("/v1/forget", params=GHOST, json={"ids": ["m1"]})
    assert forgot.status_code == 200 and forgot.json()["count"] == 0
    for path in ("/ui/sessions", "/ui/stats", "/ui/search?q=x"):
        page_html = c.get(path, params=GHOST)
        assert page_html.status_code == 200 and "nothing is stored" in page_html.text, path
    assert c.get("/ui/memory/m1", params=GHOST).status_code == 404
    assert created(c) == [] and c.get("/health").json()["open_namespaces"] == 0


def test_an_empty_disclosure_carries_the_level_the_query_gets(lean_client: TestClient) -> None:
    """Without a store the analysis is the real one: the same level and complexity as in a
    namespace with memories; overrides are honoured; feedback on it creates nothing."""
    c = lean_client
    memory = {"id": "m1", "content": "We moved billing to Postgres in March."}
    assert c.post("/v1/ingest", params={"user": "dana"}, json={"memories": [memory]}).is_success
    for query in (HARD, "hi"):
        full = c.post("/v1/disclose", params={"user": "dana"}, json={"query": query}).json()
        empty = c.post("/v1/disclose", params=GHOST, json={"query": query}).json()
        assert full["warnings"] == [] and empty["warnings"]
        assert (empty["text"], empty["items"], empty["tokens_used"]) == ("", [], 0)
        assert empty["level"] == full["level"], query
        assert empty["analysis"]["complexity"] == full["analysis"]["complexity"]
        assert empty["analysis"]["query"] == query and empty["budget"] > 0
        assert empty["profile"] == full["profile"] and "Postgres" not in str(empty)
    levels = {
        c.post("/v1/disclose", params=GHOST, json={"query": q}).json()["level"]
        for q in (HARD, "hi")
    }
    assert len(levels) == 2  # the analyzer ran: two queries, two levels
    chosen = c.post(
        "/v1/disclose", params=GHOST, json={"query": "hi", "level": "detailed", "budget": 777}
    ).json()
    assert (chosen["level"], chosen["budget"]) == ("detailed", 777)
    feedback = c.post(
        "/v1/feedback",
        params=GHOST,
        json={"disclosure_id": chosen["disclosure_id"], "reply": "Nothing to go on."},
    )
    assert feedback.status_code == 200 and feedback.json()["used"] == []
    assert [parts.get("user") for parts in created(c)] == ["dana"]


def test_a_write_creates_the_namespace_and_the_warnings_stop(lean_client: TestClient) -> None:
    c = lean_client
    assert c.get("/v1/stats", params=GHOST).json()["warnings"]
    memory = {"id": "g1", "content": "The ghost prefers quiet offices."}
    assert c.post("/v1/ingest", params=GHOST, json={"memories": [memory]}).is_success
    assert any(parts.get("user") == "ghost" for parts in created(c))
    stats = c.get("/v1/stats", params=GHOST).json()
    assert stats["warnings"] == [] and stats["stats"]["store"]["cold"] == 1
    disclosed = c.post("/v1/disclose", params=GHOST, json={"query": "quiet offices?"}).json()
    assert disclosed["warnings"] == [] and "quiet offices" in disclosed["text"]
    assert c.get("/v1/memories/g1", params=GHOST).status_code == 200

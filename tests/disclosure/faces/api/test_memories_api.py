"""``/v1/memories``: add, list (paged), get, update, history and delete over HTTP."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "My sister Mina lives in Daejeon."},
    {"role": "assistant", "content": "Noted: Mina is in Daejeon."},
]


def error_of(response: Any) -> str:
    return str(response.json()["error"]["code"])


def test_add_list_get_update_history_delete(lean_client: TestClient) -> None:
    c = lean_client
    added = c.post("/v1/memories?user=ann", json={"messages": CHAT, "metadata": {"app": "t"}})
    assert added.status_code == 200, added.text
    body = added.json()
    assert [r["event"] for r in body["results"]] == ["ADD", "ADD"] and body["skipped"] == 1
    first = body["results"][0]
    assert first["metadata"]["app"] == "t" and first["citation"].startswith("mem:")

    listed = c.get("/v1/memories", params={"user": "ann", "limit": 1})
    assert listed.status_code == 200
    page = listed.json()
    assert page["total"] == 2 and len(page["items"]) == 1 and page["next_cursor"]
    rest = c.get("/v1/memories", params={"user": "ann", "cursor": page["next_cursor"]}).json()
    assert [m["content"] for m in page["items"] + rest["items"]] == [
        "My sister Mina lives in Daejeon.",
        "Noted: Mina is in Daejeon.",
    ]

    shown = c.get(f"/v1/memories/{first['citation']}", params={"user": "ann"}).json()
    assert shown["memory"]["id"] == first["id"] and "Daejeon" in shown["text"]

    patched = c.patch(
        f"/v1/memories/{first['id']}", params={"user": "ann"}, json={"text": "Mina moved to Jeju."}
    )
    assert patched.status_code == 200 and patched.json()["content"] == "Mina moved to Jeju."
    history = c.get(f"/v1/memories/{first['citation']}/history", params={"user": "ann"}).json()
    assert [v["memory"]["content"] for v in history["versions"]] == [
        "My sister Mina lives in Daejeon.",
        "Mina moved to Jeju.",
    ]

    deleted = c.delete(f"/v1/memories/{first['citation']}", params={"user": "ann"})
    assert deleted.status_code == 200 and deleted.json()["ids"] == [first["id"]]
    gone = c.get(f"/v1/memories/{first['id']}", params={"user": "ann"})
    assert (gone.status_code, error_of(gone)) == (404, "not_found")
    everything = c.delete("/v1/memories", params={"user": "ann", "all": "true"})
    assert everything.json()["count"] == 1
    assert c.get("/v1/memories", params={"user": "ann"}).json()["total"] == 0


def test_a_note_and_a_session(lean_client: TestClient) -> None:
    c = lean_client
    note = c.post("/v1/memories?user=ann", json={"text": "Ann likes tea.", "session_id": "s9"})
    assert note.json()["results"][0]["session_id"] == "s9"
    assert c.get("/v1/memories", params={"user": "ann", "session_id": "s9"}).json()["total"] == 1
    assert c.delete("/v1/memories", params={"user": "ann", "session_id": "s9"}).json()["count"] == 1


def test_reading_a_namespace_never_creates_it(lean_client: TestClient) -> None:
    """A list of an unknown namespace is empty with a warning; get/patch/delete are 404;
    nothing is opened or made on disk."""
    c = lean_client
    listed = c.get("/v1/memories", params={"user": "nobody"}).json()
    assert listed["total"] == 0 and "no memories were ever added" in listed["warning"]
    for response in (
        c.get("/v1/memories/mem:abcdef/history", params={"user": "nobody"}),
        c.patch("/v1/memories/x", params={"user": "nobody"}, json={"text": "y"}),
        c.delete("/v1/memories/x", params={"user": "nobody"}),
    ):
        assert (response.status_code, error_of(response)) == (404, "not_found")
    assert c.delete("/v1/memories", params={"user": "nobody", "all": "true"}).json()["count"] == 0
    assert c.get("/health").json()["open_namespaces"] == 0


def test_bad_requests_are_named(lean_client: TestClient) -> None:
    c = lean_client
    cases = [
        (c.post("/v1/memories", json={}), "validation_error", "either messages"),
        (
            c.post("/v1/memories", json={"text": "a", "messages": CHAT}),
            "validation_error",
            "not both",
        ),
        (c.post("/v1/memories", json={"text": "a", "user_id": "x"}), "validation_error", "user_id"),
        (c.get("/v1/memories", params={"limit": 0}), "validation_error", "limit"),
        (c.delete("/v1/memories"), "invalid_input", "session_id"),
        (c.patch("/v1/memories/x", json={}), "validation_error", "text="),
    ]
    for response, code, needle in cases:
        assert (response.status_code, error_of(response)) == (422, code), response.text
        assert needle in response.json()["error"]["message"], response.text
    c.post("/v1/memories", json={"text": "something"})
    bad_cursor = c.get("/v1/memories", params={"cursor": "nonsense"})
    assert (bad_cursor.status_code, error_of(bad_cursor)) == (422, "invalid_input")


def test_the_routes_are_in_the_openapi_schema(lean_client: TestClient) -> None:
    paths = lean_client.get("/openapi.json").json()["paths"]
    assert {"post", "get", "delete"} <= set(paths["/v1/memories"])
    assert {"get", "patch", "delete"} <= set(paths["/v1/memories/{ref}"])
    assert "get" in paths["/v1/memories/{ref}/history"]


def test_unknown_query_parameters_are_refused(lean_client: TestClient) -> None:
    """?usr=bob (a typo) is 422 naming it, never a write into the default namespace; a route's
    own parameters (limit, cursor, ...) are known."""
    c = lean_client
    typo = c.post("/v1/memories?tenant=acme&usr=bob", json={"text": "x"})
    assert (typo.status_code, error_of(typo)) == (422, "invalid_namespace")
    assert "'usr'" in typo.json()["error"]["message"]
    assert "did you mean 'user'" in typo.json()["error"]["message"]
    for response in (
        c.get("/v1/stats", params={"user": "a", "verbose": "1"}),
        c.post("/v1/disclose?user=a&levl=minimal", json={"query": "x"}),
        c.get("/v1/memories", params={"user": "a", "page": "2"}),
    ):
        assert (response.status_code, error_of(response)) == (422, "invalid_namespace")
    assert c.get("/v1/memories", params={"user": "a", "limit": "5"}).status_code == 200
    assert c.get("/health").json()["open_namespaces"] == 0


def test_reads_of_an_unknown_namespace_create_nothing(lean_client: TestClient) -> None:
    c = lean_client
    for response in (
        c.post("/v1/disclose", params={"user": "ghost"}, json={"query": "anything?"}),
        c.post("/v1/search", params={"user": "ghost"}, json={"query": "anything"}),
        c.get("/v1/stats", params={"user": "ghost"}),
    ):  # answered empty, with a warning
        assert response.status_code == 200 and response.json()["warnings"], response.text
    missing = c.get("/v1/memories/x", params={"user": "ghost"})
    assert (missing.status_code, error_of(missing)) == (404, "not_found")
    assert "nothing is stored" in missing.json()["error"]["message"]
    assert c.get("/v1/memories", params={"user": "ghost"}).json()["warning"]
    assert c.get("/health").json()["open_namespaces"] == 0

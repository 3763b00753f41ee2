"""Consolidation and citations over HTTP, the background consolidation of a running service,
and the viewer's authentication and offline docs (without a browser)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")

from fastapi.testclient import TestClient

from disclosure import ControllerPool
from disclosure.faces.api import create_app
from disclosure.faces.api.summaries import BackgroundConsolidation
from tests.disclosure.consolidation.conftest import START, hand_made, profile_with

KEY = "viewer-key-0123456789"
BASE = "http://127.0.0.1:8765"


def memories_json() -> list[dict[str, object]]:
    return [{**m.model_dump(mode="json")} for m in hand_made()]


def test_consolidate_summaries_and_citations_routes(tmp_path: Path) -> None:
    with TestClient(create_app(profile_with(), root=tmp_path), base_url=BASE) as client:
        assert client.post("/v1/ingest?user=dana", json={"memories": memories_json()}).is_success
        report = client.post("/v1/consolidate?user=dana", json={"all": True}).json()
        assert report["sessions"] == ["s1", "s2"] and report["memories"] == 8
        assert client.post("/v1/consolidate?user=dana", json={"all": True}).json()["written"] == 0
        found = client.post(
            "/v1/summaries/search?user=dana", json={"query": "Lisbon offsite"}
        ).json()
        best = found["summaries"][0]
        assert best["sources"] == ["m5", "m6", "m7"] and best["score"] > 0
        one = client.get(f"/v1/summaries/{best['id']}?user=dana").json()
        assert one["full_text"].count("[mem:") == 3
        assert client.get("/v1/summaries/sum:nope?user=dana").status_code == 404
        # another namespace sees none of it
        assert client.get("/v1/summaries?user=bob").json()["summaries"] == []
        assert len(client.get("/v1/summaries?user=dana").json()["summaries"]) == 5
        now = (START + timedelta(hours=5)).isoformat()
        disclosed = client.post(
            "/v1/disclose?user=dana",
            json={"query": "Lisbon offsite?", "level": "detailed", "now": now},
        ).json()
        cite = disclosed["items"][0]["citation"]
        body = {
            "disclosure_id": disclosed["disclosure_id"],
            "reply": f"Lisbon [{cite}].",
            "session_id": "chat-7",
        }
        assert client.post("/v1/feedback?user=dana", json=body).is_success
        top = client.post("/v1/citations?user=dana", json={"top": 5}).json()["citations"]
        assert top[0]["citation"] == cite and top[0]["cited"] == 1
        uses = client.get(f"/v1/citations/{cite}?user=dana").json()["uses"]
        assert (uses[0]["query"], uses[0]["session_id"]) == ("Lisbon offsite?", "chat-7")
        assert client.get("/v1/citations/mem:zzzzzz?user=dana").status_code == 404
        assert client.post("/v1/citations?user=dana", json={"top": 0}).status_code == 422


def test_the_service_consolidates_open_namespaces_when_a_trigger_fires(tmp_path: Path) -> None:
    profile = profile_with(
        tiers={"hot": {"max_items": 3}},
        consolidation={"triggers": {"every_seconds": 0, "idle_seconds": 0, "working_set_size": 3}},
    )
    with ControllerPool(profile, root=tmp_path) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(hand_made())
        background = BackgroundConsolidation(pool)
        assert background.check() == 1
        assert background.runs == [
            {
                "namespace": {"tenant": "default", "user": "dana"},
                "trigger": "working set holds 3 memories",
            }
        ]
        assert background.check() == 0  # nothing waits now
        with pool.lease(pool.namespace(user="dana")) as controller:
            assert controller.consolidation.summaries.count()["memories"] == 5


def test_the_viewer_takes_the_apis_keys_and_serves_docs_offline(tmp_path: Path) -> None:
    with TestClient(
        create_app(profile_with(), root=tmp_path, api_keys=[KEY]), base_url=BASE
    ) as client:
        assert client.post(
            "/v1/ingest?user=dana", json={"memories": memories_json()}, headers={"X-API-Key": KEY}
        ).is_success
        denied = client.get("/ui/sessions?user=dana", follow_redirects=False)
        assert denied.status_code == 303 and denied.headers["location"] == "/login"
        assert client.post("/login", data={"key": "wrong"}).status_code == 401
        assert client.post("/login", data={"key": KEY}, follow_redirects=False).status_code == 303
        page = client.get("/ui/sessions?user=dana")
        assert page.status_code == 200 and "s1" in page.text
        docs = client.get("/docs").text
        assert (
            "/v1/disclose" in docs and "cdn" not in docs.lower() and '<script src="http' not in docs
        )
        # forgetting needs the confirmation
        assert client.post("/ui/forget?user=dana", data={"id": "m1"}).status_code == 400
        confirm = client.get("/ui/forget?user=dana&id=m1")
        assert "Forget a memory?" in confirm.text
        forged = client.post("/ui/forget?user=dana", data={"id": "m1", "confirm": "yes"})
        assert forged.status_code == 400  # only the confirmation page's token forgets
        token = confirm.text.split('name=confirm value="', 1)[1].split('"', 1)[0]
        other = client.post("/ui/forget?user=dana", data={"id": "m2", "confirm": token})
        assert other.status_code == 400  # a token confirms one memory only
        done = client.post("/ui/forget?user=dana", data={"id": "m1", "confirm": token})
        assert "Forgot 1 memory" in done.text
        assert client.get("/ui/memory/m1?user=dana").status_code == 404
        assert client.get("/static/../../etc/passwd").status_code == 404

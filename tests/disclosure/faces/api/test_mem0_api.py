"""The mem0 API's rules, over plain HTTP (the SDK's own run is test_mem0_sdk.py): the filter
grammar, how entities map onto namespaces (runs as namespaces too), errors in mem0's shape."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from disclosure import ControllerPool, Profile
from disclosure.faces.api import create_app
from disclosure.faces.api.errors import ApiError
from disclosure.faces.api.mem0_filters import MemoryView, parse_filters
from disclosure.faces.api.mem0_records import decode_id, encode_id
from disclosure.storage.namespaces import Namespace
from tests.disclosure.faces.api.conftest import BASE

KEY = "mem0-rules-key-0123456789abcdef"
RUNS = {"run_is_namespace": False}
Served = tuple[TestClient, ControllerPool]
TOKEN = {"Authorization": f"Token {KEY}"}


@pytest.fixture(scope="module")
def runs_apart(lean_profile: Profile, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server whose profile keeps each conversation (mem0's run) in a namespace of its own."""
    data = lean_profile.model_dump(mode="json")
    data["isolation"]["scope"] = ["tenant", "user", "conversation"]
    with (
        ControllerPool(Profile.model_validate(data), root=tmp_path_factory.mktemp("m0")) as pool,
        TestClient(create_app(pool=pool, api_keys=[KEY]), base_url=BASE) as client,
    ):
        yield client, pool


def add(client: TestClient, text: str, **entities: str) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "content": text}], **entities}
    answer = client.post("/v3/memories/add/", json=body, headers=TOKEN)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_runs_are_namespaces_when_the_profile_isolates_conversations(
    runs_apart: Served,
) -> None:
    client, pool = runs_apart
    added = add(client, "The cellar key hangs by the door.", user_id="gus", run_id="r1")
    add(client, "Gus likes rye bread.", user_id="gus")
    assert pool.exists(pool.namespace(user="gus", conversation="r1"))
    parts, _ = decode_id(added["results"][0]["id"])
    assert parts == {"tenant": "default", "user": "gus", "conversation": "r1"}

    def search(filters: dict[str, Any]) -> list[str]:
        body = {"query": "cellar key bread", "filters": filters}
        answer = client.post("/v3/memories/search/", json=body, headers=TOKEN)
        assert answer.status_code == 200, answer.text
        return [r["memory"] for r in answer.json()["results"]]

    assert search({"user_id": "gus", "run_id": "r1"}) == ["The cellar key hangs by the door."]
    assert search({"user_id": "gus"}) == ["Gus likes rye bread."]  # the run-less store only
    refused = client.post(
        "/v3/memories/search/",
        json={"query": "x", "filters": {"user_id": "gus", "run_id": {"in": ["r1", "r2"]}}},
        headers=TOKEN,
    )
    assert refused.status_code == 400 and "each run" in refused.json()["detail"]
    deleted = client.delete("/v1/memories/", params={"user_id": "gus"}, headers=TOKEN)
    assert deleted.json()["count"] == 2  # every run of the user


def test_delete_all_reads_the_python_form_mem0s_client_sends(
    runs_apart: Served,
) -> None:
    """mem0's client puts a filters dict in the query string as str(dict), not JSON."""
    client, _ = runs_apart
    add(client, "Hana's bike is blue.", user_id="hana", agent_id="garage")
    add(client, "Hana's car is red.", user_id="hana")
    gone = client.delete(
        "/v1/memories/",
        params={"filters": str({"user_id": "hana", "agent_id": "garage"})},
        headers=TOKEN,
    )
    assert gone.status_code == 200 and gone.json()["count"] == 1
    bad = client.delete("/v1/memories/", params={"filters": "__import__('os')"}, headers=TOKEN)
    assert bad.status_code == 400 and "not an object" in bad.json()["detail"]


def test_errors_carry_mem0s_detail_beside_ours(
    runs_apart: Served,
) -> None:
    client, _ = runs_apart
    unauthorised = client.get("/v1/ping/", headers={"Authorization": "Token wrong-key-0123456789"})
    body = unauthorised.json()
    assert unauthorised.status_code == 401 and body["detail"] == body["error"]["message"]
    invalid = client.post("/v3/memories/add/", json={"messages": []}, headers=TOKEN)
    assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "validation_error"
    assert "messages" in invalid.json()["detail"]
    ours = client.get("/v1/memories/nope", params={"user": "x"}, headers={"X-API-Key": KEY})
    assert ours.status_code == 404 and set(ours.json()) == {"error"}  # the rest keeps its shape


def pins(raw: Any) -> tuple[str | None, str | None, bool]:
    parsed = parse_filters(raw, run_is_namespace=False)
    return parsed.user_id, parsed.run_id, parsed.narrows


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"user_id": "ann"}, ("ann", None, False)),
        ({"AND": [{"user_id": "ann"}, {"run_id": "r"}]}, ("ann", "r", True)),
        ({"user_id": {"in": ["ann"]}}, ("ann", None, True)),
        ({"agent_id": "bot"}, (None, None, True)),
        ({"AND": [{"user_id": "ann"}, {"OR": [{"agent_id": "a"}]}]}, ("ann", None, True)),
    ],
)
def test_filters_pin_the_user_and_narrow_the_rest(raw: Any, expected: tuple[Any, ...]) -> None:
    assert pins(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "non-empty"),
        ({"metadata": {"k": "v"}}, "at least one"),
        ({"OR": [{"user_id": "a"}, {"agent_id": "b"}]}, "one value"),
        ({"NOT": [{"user_id": "a"}]}, "one value"),
        ({"user_id": "*"}, "one value"),
        ({"AND": [{"user_id": "a"}, {"user_id": "b"}]}, "two different"),
        ({"user_id": "a", "categories": {"in": ["x"]}}, "categories"),
        ({"user_id": "a", "created_at": {"gte": "yesterday"}}, "not a date"),
        ({"user_id": "a", "score": 1}, "unknown field"),
        ({"user_id": "a", "agent_id": {"regex": ".*"}}, "unknown operator"),
        ({"user_id": 7}, "string"),
    ],
)
def test_filters_that_are_malformed_or_span_users_are_refused(raw: Any, message: str) -> None:
    with pytest.raises(ApiError, match=message) as raised:
        parse_filters(raw, run_is_namespace=False)
    assert raised.value.status == 400


def test_a_bare_date_covers_its_whole_day() -> None:
    late = datetime(2025, 3, 1, 23, 30, tzinfo=UTC)

    def view(moment: datetime) -> MemoryView:
        return MemoryView("a", None, None, None, moment, {}, lambda: moment)

    within = parse_filters({"user_id": "a", "created_at": {"lte": "2025-03-01"}}, **RUNS)
    after = parse_filters({"user_id": "a", "created_at": {"gt": "2025-03-01"}}, **RUNS)
    assert within.matches(view(late)) and not after.matches(view(late))
    assert after.matches(view(datetime(2025, 3, 2, tzinfo=UTC)))


def test_memory_ids_carry_their_namespace_and_refuse_anything_else() -> None:
    namespace = Namespace((("tenant", "acme"), ("user", "Zoë")))
    token = encode_id(namespace, "m-123")
    assert decode_id(token) == ({"tenant": "acme", "user": "Zoë"}, "m-123")
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    for bad in ("", "not-base64!", encode_id(namespace, "")[:-3], "e30"):
        with pytest.raises(ApiError, match="not a memory id"):
            decode_id(bad)

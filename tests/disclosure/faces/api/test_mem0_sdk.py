"""mem0's own SDK (the pinned ``mem0ai``: ``MemoryClient`` and ``AsyncMemoryClient``) against a
real ``disclosure serve``: every call it makes is answered, and what we do not do is refused
with mem0's own error type carrying our reason."""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from tests.disclosure.faces.api.test_server import REPO, STARTUP_SECONDS, free_port

FULL_KEY = "mem0-full-key-0123456789abcdef"
ACME_KEY = "mem0-acme-key-0123456789abcdef"
READER_KEY = "mem0-read-key-0123456789abcdef"
KEYS = f"{FULL_KEY},{ACME_KEY} tenant=acme,{READER_KEY} tenant=acme read-only"
ALICE_TURNS = [
    {"role": "user", "content": "I moved to Busan last spring, near Haeundae beach."},
    {"role": "assistant", "content": "Noted: you live in Busan now."},
]
TEA = "Alice drinks green tea every morning."


@pytest.fixture(scope="module")
def mem0(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The SDK's modules, imported with its telemetry off and its config in a temporary home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEM0_TELEMETRY", "false")
        patch.setenv("MEM0_DIR", str(tmp_path_factory.mktemp("mem0-home")))
        pytest.importorskip("mem0", reason="mem0ai (the dev extra) is not installed")
        client = importlib.import_module("mem0.client.main")
        errors = importlib.import_module("mem0.exceptions")
        yield SimpleNamespace(
            MemoryClient=client.MemoryClient,
            AsyncMemoryClient=client.AsyncMemoryClient,
            errors=errors,
        )


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``disclosure serve`` on a free loopback port (default profile, three scoped keys)."""
    port = free_port()
    home = tmp_path_factory.mktemp("mem0-serve")
    env = {**os.environ, "TIERED_DISCLOSURE_API_KEYS": KEYS, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "disclosure", "serve", "--port", str(port), "--data-dir", str(home)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited early: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("the server did not answer /health in time")
    yield base
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
    process.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def connect(mem0: SimpleNamespace, host: str) -> Iterator[Callable[[str], Any]]:
    """MemoryClients for a key; their connections are closed after the test (the SDK leaves
    that to its user)."""
    made: list[Any] = []

    def make(key: str) -> Any:
        client = mem0.MemoryClient(api_key=key, host=host)
        made.append(client)
        return client

    yield make
    for client in made:
        client.client.close()


def texts(answer: dict[str, Any]) -> list[str]:
    return [r["memory"] for r in answer["results"]]


def test_memory_client_round_trip(mem0: SimpleNamespace, connect: Callable[[str], Any]) -> None:
    """ping, add, search (filters), get_all (pages), get, update, history, delete, delete_all."""
    client = connect(FULL_KEY)
    assert (client.org_id, client.project_id) == ("default", "default")  # the key's tenant
    added = client.add(
        ALICE_TURNS, user_id="alice", agent_id="travel", run_id="trip-1", metadata={"topic": "home"}
    )
    assert added["status"] == "SUCCEEDED" and "verbatim" in added["message"]
    assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]
    assert [r["memory"] for r in added["results"]] == [m["content"] for m in ALICE_TURNS]
    client.add(TEA, user_id="alice")
    client.add("Bob lives in Oslo and cycles to work.", user_id="bob")

    found = client.search("Where does she live now?", filters={"user_id": "alice"}, top_k=2)
    assert len(found["results"]) == 2
    assert "Busan" in found["results"][0]["memory"]
    first = found["results"][0]
    assert (first["user_id"], first["agent_id"], first["run_id"]) == ("alice", "travel", "trip-1")
    assert first["metadata"] == {"topic": "home"} and 0 < first["score"] <= 1
    everything = client.search("lives", filters={"user_id": "alice"}, top_k=50)
    assert not any("Oslo" in t for t in texts(everything))  # bob's store is another one
    assert any("Oslo" in t for t in texts(client.search("lives", filters={"user_id": "bob"})))

    by_agent = client.search(
        "drink tea Busan", filters={"AND": [{"user_id": "alice"}, {"agent_id": "travel"}]}
    )
    assert set(texts(by_agent)) == {m["content"] for m in ALICE_TURNS}
    no_agent = client.search(
        "drink tea Busan",
        filters={"AND": [{"user_id": "alice"}, {"NOT": [{"agent_id": "*"}]}]},
        fields=["memory"],
    )
    assert no_agent["results"] == [{"memory": TEA}]
    by_meta = client.search("home", filters={"user_id": "alice", "metadata": {"topic": "home"}})
    assert len(by_meta["results"]) == 2
    by_run = client.search("Busan tea", filters={"user_id": "alice", "run_id": "trip-1"})
    assert set(texts(by_run)) == {m["content"] for m in ALICE_TURNS}

    page_1 = client.get_all(filters={"user_id": "alice"}, page=1, page_size=2)
    page_2 = client.get_all(filters={"user_id": "alice"}, page=2, page_size=2)
    assert page_1["count"] == page_2["count"] == 3
    assert page_1["previous"] is None and "page=2" in page_1["next"] and page_2["next"] is None
    listed = texts(page_1) + texts(page_2)
    assert sorted(listed) == sorted([*(m["content"] for m in ALICE_TURNS), TEA])
    dated = client.get_all(
        filters={"AND": [{"user_id": "alice"}, {"created_at": {"gte": "2000-01-01"}}]}
    )
    assert dated["count"] == 3
    assert client.get_all(filters={"user_id": "alice"}, keywords="green")["count"] == 1

    memory_id = added["results"][0]["id"]
    assert client.get(memory_id)["memory"] == ALICE_TURNS[0]["content"]
    updated = client.update(memory_id, text="I moved to Jeju.", metadata={"topic": "moves"})
    assert updated["memory"] == "I moved to Jeju." and updated["metadata"] == {"topic": "moves"}
    assert updated["agent_id"] == "travel"  # the entities stay with the memory
    versions = client.history(memory_id)
    assert [v["event"] for v in versions] == ["ADD", "UPDATE"]
    assert versions[1]["old_memory"] == ALICE_TURNS[0]["content"]
    assert versions[1]["new_memory"] == "I moved to Jeju."

    assert client.delete(memory_id) == {"message": "Memory deleted successfully!"}
    with pytest.raises(mem0.errors.MemoryNotFoundError, match="no memory"):
        client.get(memory_id)
    assert client.delete_all(user_id="alice")["count"] == 2
    assert client.get_all(filters={"user_id": "alice"})["count"] == 0
    assert client.get_all(filters={"user_id": "bob"})["count"] == 1


def test_entities_batches_and_resets(mem0: SimpleNamespace, connect: Callable[[str], Any]) -> None:
    """users(), batch_update, batch_delete, delete_users and reset, within the key's tenant."""
    client = connect(ACME_KEY)
    assert client.org_id == "acme"
    carol = client.add(
        [{"role": "user", "content": "Carol plays the cello."}], user_id="carol", app_id="music"
    )
    dave = client.add("Dave collects stamps.", user_id="dave", run_id="hobbies")
    client.add("The support bot answers in French.", agent_id="support")
    entities = {(e["type"], e["name"]): e for e in client.users()["results"]}
    assert {("user", "carol"), ("user", "dave"), ("app", "music")} <= set(entities)
    assert {("run", "hobbies"), ("agent", "support")} <= set(entities)
    assert all(e["owner"] == "acme" for e in entities.values())
    assert entities[("user", "carol")]["total_memories"] == 1
    assert not any(name == "alice" for _, name in entities)  # another tenant's users

    carol_id, dave_id = carol["results"][0]["id"], dave["results"][0]["id"]
    client.batch_update([{"memory_id": carol_id, "text": "Carol plays the viola."}])
    assert client.get(carol_id)["memory"] == "Carol plays the viola."
    client.batch_delete([{"memory_id": dave_id}])
    with pytest.raises(mem0.errors.MemoryNotFoundError):
        client.get(dave_id)
    client.delete_users(agent_id="support")
    assert client.search("French", filters={"agent_id": "support"})["results"] == []
    assert client.reset()["message"].startswith("Client reset successful")
    assert client.users()["results"] == []


def test_keys_keep_tenants_and_writes_apart(
    mem0: SimpleNamespace, host: str, connect: Callable[[str], Any]
) -> None:
    """A tenant's key reads only its tenant; a read-only key cannot add; a wrong key is refused."""
    full = connect(FULL_KEY)
    mine = full.add("Erin's locker code is 4417.", user_id="erin")["results"][0]["id"]
    acme = connect(ACME_KEY)
    assert acme.get_all(filters={"user_id": "erin"})["count"] == 0  # acme's erin: nobody
    with pytest.raises(mem0.errors.AuthenticationError, match="may not act on"):
        acme.get(mine)
    reader = connect(READER_KEY)
    with pytest.raises(mem0.errors.AuthenticationError, match="may not write"):
        reader.add("nothing", user_id="erin")
    with httpx.Client() as own, pytest.raises(ValueError, match="valid API key"):
        mem0.MemoryClient(api_key="not-a-key-0123456789abcdef", host=host, client=own)


def test_async_memory_client_round_trip(mem0: SimpleNamespace, host: str) -> None:
    """The same calls through AsyncMemoryClient."""

    async def run() -> None:
        async with mem0.AsyncMemoryClient(api_key=ACME_KEY, host=host) as client:
            added = await client.add(ALICE_TURNS, user_id="frank", run_id="r9")
            memory_id = added["results"][0]["id"]
            found = await client.search("where do I live", filters={"user_id": "frank"})
            assert "Busan" in found["results"][0]["memory"]
            listed = await client.get_all(filters={"user_id": "frank"}, page=1, page_size=1)
            assert listed["count"] == 2 and len(listed["results"]) == 1
            assert (await client.get(memory_id))["run_id"] == "r9"
            await client.update(memory_id, text="I live in Daegu.")
            assert len(await client.history(memory_id)) == 2
            await client.batch_update([{"memory_id": memory_id, "metadata": {"city": "Daegu"}}])
            assert (await client.get(memory_id))["metadata"] == {"city": "Daegu"}
            names = {e["name"] for e in (await client.users())["results"]}
            assert {"frank", "r9"} <= names
            await client.delete(memory_id)
            await client.batch_delete([{"memory_id": added["results"][1]["id"]}])
            assert (await client.get_all(filters={"user_id": "frank"}))["count"] == 0
            await client.add("Frank is back.", user_id="frank")
            assert (await client.delete_all(user_id="frank"))["count"] == 1
            await client.add("Frank again.", user_id="frank")
            await client.delete_users(user_id="frank")
            assert (await client.get_all(filters={"user_id": "frank"}))["count"] == 0
            with pytest.raises(mem0.errors.ValidationError, match="extract facts"):
                await client.add("x", user_id="frank", infer=True)

    asyncio.run(run())


ONLY_U = {"user_id": "u"}
BY_CATEGORY = {**ONLY_U, "categories": {"in": ["a"]}}
HOOK = "http://127.0.0.1:9/"
TWO_USERS = {"OR": [{"user_id": "a"}, {"user_id": "b"}]}
REFUSED: list[tuple[str, Callable[[Any], Any], str]] = [
    ("infer", lambda c: c.add("x", user_id="u", infer=True), "does not run"),
    ("instructions", lambda c: c.add("x", user_id="u", custom_instructions="y"), "extraction"),
    ("categories", lambda c: c.add("x", user_id="u", custom_categories=[{"a": "b"}]), "verbatim"),
    ("graph", lambda c: c.add("x", user_id="u", enable_graph=True), "graph"),
    ("expiry", lambda c: c.add("x", user_id="u", expiration_date="2030-01-01"), "expire"),
    ("immutable", lambda c: c.add("x", user_id="u", immutable=True), "immutable"),
    ("search categories", lambda c: c.search("x", filters=ONLY_U, categories=["a"]), "categories"),
    ("filter categories", lambda c: c.search("x", filters=BY_CATEGORY), "categories"),
    ("two users", lambda c: c.search("x", filters=TWO_USERS), "own store"),
    ("any user", lambda c: c.get_all(filters={"user_id": "*"}), "own store"),
    ("feedback", lambda c: c.feedback("id", "POSITIVE"), "cites"),
    ("export", lambda c: c.create_memory_export("{}", user_id="u"), "model"),
    ("get export", lambda c: c.get_memory_export(user_id="u"), "model"),
    ("summary", lambda c: c.get_summary({"user_id": "u"}), "summaries"),
    ("profile", lambda c: c.get_profile("u"), "profiles"),
    ("generate profile", lambda c: c.generate_profile("u"), "profiles"),
    ("profile settings", lambda c: c.get_profile_settings(), "profiles"),
    ("update profile settings", lambda c: c.update_profile_settings(enabled=True), "profiles"),
    ("sample profiles", lambda c: c.sample_profiles(limit=2), "profiles"),
    ("profile job", lambda c: c.get_profile_job("j1"), "profiles"),
    ("project", lambda c: c.project.get(), "tenant"),
    ("new project", lambda c: c.project.create("p"), "tenant"),
    ("project members", lambda c: c.project.get_members(), "tenant"),
    ("get_project", lambda c: c.get_project(), "tenant"),
    ("update_project", lambda c: c.update_project(custom_instructions="x"), "tenant"),
    ("webhooks", lambda c: c.get_webhooks("default"), "webhooks"),
    ("new webhook", lambda c: c.create_webhook(HOOK, "w", "p", ["ADD"]), "webhooks"),
    ("update webhook", lambda c: c.update_webhook(1, name="w"), "webhooks"),
    ("delete webhook", lambda c: c.delete_webhook(1), "webhooks"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_what_we_do_not_do_is_mem0s_validation_error(
    mem0: SimpleNamespace,
    connect: Callable[[str], Any],
    name: str,
    call: Callable[[Any], Any],
    reason: str,
) -> None:
    """Each unsupported call: mem0's own ValidationError, carrying our reason (never a 404)."""
    client = connect(FULL_KEY)
    with pytest.raises(mem0.errors.ValidationError) as raised:
        call(client)
    assert reason in raised.value.message
    assert raised.value.debug_info["status_code"] == 400


def test_malformed_requests_are_4xx_with_a_message(
    mem0: SimpleNamespace, connect: Callable[[str], Any]
) -> None:
    """Bad ids, filters and bodies: mem0's ValidationError with what is wrong."""
    client = connect(FULL_KEY)
    with pytest.raises(mem0.errors.ValidationError, match="not a memory id"):
        client.get("not-an-id")
    with pytest.raises(mem0.errors.ValidationError, match="at least one"):
        client.search("x", filters={"metadata": {"a": 1}})
    with pytest.raises(mem0.errors.ValidationError, match="unknown operator"):
        client.search("x", filters={"user_id": "u", "agent_id": {"like": "a%"}})
    with pytest.raises(mem0.errors.ValidationError, match="at least one"):
        client.add("x")
    with pytest.raises(mem0.errors.ValidationError, match="kept by this server"):
        client.add("x", user_id="u", metadata={"agent_id": "sneaky"})
    with pytest.raises(mem0.errors.ValidationError, match="top_k"):
        client.search("x", filters={"user_id": "u"}, top_k=0)
    with pytest.raises(mem0.errors.ValidationError, match="at least one filter"):
        client.delete_all()

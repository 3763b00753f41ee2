"""Vectors on a Chroma server: chosen by --chroma-url, the variable or the profile; one collection
per namespace; forgetting reaches the server. Against a real `chroma run` on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from disclosure import load_profile
from disclosure.faces.cli import main
from disclosure.service.pool import ControllerPool
from disclosure.service.vector_server import CHROMA_URL_VARIABLE, chroma_url_of, with_chroma_url
from disclosure.storage.namespaces import namespace_dir
from tiers.chroma_client import open_client, release_client
from tiers.chroma_server import ChromaServer
from tiers.config import WarmConfig
from tiers.errors import InvalidInputError
from tiers.memory import Memory
from tiers.warm_layout import collection_for, parse_chroma_url

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def memories(user: str, facts: list[str]) -> list[Memory]:
    return [
        Memory(
            id=f"{user}-{n}",
            content=fact,
            timestamp=START + timedelta(minutes=n),
            session_id=f"{user}-s1",
            speaker=user,
        )
        for n, fact in enumerate(facts)
    ]


ALICE = ["Alice keeps her bicycle in the basement storage room", "Alice's sister lives in Lyon"]
BOB = ["Bob parks his motorbike behind the bakery", "Bob's brother studies medicine in Porto"]


def server_collections(server: ChromaServer) -> dict[str, int]:
    """The collections on the server and their counts (a client of its own, released)."""
    client = open_client(None, WarmConfig(backend="server", port=server.port))
    try:
        return {c.name: client.get_collection(c.name).count() for c in client.list_collections()}
    finally:
        release_client(client)


def server_ids(server: ChromaServer, collection: str) -> list[str]:
    client = open_client(None, WarmConfig(backend="server", port=server.port))
    try:
        return sorted(client.get_collection(collection).get(include=[])["ids"])
    finally:
        release_client(client)


@pytest.fixture
def pool(chroma_server: ChromaServer, tmp_path: Path) -> Iterator[ControllerPool]:
    with ControllerPool(
        "default", root=tmp_path / "root", chroma_url=chroma_server.url, max_open=4
    ) as pool:
        yield pool


def test_urls_parse_into_warm_settings_and_bad_ones_say_why() -> None:
    assert parse_chroma_url("http://10.0.0.7:9000") == {
        "backend": "server",
        "host": "10.0.0.7",
        "port": 9000,
        "ssl": False,
    }
    assert parse_chroma_url("https://chroma.internal")["port"] == 443
    for bad in ("chroma:8000", "ftp://h:1", "http://h:8000/api", "http://h:99999", "http://"):
        with pytest.raises(InvalidInputError, match="Chroma URL"):
            parse_chroma_url(bad)


def test_the_option_beats_the_variable_which_beats_the_profile() -> None:
    env = {CHROMA_URL_VARIABLE: "http://10.1.1.1:7000"}
    assert chroma_url_of("http://h:1", env) == "http://h:1"
    assert chroma_url_of(None, env) == "http://10.1.1.1:7000"
    assert chroma_url_of(None, {}) is None
    profile = load_profile("default")
    assert with_chroma_url(profile, None) is profile
    warm = with_chroma_url(profile, chroma_url_of(None, env)).tiers.warm
    assert (warm.backend, warm.host, warm.port) == ("server", "10.1.1.1", 7000)
    assert warm.embedder == profile.tiers.warm.embedder  # the rest of the section is kept


def test_the_variable_reaches_the_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chroma_server: ChromaServer
) -> None:
    monkeypatch.setenv(CHROMA_URL_VARIABLE, chroma_server.url)
    with ControllerPool("default", root=tmp_path) as pool:
        warm = pool.profile.tiers.warm
        assert (warm.backend, warm.port) == ("server", chroma_server.port)


def test_each_namespace_has_its_own_collection_and_sees_only_its_memories(
    pool: ControllerPool, chroma_server: ChromaServer
) -> None:
    alice, bob = pool.namespace(user="alice"), pool.namespace(user="bob")
    with pool.lease(alice) as a, pool.lease(bob) as b:
        a.ingest(memories("alice", ALICE))
        b.ingest(memories("bob", BOB))
        a.store.flush()
        b.store.flush()
        assert a.store.stats().pending == 0 and b.store.stats().pending == 0
        hits_a = a.store.search("warm", "where is the motorbike parked", 5)
        hits_b = b.store.search("warm", "where is the bicycle stored", 5)
        assert hits_a and {h.id for h in hits_a} <= {"alice-0", "alice-1"}
        assert hits_b and {h.id for h in hits_b} <= {"bob-0", "bob-1"}
        text = a.disclose("where does Bob park the motorbike?", level="comprehensive").text
        assert "motorbike" not in text
    warm = pool.profile.tiers.warm
    names = {collection_for(warm, namespace_dir(pool.root, ns)) for ns in (alice, bob)}
    on_server = server_collections(chroma_server)
    assert names <= set(on_server)
    counts = sorted(on_server[n] for n in names)
    assert counts == [2, 2]
    local = namespace_dir(pool.root, alice) / "warm" / "chroma.sqlite3"
    assert not local.exists()  # nothing of Chroma's in the data directory


def test_forgetting_removes_the_vector_from_the_server(
    pool: ControllerPool, chroma_server: ChromaServer
) -> None:
    alice = pool.namespace(user="alice")
    name = collection_for(pool.profile.tiers.warm, namespace_dir(pool.root, alice))
    with pool.lease(alice) as a:
        a.ingest(memories("alice", ALICE))
        a.store.flush()
        assert server_ids(chroma_server, name) == ["alice-0", "alice-1"]
        report = a.forget(ids=["alice-0"])
        assert report.count == 1
        a.store.flush()
        assert a.store.stats().pending == 0
    assert server_ids(chroma_server, name) == ["alice-1"]


def test_cli_chroma_url_and_forget_all_drop_the_namespace_collection(
    chroma_server: ChromaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("TIERED_DISCLOSURE_NO_SERVICE", "1")
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(m.to_json() for m in memories("carol", ALICE)) + "\n")
    common = ["--root", str(tmp_path / "root"), "--user", "carol"]
    common += ["--chroma-url", chroma_server.url]
    assert main(["ingest", str(source), *common]) == 0
    with ControllerPool("default", root=tmp_path / "root", chroma_url=chroma_server.url) as pool:
        directory = namespace_dir(pool.root, pool.namespace(user="carol"))
        name = collection_for(pool.profile.tiers.warm, directory)
    assert server_collections(chroma_server)[name] == 2
    assert main(["forget", "--all", "--yes", *common]) == 0
    assert name not in server_collections(chroma_server)
    assert not directory.exists()


def test_every_store_command_takes_the_chroma_url() -> None:
    from disclosure.faces.cli import build_parser

    parser = build_parser()
    url = "http://10.0.0.9:8000"
    for argv in (
        ["serve"],
        ["serve", "--service"],
        ["service", "start"],
        ["ingest", "f.jsonl"],
        ["query", "q"],
        ["export"],
        ["import", "f.jsonl"],
        ["forget", "--all"],
    ):
        assert parser.parse_args([*argv, "--chroma-url", url]).chroma_url == url

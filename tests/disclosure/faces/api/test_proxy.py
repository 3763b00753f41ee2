"""The OpenAI-compatible proxy, for real: the official ``openai`` SDK as the client, the service
under uvicorn on loopback, and a small stand-in upstream (a local HTTP server) behind it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")
uvicorn = pytest.importorskip("uvicorn")

from disclosure import ControllerPool  # noqa: E402
from disclosure.faces.api import create_app  # noqa: E402
from disclosure.faces.memories import Memories  # noqa: E402
from disclosure.sample import load_sample_conversation  # noqa: E402
from tests.disclosure.faces.upstream import UPSTREAM_KEY, Upstream, start_upstream  # noqa: E402

DANA = {"X-Disclosure-User": "dana", "X-Disclosure-Level": "comprehensive"}
SERVICE_KEY = "service-key-0123456789abcdef"
QUESTION = "Which database did we pick for billing, and who writes the migration?"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    state, stop = start_upstream()
    yield state
    stop()


def serve(app: Any) -> tuple[str, Callable[[], None]]:
    """``app`` under uvicorn on a free loopback port; returns its URL and a stopper."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=30)

    return f"http://127.0.0.1:{port}", stop


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerPool]:
    with ControllerPool("default", root=tmp_path_factory.mktemp("proxy")) as pool:
        with pool.lease(pool.namespace(user="dana")) as controller:
            controller.ingest(load_sample_conversation())
        yield pool


@pytest.fixture(scope="module")
def proxy(pool: ControllerPool, upstream: Upstream) -> Iterator[str]:
    url, stop = serve(create_app(pool=pool, upstream=upstream.url))
    yield url
    stop()


def client(base: str, **headers: str) -> Any:
    return openai.OpenAI(
        base_url=f"{base}/v1", api_key=UPSTREAM_KEY, default_headers=headers, max_retries=0
    )


def recorded(pool: ControllerPool, session: str, *, wait: float = 10.0) -> list[Any]:
    """The memories stored in dana's session (waiting a little: recording ends the call)."""
    deadline = time.monotonic() + wait
    while True:
        items = Memories(pool).get_all(user_id="dana", session_id=session).items
        if len(items) >= 2 or time.monotonic() > deadline:
            return items
        time.sleep(0.05)


def test_the_sdk_gets_the_upstream_answer_with_memory_injected(
    proxy: str, upstream: Upstream, pool: ControllerPool
) -> None:
    """Memory goes in as a system message; the caller's key goes to the upstream; the SDK
    parses the unchanged answer; both turns are recorded in the header's namespace."""
    sdk = client(proxy, **DANA, **{"X-Disclosure-Session": "p1"})
    response = sdk.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": QUESTION}]
    )
    assert response.id == "chatcmpl-1" and response.usage is not None
    reply = response.choices[0].message.content
    assert reply is not None and "[mem:" in reply  # the stand-in answered from the memory
    sent = upstream.requests[-1]
    assert sent["headers"]["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert not any(k.lower().startswith("x-disclosure") for k in sent["headers"])
    injected = sent["body"]["messages"][:-1]  # the memory, in whatever messages carry it
    assert injected and any("Postgres" in str(m["content"]) for m in injected)
    assert sent["body"]["messages"][-1] == {"role": "user", "content": QUESTION}
    stored = recorded(pool, "p1")
    assert [m.content for m in stored] == [QUESTION, reply]


def test_the_user_field_names_the_namespace(proxy: str, upstream: Upstream) -> None:
    """Without headers, OpenAI's own ``user`` field picks the user; another user sees nothing."""
    sdk = client(proxy, **{"X-Disclosure-Level": "comprehensive"})
    sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], user="dana"
    )
    assert any("Postgres" in str(m["content"]) for m in upstream.requests[-1]["body"]["messages"])
    sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], user="eve"
    )
    assert upstream.requests[-1]["body"]["messages"] == [{"role": "user", "content": QUESTION}]


def test_a_stream_passes_through_and_is_recorded(
    proxy: str, upstream: Upstream, pool: ControllerPool
) -> None:
    sdk = client(proxy, **DANA, **{"X-Disclosure-Session": "p2"})
    stream = sdk.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert "[mem:" in text
    stored = recorded(pool, "p2")
    assert [m.content for m in stored] == [QUESTION, text]
    assert "partial" not in stored[1].metadata


def test_a_stream_closed_early_keeps_the_question_and_the_partial_reply(
    proxy: str, upstream: Upstream, pool: ControllerPool
) -> None:
    upstream.chunk_delay = 0.05
    try:
        sdk = client(proxy, **DANA, **{"X-Disclosure-Session": "p3"})
        stream = sdk.chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
        first = next(iter(stream))
        assert first.choices[0].delta.content
        stream.close()
    finally:
        upstream.chunk_delay = 0.0
    deadline = time.monotonic() + 15
    stored = recorded(pool, "p3")
    while time.monotonic() < deadline and not (
        len(stored) == 2 and stored[1].metadata.get("partial")
    ):
        time.sleep(0.1)
        stored = recorded(pool, "p3", wait=0)
    assert stored[0].content == QUESTION
    assert stored[1].metadata.get("partial") is True
    full = upstream.model.answer(upstream.requests[-1]["body"]["messages"])
    assert full.startswith(stored[1].content) and len(stored[1].content) < len(full)


def test_upstream_errors_come_back_unchanged_and_record_nothing(
    proxy: str, pool: ControllerPool
) -> None:
    wrong = openai.OpenAI(
        base_url=f"{proxy}/v1",
        api_key="sk-wrong",
        default_headers={"X-Disclosure-User": "dana", "X-Disclosure-Session": "p4"},
        max_retries=0,
    )
    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 401 and "bad key" in str(caught.value)
    assert recorded(pool, "p4", wait=0.3) == []


def test_bad_requests_and_a_dead_upstream_are_clear_errors(pool: ControllerPool) -> None:
    url, stop = serve(create_app(pool=pool, upstream="http://127.0.0.1:9/v1"))
    try:
        sdk = client(url, **{"X-Disclosure-User": "dana"})
        with pytest.raises(openai.APIStatusError) as dead:
            sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert dead.value.status_code == 502
        assert dead.value.body["code"] == "upstream_unavailable"  # type: ignore[index]
        typo = client(url, **{"X-Disclosure-Usr": "dana"})
        with pytest.raises(openai.UnprocessableEntityError, match="X-Disclosure-Usr"):
            typo.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.UnprocessableEntityError, match="messages"):
            sdk.chat.completions.create(model="m", messages=[])
    finally:
        stop()


def test_with_service_keys_the_upstream_key_is_not_ours(
    pool: ControllerPool, upstream: Upstream
) -> None:
    """The service key goes in X-API-Key; Authorization is the upstream's, never checked."""
    url, stop = serve(create_app(pool=pool, upstream=upstream.url, api_keys=[SERVICE_KEY]))
    try:
        before = len(upstream.requests)
        without = client(url, **{"X-Disclosure-User": "dana"})
        with pytest.raises(openai.AuthenticationError):
            without.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert len(upstream.requests) == before  # refused before anything was forwarded
        keyed = client(url, **{"X-Disclosure-User": "dana", "X-API-Key": SERVICE_KEY})
        keyed.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert "x-api-key" not in upstream.requests[-1]["headers"]
    finally:
        stop()

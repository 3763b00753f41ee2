"""Fixtures for the service layer: a chat model stand-in, lean profiles, the sample store."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from disclosure import Profile, load_profile

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
CITATION = re.compile(r"\[(mem:[A-Za-z0-9_-]+)\]")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "we", "did", "do", "what", "which", "who", "is", "for", "of", "to", "on"}


class ChatModel:
    """A stand-in for a chat model: a plain function of the messages, no network.

    It answers the user's last question from the memory context it was given: it picks the
    context line sharing the most words with the question and quotes it with its citation, or
    says it does not know. It keeps every request it got, so tests can see what was injected.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def answer(self, messages: Sequence[Mapping[str, Any]]) -> str:
        question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        wanted = set(_WORD.findall(question.lower())) - _STOP
        best, overlap = None, 0
        for message in messages:  # the context: a system message or a marked user block
            content = message["content"]
            if message["role"] != "system" and not content.startswith("<memory-reference>"):
                continue
            for line in content.splitlines():
                if not CITATION.search(line):
                    continue
                shared = len(wanted & set(_WORD.findall(line.lower())))
                if shared > overlap:
                    best, overlap = line, shared
        if best is None:
            return "I don't know; nothing in memory covers that."
        citation = CITATION.search(best)
        assert citation is not None
        quoted = CITATION.sub("", best).strip()
        return f"From memory [{citation.group(1)}]: {quoted}"

    def create(self, *, model: str, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        """``client.chat.completions.create``'s shape; an OpenAI-style dict response."""
        self.requests.append({"model": model, "messages": messages, **kwargs})
        text = self.answer(messages)
        if kwargs.get("stream"):
            return _chunks(text)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    async def acreate(self, *, model: str, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        """The async twin (``AsyncOpenAI().chat.completions.create``)."""
        self.requests.append({"model": model, "messages": messages, **kwargs})
        text = self.answer(messages)
        if kwargs.get("stream"):
            return _achunks(text)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    @property
    def last_messages(self) -> list[dict[str, Any]]:
        return list(self.requests[-1]["messages"])


def _chunks(text: str) -> Iterator[dict[str, Any]]:
    for start in range(0, len(text), 7):
        yield {"choices": [{"index": 0, "delta": {"content": text[start : start + 7]}}]}
    yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


async def _achunks(text: str) -> AsyncIterator[dict[str, Any]]:
    for chunk in _chunks(text):
        yield chunk


@pytest.fixture
def chat_model() -> ChatModel:
    return ChatModel()


def make_lean_profile() -> Profile:
    """The default profile without a warm tier: quick to open, for plumbing tests."""
    data = load_profile("default").model_dump(mode="json")
    data["name"] = "lean"
    data["tiers"]["warm"]["embedder"] = "none"
    data["isolation"]["max_open"] = 2
    return Profile.model_validate(data)


@pytest.fixture(scope="session")
def lean_profile() -> Profile:
    return make_lean_profile()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"

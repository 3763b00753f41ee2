"""Shared fixtures for the formatter tests: the real cl100k counter and the sample conversation."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pytest

from disclosure.sample import load_sample_conversation
from formatters import Layer, RenderItem, TokenCounter, get_token_counter
from tiers.memory import Memory

NOW = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)


def cite(memory_id: str) -> str:
    """A citation built by hand the way the archive builds one (sha256, base64url, 6 chars)."""
    digest = hashlib.sha256(memory_id.encode("utf-8")).digest()
    return "mem:" + base64.urlsafe_b64encode(digest).decode("ascii")[:6]


@pytest.fixture(scope="session")
def now() -> datetime:
    """The query time used where relative ages matter: after the sample's last session."""
    return NOW


@pytest.fixture(scope="session", name="cite")
def cite_fixture() -> Callable[[str], str]:
    return cite


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return get_token_counter("cl100k_base")


@pytest.fixture(scope="session")
def sample() -> list[Memory]:
    return load_sample_conversation()


MakeItem = Callable[..., RenderItem]


@pytest.fixture(scope="session")
def make_item(sample: list[Memory]) -> MakeItem:
    """Build a RenderItem for a sample memory (by id), with neighbours from its session."""
    by_id = {m.id: m for m in sample}

    def build(
        memory: Memory | str,
        layer: Layer = Layer.INDEX,
        *,
        score: float = 0.5,
        window: int = 0,
        citations: bool = True,
        neighbours: Sequence[Memory] | None = None,
    ) -> RenderItem:
        target = by_id[memory] if isinstance(memory, str) else memory
        if neighbours is None:
            session = [m for m in sample if m.session_id == target.session_id]
            at = next((i for i, m in enumerate(session) if m.id == target.id), 0)
            neighbours = [
                m for m in session[max(0, at - window) : at + window + 1] if m.id != target.id
            ]
        return RenderItem(
            memory=target,
            citation=cite(target.id) if citations else "",
            score=score,
            tier="warm",
            layer=layer,
            neighbours=tuple(neighbours),
            neighbour_citations=tuple(cite(m.id) for m in neighbours) if citations else (),
        )

    return build

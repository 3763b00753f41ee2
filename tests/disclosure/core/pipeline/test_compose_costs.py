"""The shortlist's cost of a candidate: the archive's count of its line when it has one, else
counted from its content, and only then (a real store and the real token counter)."""

from __future__ import annotations

from pathlib import Path

from disclosure.core.controller import DisclosureController
from disclosure.core.pipeline.compose import _LINE_OVERHEAD
from disclosure.core.pipeline.fusion import Candidate
from disclosure.core.profiles import Profile
from formatters import get_token_counter
from tiers.memory import Memory


class CountingCounter:
    """The profile's real counter, recording what it was asked to count."""

    def __init__(self, encoding: str) -> None:
        self.inner = get_token_counter(encoding)
        self.encoding, self.exact = self.inner.encoding, self.inner.exact
        self.asked: list[str] = []

    def __call__(self, text: str) -> int:
        self.asked.append(text)
        return self.inner(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)


def test_costs_come_from_the_archive_and_count_only_what_it_lacks(
    tmp_path: Path, lean_profile: Profile
) -> None:
    stored = [
        Memory(id=f"m{i}", content=f"we painted the garden shed {'green ' * i}", session_id="s")
        for i in range(5)
    ]
    loose = Memory(id="loose", content="a memory the archive never saw, with its own words")
    with DisclosureController.from_profile(lean_profile, data_dir=tmp_path / "d") as controller:
        controller.ingest(stored)
        counter = CountingCounter(lean_profile.tokens.encoding)
        controller.composer.counter = counter  # type: ignore[assignment]
        hits = [Candidate(m, 0.5, 0.5, "cold", ("cold",)) for m in [*stored, loose]]
        costs = controller.composer._costs(hits)
        archive = controller.store.line_tokens([m.id for m in stored])
    assert set(archive) == {m.id for m in stored}
    assert costs == {
        **{m.id: archive[m.id] + _LINE_OVERHEAD for m in stored},
        "loose": counter.inner(loose.content) + _LINE_OVERHEAD,
    }
    assert counter.asked == [loose.content]  # the archive's counts were not counted again

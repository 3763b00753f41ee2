"""Plugged summarizers: a local callable, and an OpenAI-compatible endpoint served on loopback;
a failing one falls back to the extractive summary with a warning. And a real dev conversation."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from disclosure import DisclosureController, Memory
from disclosure.consolidation import SummaryText
from disclosure.evaluation.experiment import default_locomo_path
from disclosure.evaluation.locomo import load_locomo
from tests.disclosure.consolidation.conftest import hand_made, profile_with


def test_a_local_callable_writes_the_paragraph_and_the_full_text_stays_cited(
    tmp_path: Path,
) -> None:
    seen: list[list[str]] = []

    def headline(memories: Sequence[Memory]) -> str:
        seen.append([m.id for m in memories])
        speakers = sorted({m.speaker or "?" for m in memories})
        return f"{' and '.join(speakers)} talked in {len(memories)} turns. More detail follows."

    with DisclosureController(profile_with(), data_dir=tmp_path, summarizer=headline) as controller:
        controller.ingest(hand_made())
        controller.consolidate(include_working_set=True)
        _, migration, offsite = controller.consolidation.of_session("s1")
    assert seen == [["m1", "m2", "m3", "m4"], ["m5", "m6", "m7"], ["n1"]]
    assert migration.paragraph == "Dana and Priya talked in 4 turns. More detail follows."
    assert migration.index_line.endswith(": Dana and Priya talked in 4 turns.")
    assert migration.summarizer == "headline"
    assert offsite.full_text.splitlines()[0].endswith(
        "Marco: The team offsite is in Lisbon on May 20."
    )


def test_a_callable_may_return_all_three_levels(tmp_path: Path) -> None:
    def levels(memories: Sequence[Memory]) -> SummaryText:
        return SummaryText(index_line=f"{len(memories)} turns", paragraph="A short one.")

    with DisclosureController(profile_with(), data_dir=tmp_path, summarizer=levels) as controller:
        controller.ingest(hand_made())
        controller.consolidate(include_working_set=True)
        topic = controller.consolidation.of_session("s1")[1]
    assert (topic.index_line, topic.paragraph) == ("4 turns", "A short one.")
    assert topic.full_text.count("\n") == 3


class _Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    status = 200

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "body": body})  # fmt: skip
        transcript = body["messages"][-1]["content"]
        reply = {"choices": [{"message": {"role": "assistant",
                 "content": f"Summary of {transcript.count(chr(10)) + 1} lines."}}]}  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.requests = []
    _Endpoint.status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_an_openai_compatible_endpoint_from_the_profile(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUMMARY_KEY", "sk-local")
    summarizer = {
        "kind": "openai",
        "base_url": endpoint,
        "model": "tiny",
        "api_key_env": "SUMMARY_KEY",
    }
    profile = profile_with(consolidation={"summarizer": summarizer})
    with DisclosureController(profile, data_dir=tmp_path) as controller:
        controller.ingest(hand_made())
        report = controller.consolidate(include_working_set=True)
        topic = controller.consolidation.of_session("s1")[1]
        assert report.warnings == ()
        assert topic.paragraph == "Summary of 4 lines." and topic.summarizer == "openai"
        first = _Endpoint.requests[0]
        assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-local"
        assert first["body"]["model"] == "tiny"
        assert (
            "Priya: I will write the Postgres migration" in first["body"]["messages"][-1]["content"]
        )
        # the endpoint fails: the extractive paragraph stays, with a warning
        _Endpoint.status = 500
        controller.ingest([hand_made()[0].replace(content="We move billing to Postgres 17.")])
        failed = controller.consolidate(include_working_set=True)
        assert failed.warnings and "kept the extractive one" in failed.warnings[0]
        topic = controller.consolidation.of_session("s1")[1]
        assert topic.summarizer == "extractive" and "Postgres 17" in topic.paragraph


def test_a_real_dev_conversation_consolidates_by_session(tmp_path: Path) -> None:
    path = default_locomo_path()
    if not path.is_file():
        pytest.skip(f"the LoCoMo dev split is not at {path}")
    conversation = load_locomo(path).conversations[0]
    with DisclosureController(profile_with(), data_dir=tmp_path) as controller:
        controller.ingest(conversation.memories)
        report = controller.consolidate()
        summaries = controller.consolidation.summaries
        hot = set(controller.store.hot.ids())
        sessions = {m.session_id for m in conversation.memories if m.id not in hot}
        assert set(report.sessions) == sessions and report.memories == len(
            conversation.memories
        ) - len(hot)
        for session in sessions:
            found = summaries.of_session(session)
            assert found[0].kind == "session" and len(found) >= 2
            covered = [i for s in found[1:] for i in s.sources]
            assert len(covered) == len(set(covered)) == len(found[0].sources)  # a partition
            for summary in found:
                assert len(summary.index_line) <= 160 and summary.index_line.startswith(session)
                assert summary.paragraph and "[mem:" in summary.full_text
        assert controller.consolidate().written == 0

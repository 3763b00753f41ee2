"""Metrics at /metrics, request ids in headers and logs, OpenTelemetry spans per stage."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from disclosure import ControllerPool, Profile
from disclosure.faces.api import create_app
from disclosure.faces.api.observability import JsonFormatter, RequestIdFilter
from tests.disclosure.faces.api.conftest import API_KEY


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one Prometheus sample (0 if absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") + r" (\S+)"
    found = re.search(r"^" + pattern + r"$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_metrics_count_requests_errors_and_disclosures(lean_client: TestClient) -> None:
    c = lean_client
    c.post("/v1/memories?user=ann", json={"text": "Ann keeps bees in Jeju."})
    c.post(
        "/v1/disclose?user=ann", json={"query": "Where are Ann's bees?", "level": "comprehensive"}
    )
    c.get("/v1/memories/nope", params={"user": "ann"})
    c.get("/v1/memories/also-nope", params={"user": "ann"})
    c.post("/v1/disclose", json={})
    text = c.get("/metrics").text
    assert (
        sample(
            text,
            "disclosure_requests_total",
            method="GET",
            route="/v1/memories/{ref:path}",
            status="404",
        )
        == 2
    )  # the template, not the raw ids
    assert "also-nope" not in text and "Jeju" not in text and "ann" not in text
    assert sample(text, "disclosure_errors_total", code="not_found") == 2
    assert sample(text, "disclosure_errors_total", code="validation_error") == 1
    assert sample(text, "disclosure_stage_duration_seconds_count", stage="analyze") == 1
    assert sample(text, "disclosure_stage_duration_seconds_count", stage="total") == 1
    assert sample(text, "disclosure_tokens_disclosed_count") == 1
    assert sample(text, "disclosure_tokens_disclosed_sum") > 0
    assert sample(text, "disclosure_budget_used_ratio_count") == 1
    assert sample(text, "disclosure_savings_ratio_count") == 1
    assert sample(text, "disclosure_open_namespaces") == 1
    assert "disclosure_pending_embeddings 0.0" in text
    assert "disclosure_request_duration_seconds_bucket" in text


def test_pending_embeddings_are_read_when_scraped(tmp_path: Path) -> None:
    """With a warm tier, memories waiting for their vector show in the gauge."""
    with ControllerPool("default", root=tmp_path) as pool, TestClient(create_app(pool=pool)) as c:
        with pool.lease(pool.namespace(user="ann")) as controller:
            c.post("/v1/memories?user=ann", json={"text": "one"})
            pending = controller.store.pending()
        text = c.get("/metrics").text
        assert sample(text, "disclosure_pending_embeddings") == pending


def test_metrics_are_behind_the_api_keys(keyed_client: TestClient) -> None:
    assert keyed_client.get("/metrics").status_code == 401
    answer = keyed_client.get("/metrics", headers={"X-API-Key": API_KEY})
    assert answer.status_code == 200 and "disclosure_requests_total" in answer.text


def test_every_answer_has_a_request_id_that_the_logs_carry(
    lean_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A caller's X-Request-ID is kept (if plain) and logged; otherwise one is made."""
    handler_filter = RequestIdFilter()
    caplog.handler.addFilter(handler_filter)
    caplog.set_level(logging.INFO, logger="disclosure")
    given = lean_client.get("/health", headers={"X-Request-ID": "req-42"})
    assert given.headers["x-request-id"] == "req-42"
    made = lean_client.get("/health", headers={"X-Request-ID": "bad id\twith tab"})
    assert re.fullmatch(r"[0-9a-f]{16}", made.headers["x-request-id"])
    ours = [r for r in caplog.records if getattr(r, "request_id", None) == "req-42"]
    assert ours and "GET /health -> 200" in ours[0].getMessage()
    line = json.loads(JsonFormatter().format(ours[0]))
    assert line["request_id"] == "req-42" and line["level"] == "INFO"
    assert line["message"].startswith("GET /health -> 200")


def test_stages_are_opentelemetry_spans(lean_profile: Profile, tmp_path: Path) -> None:
    """With the SDK installed and a provider set, each disclosure stage is a span."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from disclosure.core.pipeline import trace as trace_module

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    original = trace_module._tracer
    trace_module._tracer = lambda: tracer  # type: ignore[assignment]
    try:
        with (
            ControllerPool(lean_profile, root=tmp_path) as pool,
            pool.lease(pool.namespace(user="ann")) as controller,
        ):
            controller.ingest([{"id": "a", "content": "Ann keeps bees.", "session_id": "s"}])
            with tracer.start_as_current_span("request"):
                result = controller.disclose("bees?", level="comprehensive")
    finally:
        trace_module._tracer = original  # type: ignore[assignment]
    spans = {s.name: s for s in exporter.get_finished_spans()}
    stages = {name for name in result.timings_ms if name != "total"}
    assert {f"disclosure.{name}" for name in stages} <= set(spans)
    request = spans["request"]
    analyze = spans["disclosure.analyze"]
    assert analyze.parent is not None and analyze.parent.span_id == request.context.span_id
    assert all(s.end_time >= s.start_time for s in spans.values())

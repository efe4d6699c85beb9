"""What an operator sees of a request (issue 56): its trace joined to the caller's, with a span for each Redis
script, and its log line with its fields and trace id; a browser may send the trace's headers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE
from tests.support.serving import _pyramide, serving
from tests.support.waiting import eventually
from tests.support.webhooks import Receiver, as_user, receiving

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
ORIGIN = "https://game.example"


def test_a_browser_may_send_its_trace_and_resume_a_stream(settings: Settings) -> None:
    """A front end on an allowed origin sends `traceparent` (and `tracestate`) to join its trace, and
    `Last-Event-ID` to resume a live stream: the preflight allows them (it was 403 `cors_origin_not_allowed`)."""
    app = create_app(settings.but(http={"cors_origins": (ORIGIN,)}))
    with TestClient(app, raise_server_exceptions=False) as client:
        asked = "traceparent, tracestate, last-event-id, authorization"
        preflight = client.options(
            "/v1/games/00000000-0000-0000-0000-000000000000/stream",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": asked},
        )
    assert preflight.status_code == 204, preflight.text
    allowed = {h.strip().lower() for h in preflight.headers["access-control-allow-headers"].split(",")}
    assert {"traceparent", "tracestate", "last-event-id"} <= allowed


def test_an_unknown_span_exporter_is_refused_at_start() -> None:
    """`OTEL_TRACES_EXPORTER` is OpenTelemetry's variable, not the service's: any `OTEL_*` is let through, but an
    exporter that does not exist is refused at once (exit 2), not by each worker as it starts."""
    refused = _pyramide("serve", "--port", "1", env={"OTEL_TRACES_EXPORTER": "zipkin"})
    assert refused.returncode == 2, refused.stderr
    assert "OTEL_TRACES_EXPORTER: no span exporter 'zipkin'" in refused.stderr


def _collected(collector: Receiver) -> set[str]:
    """The trace ids (hex) of the spans the OTLP collector received."""
    found = set()
    for headers, body in list(collector.got):
        assert headers["content-type"] == "application/x-protobuf"
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            found |= {span.trace_id.hex() for scope in resource.scope_spans for span in scope.spans}
    return found


@pytest.mark.slow
def test_a_traced_request_joins_the_callers_trace_in_its_spans_and_its_log_line(tmp_path: Path) -> None:
    """`pyramide serve` with `OTEL_TRACES_EXPORTER=console,otlp`: an app's request carrying a `traceparent` is a
    server span of the caller's trace, named by its route, with a child span for each Redis script it ran, written
    on standard output and sent to an OTLP collector; its log line has the method, the route (not the path), the
    status, the app, the duration and the same trace id."""
    with receiving() as otlp:
        _traced_request(tmp_path, otlp)


def _traced_request(tmp_path: Path, otlp: Receiver) -> None:
    env = {
        "PYRAMIDE_OPERATOR_KEY": "traces-test-operator-key-0123456789abcdef",
        "OTEL_TRACES_EXPORTER": "console,otlp",
        "OTEL_SERVICE_NAME": "pyramide-traced",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp.port}",
    }
    operator = {"Authorization": f"Bearer {env['PYRAMIDE_OPERATOR_KEY']}"}
    with (
        serving(tmp_path / "data", tmp_path, "--workers", "1", env=env) as served,
        httpx.Client(base_url=served.url, timeout=30) as http,
    ):
        made = http.post("/v1/admin/apps", json={"name": "Kártya Klub", "scopes": ["players"]}, headers=operator)
        key, app = made.json()["key"], made.json()["id"]
        traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
        game = http.post(
            "/v1/games", json={"code": EASY_CODE}, headers={**as_user(key, "u"), "traceparent": traceparent}
        )
        assert game.status_code == 201, game.text
        assert http.head("/health/live").status_code == 200

        def exported() -> list[dict[str, Any]]:
            spans = [s for s in served.lines() if s.get("context", {}).get("trace_id") == f"0x{TRACE_ID}"]
            assert any(s["kind"] == "SpanKind.SERVER" for s in spans), "the request's span exported"
            return spans

        spans = eventually(exported, 15, what="the request's spans")
        eventually(lambda: TRACE_ID in _collected(otlp), 15, what="the request's spans at the OTLP collector")
        lines = served.lines()
    request = next(s for s in spans if s["kind"] == "SpanKind.SERVER")
    assert request["name"] == "POST /v1/games" and request["parent_id"] == f"0x{PARENT_ID}"
    assert request["resource"]["attributes"]["service.name"] == "pyramide-traced"
    scripts = [s for s in spans if s["name"].startswith("redis ")]
    assert scripts and all(s["parent_id"] == request["context"]["span_id"] for s in scripts), spans
    assert "redis game_create" in {s["name"] for s in scripts}, [s["name"] for s in scripts]
    line = next(line for line in lines if line.get("logger") == "pyramide.request" and line.get("trace_id") == TRACE_ID)
    assert line["span_id"] == request["context"]["span_id"].removeprefix("0x")
    assert (line["method"], line["route"], line["status"], line["app"]) == ("POST", "/v1/games", 201, app)
    assert isinstance(line["duration_ms"], float) and line["request_id"]
    untold = next(line for line in lines if line.get("route") == "/v1/admin/apps")
    assert "trace_id" in untold, "every request is traced, with or without a traceparent"
    head = next(line for line in lines if line.get("method") == "HEAD")
    assert head["route"] == "/health/live", "a HEAD answered as its GET is logged with its route"

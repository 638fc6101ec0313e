"""OTLP export against a collector: a small in-test OTLP/HTTP receiver gets the spans and metrics of a served search and call.

The receiver decodes what it is sent as the OTLP specification allows: protobuf (with opentelemetry-proto, which
the ``[otel]`` extra installs) or the JSON protocol. The replica is started with a minute-long batch delay, so the
spans reach the receiver only because a drained replica flushes its exporters before it exits.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fleet_support import Replica, call

pytestmark = pytest.mark.slow


def decode(content_type: str, body: bytes, kind: str) -> dict[str, Any]:
    """One OTLP/HTTP export request as the OTLP JSON shape (``resourceSpans`` / ``resourceMetrics``)."""
    if content_type.startswith("application/json"):
        decoded: dict[str, Any] = json.loads(body)
        return decoded
    from google.protobuf.json_format import MessageToDict  # noqa: PLC0415 - with opentelemetry-proto
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: PLC0415
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: PLC0415

    message = ExportTraceServiceRequest() if kind == "traces" else ExportMetricsServiceRequest()
    message.ParseFromString(body)
    return MessageToDict(message)


class Collector:
    """Export requests received at /v1/traces and /v1/metrics, decoded."""

    def __init__(self) -> None:
        self.received: dict[str, list[dict[str, Any]]] = {"traces": [], "metrics": []}
        self.lock = threading.Lock()

    def spans(self) -> list[dict[str, Any]]:
        """Every span received, its attributes flattened to ``{key: value}``."""
        out = []
        for request in self.received["traces"]:
            for resource in request.get("resourceSpans", []):
                service = _attributes(resource.get("resource", {}).get("attributes", []))["service.name"]
                for scope in resource.get("scopeSpans", []):
                    out.extend(
                        {**span, "attributes": _attributes(span.get("attributes", [])), "service": service}
                        for span in scope.get("spans", [])
                    )
        return out

    def metric_names(self) -> set[str]:
        """The names of every metric received."""
        return {
            metric["name"]
            for request in self.received["metrics"]
            for resource in request.get("resourceMetrics", [])
            for scope in resource.get("scopeMetrics", [])
            for metric in scope.get("metrics", [])
        }


def _attributes(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        value = pair.get("value", {})
        out[pair["key"]] = next(iter(value.values())) if value else None
    return out


@contextlib.contextmanager
def otlp_receiver() -> Iterator[tuple[str, Collector]]:
    """An OTLP/HTTP receiver on a free 127.0.0.1 port; yields its base URL and what it collects."""
    collector = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            kind = self.path.rstrip("/").rsplit("/", 1)[-1]
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if kind in collector.received:
                decoded = decode(self.headers.get("content-type", ""), body, kind)
                with collector.lock:
                    collector.received[kind].append(decoded)
            self.send_response(200 if kind in collector.received else 404)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", collector
    finally:
        server.shutdown()
        server.server_close()


def test_a_served_search_and_call_reach_an_otlp_collector_with_genai_names(example_build: Path) -> None:
    """find_tool and an aliased call over HTTP arrive as GenAI spans (query, hits, tool, call id, error) and metrics."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra is not installed")
    pytest.importorskip("opentelemetry.proto", reason="the [otel] extra is not installed")
    with otlp_receiver() as (endpoint, collector):
        replica = Replica(
            example_build,
            "memory",
            "namespaced",
            "--stateless",
            "--otlp-endpoint",
            endpoint,
            env={"OTEL_BSP_SCHEDULE_DELAY": "60000", "OTEL_METRIC_EXPORT_INTERVAL": "60000"},
        )
        try:
            replica.wait()
            found = call(replica.url, "find_tool", {"purpose": "evaluate an arithmetic expression"})
            ran = call(replica.url, "util_math_eval", {"expression": "6*7"})
            refused = call(replica.url, "util_math_eval", {"expression": 7})
            assert replica.process.poll() is None
            replica.process.terminate()
            assert replica.process.wait(20) == 0
        finally:
            replica.stop("kill")
    top = found["result"]["structuredContent"]["matches"][0]
    call_id = ran["result"]["structuredContent"]["meta"]["trace_id"]
    spans = collector.spans()
    search = [s for s in spans if s["name"] == "retrieval toolcat"]
    calls = [s for s in spans if s["name"] == "execute_tool util.math.eval"]
    assert len(search) == 1, [s["name"] for s in spans]
    assert len(calls) == 2
    attributes = search[0]["attributes"]
    assert attributes["gen_ai.operation.name"] == "retrieval"
    assert attributes["gen_ai.retrieval.query.text"] == "evaluate an arithmetic expression"
    documents = json.loads(attributes["gen_ai.retrieval.documents"])
    assert documents[0] == {"id": top["name"], "score": pytest.approx(top["relevance"])}
    ok_call = next(s["attributes"] for s in calls if "error.type" not in s["attributes"])
    assert ok_call["gen_ai.tool.name"] == "util.math.eval"
    assert ok_call["gen_ai.tool.call.id"] == call_id
    assert ok_call["gen_ai.operation.name"] == "execute_tool"
    bad_call = next(s["attributes"] for s in calls if "error.type" in s["attributes"])
    assert bad_call["error.type"] == refused["result"]["structuredContent"]["error"]["code"]
    assert {s["service"] for s in spans} == {"toolcat-serve"}
    assert {"toolcat.calls", "toolcat.errors", "toolcat.operation.duration"} <= collector.metric_names()


def test_the_receiver_reads_the_otlp_json_protocol() -> None:
    """The in-test collector decodes OTLP/JSON as well as protobuf (the two encodings OTLP/HTTP allows)."""
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]},
                "scopeSpans": [{"spans": [{"name": "retrieval toolcat", "attributes": []}]}],
            }
        ]
    }
    collector = Collector()
    collector.received["traces"].append(decode("application/json", json.dumps(body).encode(), "traces"))
    assert [s["name"] for s in collector.spans()] == ["retrieval toolcat"]

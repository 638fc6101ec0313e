"""The fleet's parts in one process: drain, readiness, one catalogue version per answer, and the OpenTelemetry spans."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from toolcat.format.envelope import ReaderError
from toolcat.mcp import fleet, telemetry
from toolcat.reader.audit import AuditLog, read_audit


async def _request(app: Any, path: str) -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "path": path, "method": "POST"}, receive, send)
    headers = {k.decode(): v.decode() for k, v in sent[0].get("headers", [])}
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


def test_drain_finishes_calls_in_flight_and_refuses_new_ones_retryably() -> None:
    """While draining, a call in flight completes, a new /mcp request is a 503 with Retry-After, /readyz is 503."""

    async def scenario() -> tuple[Any, ...]:
        release = asyncio.Event()

        async def slow_app(scope: Any, receive: Any, send: Any) -> None:
            await release.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"done"})

        drain = fleet.Drain(slow_app, lambda: None, drain_seconds=5)
        in_flight = asyncio.create_task(_request(drain, "/mcp"))
        await asyncio.sleep(0.05)
        draining = asyncio.create_task(drain.drain())
        await asyncio.sleep(0.05)
        refused = await _request(drain, "/mcp")
        ready = await _request(drain, "/readyz")
        assert not draining.done()  # it waits for the call in flight
        release.set()
        return await in_flight, refused, ready, await draining

    finished, refused, ready, remaining = asyncio.run(scenario())
    assert finished[0] == 200
    assert finished[2] == b"done"
    assert refused[0] == 503
    assert refused[1]["retry-after"] == "1"
    error = json.loads(refused[2])["error"]
    assert error["data"]["retryable"] is True
    assert "draining" in error["message"]
    assert ready[0] == 503
    assert remaining == 0


def test_readiness_names_what_is_missing() -> None:
    """/readyz is ready with a catalogue and a reachable store, else it says which is missing."""

    def down() -> None:
        raise ReaderError("UNAVAILABLE", "serve's state store redis://h:1/0 cannot be reached")

    assert fleet.readiness(lambda: "v1", lambda: None)() is None
    assert fleet.readiness(lambda: "", lambda: None)() == "no catalogue loaded"
    assert "redis://h:1/0" in str(fleet.readiness(lambda: "v1", down)())


def test_a_reload_waits_for_calls_in_flight_and_holds_new_ones() -> None:
    """The version gate: a reload starts only after the running call, and a call arriving meanwhile sees the new version."""
    order: list[str] = []

    async def scenario() -> None:
        gate = fleet.VersionGate()
        version = {"v": "old"}

        async def a_call(name: str, pause: float) -> None:
            async with gate.reading():
                seen = version["v"]
                await asyncio.sleep(pause)
                order.append(f"{name}:{seen}->{version['v']}")

        async def reload() -> None:
            async with gate.writing():
                version["v"] = "new"
                order.append("reload")

        first = asyncio.create_task(a_call("first", 0.1))
        await asyncio.sleep(0.02)
        reloading = asyncio.create_task(reload())
        await asyncio.sleep(0.02)
        second = asyncio.create_task(a_call("second", 0))
        await asyncio.gather(first, reloading, second)

    asyncio.run(scenario())
    assert order == ["first:old->old", "reload", "second:new->new"]


@pytest.fixture
def spans() -> Any:
    sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the [otel] extra is not installed")
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: PLC0415
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: PLC0415

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace._TRACER_PROVIDER_SET_ONCE._done = False
    trace.set_tracer_provider(provider)
    return exporter


def test_search_and_call_spans_carry_the_genai_attributes(spans: Any, tmp_path: Path) -> None:
    """A search span has the query and the top hits with scores; a call span the tool, the call id and the error code."""
    found = {
        "ok": True,
        "matches": [{"tool_id": "util.math.eval", "confidence": 0.9}, {"tool_id": "a.b", "confidence": 0.2}],
    }
    failed = {"ok": False, "error": {"code": "VALIDATION_ERROR", "message": "x"}, "meta": {"trace_id": "abc123"}}
    audit = telemetry.traced(AuditLog(tmp_path / "audit.jsonl", "s1"))
    assert audit is not None

    async def run() -> None:
        async def search() -> Any:
            return found

        async def exec_() -> Any:
            audit.record(
                op="exec",
                target="util.math.eval",
                outcome="VALIDATION_ERROR",
                latency_ms=1,
                trace_id="abc123",
                registry_version="v",
            )
            return failed

        await telemetry.observe("find_tool", {"purpose": "evaluate arithmetic"}, search)
        known = {"util.math.eval": "util.math.eval"}.get
        await telemetry.observe("tool_exec", {"op": "util.math.eval", "args": {}}, exec_, resolve=known)

    asyncio.run(run())
    search_span, call_span = spans.get_finished_spans()
    assert search_span.attributes["gen_ai.operation.name"] == "retrieval"
    assert search_span.attributes["gen_ai.retrieval.query.text"] == "evaluate arithmetic"
    assert json.loads(search_span.attributes["gen_ai.retrieval.documents"])[0] == {"id": "util.math.eval", "score": 0.9}
    assert call_span.name == "execute_tool util.math.eval"
    assert call_span.attributes["gen_ai.tool.name"] == "util.math.eval"
    assert call_span.attributes["gen_ai.tool.call.id"] == "abc123"
    assert call_span.attributes["error.type"] == "VALIDATION_ERROR"
    record = read_audit(tmp_path / "audit.jsonl")[0]
    assert record["otel_trace_id"] == f"{call_span.context.trace_id:032x}"


def test_without_an_endpoint_nothing_is_exported(monkeypatch: pytest.MonkeyPatch) -> None:
    """No --otlp-endpoint and no OTEL_EXPORTER_OTLP_ENDPOINT: configure installs nothing."""
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert telemetry.configure(None) is False

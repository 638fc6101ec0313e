"""Bounded telemetry (issue 36): a client's names never become span names or metric labels as sent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcat.mcp import telemetry

KNOWN = {"util.math.eval": "util.math.eval", "math_eval": "util.math.eval"}


class _Counter:
    """Records the label sets a counter or histogram was given."""

    def __init__(self) -> None:
        self.labels: list[dict[str, Any]] = []

    def add(self, _value: float, labels: dict[str, Any]) -> None:
        self.labels.append(dict(labels))

    def record(self, _value: float, labels: dict[str, Any]) -> None:
        self.labels.append(dict(labels))


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[_Counter]]:
    """An in-memory span exporter as telemetry's tracer, and recording stand-ins for its three instruments."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the [otel] extra is not installed")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: PLC0415
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: PLC0415

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(telemetry, "_tracer", provider.get_tracer("test"))
    counters = [_Counter(), _Counter(), _Counter()]
    for name, counter in zip(("_calls", "_errors", "_duration"), counters, strict=True):
        monkeypatch.setattr(telemetry, name, counter)
    return exporter, counters


def _observe(name: str, arguments: dict[str, Any], answer: dict[str, Any]) -> None:
    async def run() -> Any:
        return answer

    asyncio.run(telemetry.observe(name, arguments, run, resolve=KNOWN.get))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    op=st.one_of(
        st.text(max_size=300),
        st.sampled_from(["util.math.eval", "math_eval", "x" * 1_048_576, "util.math.eval" + "\n" * 10]),
    ),
    code=st.text(max_size=3000),
    trace_id=st.text(max_size=3000),
)
def test_span_names_and_labels_come_from_resolved_tool_ids_only(
    recorded: tuple[Any, list[_Counter]], op: str, code: str, trace_id: str
) -> None:
    """Any op a client sends is labelled by the tool it resolves to, else 'unknown'; every attribute is capped."""
    exporter, counters = recorded
    exporter.clear()
    for counter in counters:
        counter.labels.clear()
    answer = {"ok": False, "error": {"code": code, "message": "x"}, "meta": {"trace_id": trace_id}}
    _observe("tool_exec", {"op": op, "args": {}}, answer)
    expected = KNOWN.get(op, telemetry.UNKNOWN_TOOL)
    (span,) = exporter.get_finished_spans()
    assert span.name == f"execute_tool {expected}"
    for value in span.attributes.values():
        assert len(str(value)) <= telemetry.MAX_QUERY_CHARS
    for counter in counters:
        for labels in counter.labels:
            assert labels["gen_ai.tool.name"] == expected
            assert all(len(str(v)) <= telemetry.MAX_ATTRIBUTE_CHARS for v in labels.values())


def test_a_million_distinct_names_share_one_label(recorded: tuple[Any, list[_Counter]]) -> None:
    """200 calls with distinct 1 MiB names make one label value and one span name, not 200."""
    exporter, counters = recorded
    for n in range(200):
        _observe("tool_exec", {"op": f"{n}" + "y" * 1_048_576}, {"ok": True, "result": 1})
    assert {span.name for span in exporter.get_finished_spans()} == {"execute_tool unknown"}
    assert {labels["gen_ai.tool.name"] for labels in counters[0].labels} == {"unknown"}

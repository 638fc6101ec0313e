"""OpenTelemetry for ``toolcat serve``: spans on searches and tool calls, metrics on calls, OTLP when configured.

Uses only ``opentelemetry-api`` at call time (the MCP SDK already depends on it, and its own
middleware opens one SERVER span per MCP message; ours are its children). Without a configured
provider the API is a no-op: nothing is recorded or sent. :func:`configure` installs the SDK's
providers with OTLP/HTTP exporters (the ``[otel]`` extra) when ``--otlp-endpoint`` or
``$OTEL_EXPORTER_OTLP_ENDPOINT`` is set, and does nothing otherwise.

Spans follow the GenAI semantic conventions (development status):

* a search (``search_nodes``, ``search_tool_by_category``, ``find_tool``, ``list``/``tool_help`` with a
  query) is ``retrieval toolcat`` with ``gen_ai.operation.name=retrieval``,
  ``gen_ai.retrieval.query.text``, ``gen_ai.retrieval.documents`` (JSON: the top hits' ids and scores);
* a call (``tool_exec``, ``call_tool``, ``tool_batch``, an always-loaded or described tool) is
  ``execute_tool <tool>`` with ``gen_ai.operation.name=execute_tool``, ``gen_ai.tool.name`` (the
  catalogue tool id), ``gen_ai.tool.type=function``, ``gen_ai.tool.call.id`` (the reader's trace id,
  also ``meta.trace_id`` and the audit's ``trace_id``);
* both carry ``error.type`` (the envelope's code) on failure and ``toolcat.registry_version``.

Metrics: ``toolcat.calls`` and ``toolcat.errors`` (counters, by tool and code) and
``toolcat.operation.duration`` (a histogram in seconds, by operation).

Bounded (issue 36): a client's names never become a span name or a label as sent. The tool of a call is
the catalogue's tool id that its ``op``/``tool_id`` resolves to (the server's ``resolve``), else
:data:`UNKNOWN_TOOL` for every name the catalogue does not know; every attribute is capped at
:data:`MAX_ATTRIBUTE_CHARS` characters (the query at :data:`MAX_QUERY_CHARS`), so the series and the
spans of a replica grow with its catalogue, not with what clients send (200 calls with 1 MiB names took
a replica from 84 MB to 2.4 GB before).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import metrics, trace

from ..format import settings
from ..format.envelope import is_error
from ..format.types import Json
from ..reader.audit import AuditSink

log = logging.getLogger(__name__)

SEARCH_TOOLS = frozenset({"search_nodes", "search_tool_by_category", "find_tool"})
QUERY_TOOLS = frozenset({"list", "tool_help"})  # searches only when given a query
CALL_TOOLS = frozenset({"tool_exec", "call_tool", "tool_batch"})
#: Hits recorded on a search span.
TOP_HITS = 5
#: The one label (and span name part) of every op the catalogue does not know.
UNKNOWN_TOOL = "unknown"
#: Characters kept of any attribute value (a tool id, a hit id, an error code); the query keeps MAX_QUERY_CHARS.
MAX_ATTRIBUTE_CHARS = 200
MAX_QUERY_CHARS = 500
_HIT_LISTS = ("matches", "results", "tools", "nodes", "operations")
#: Where a hit's score is: ``confidence`` (spec, gateway), ``relevance`` (namespaced find_tool).
_SCORE_KEYS = ("confidence", "relevance", "score")

_tracer = trace.get_tracer("toolcat.mcp")
_meter = metrics.get_meter("toolcat.mcp")
_calls = _meter.create_counter("toolcat.calls", unit="{call}", description="Tool calls answered")
_errors = _meter.create_counter("toolcat.errors", unit="{error}", description="Answers that were error envelopes")
_duration = _meter.create_histogram("toolcat.operation.duration", unit="s", description="Search and call latency")


def configure(endpoint: str | None, service_name: str = "toolcat-serve") -> bool:
    """Install OTLP/HTTP exporters for traces and metrics when an endpoint is set; True when it did."""
    endpoint = endpoint or settings.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415 - opentelemetry is an optional extra
        from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415 - opentelemetry is an optional extra
    except ImportError as exc:
        raise ValueError(
            f"--otlp-endpoint needs the [otel] extra (pip install 'toolcat[otel]'): {exc.name} is missing"
        ) from None
    base = endpoint.rstrip("/")
    resource = Resource.create({"service.name": service_name})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    trace.set_tracer_provider(tracer_provider)
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{base}/v1/metrics"))
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    log.info("OpenTelemetry: exporting traces and metrics to %s", base)
    return True


def flush(timeout_millis: int = 5_000) -> None:
    """Send the spans and metrics the exporters still hold (a drained replica exits without the SDK's atexit hook)."""
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)  # the SDK's providers; the API's no-op has none
        if callable(force_flush):
            force_flush(timeout_millis)


def current_trace_id() -> str | None:
    """The 32-hex trace id of the span in effect, or None when nothing is traced (for audit records)."""
    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None


def search_query(name: str, arguments: Json) -> str | None:
    """The query text of a search call, or None when the call is not a search."""
    key = "purpose" if name == "find_tool" else "query"
    query = arguments.get(key)
    if name in SEARCH_TOOLS or (name in QUERY_TOOLS and query is not None):
        return str(query)[:MAX_QUERY_CHARS]
    return None


def top_hits(answer: Json) -> list[dict[str, Any]]:
    """The first hits of a search answer: ``{id, score}`` each (score when the answer ranks, whatever the dialect calls it)."""
    for key in _HIT_LISTS:
        items = answer.get(key)
        if isinstance(items, list) and items:
            hits = []
            for item in items[:TOP_HITS]:
                if isinstance(item, dict):
                    ident = item.get("tool_id") or item.get("op") or item.get("path") or item.get("name")
                    hit: dict[str, Any] = {"id": str(ident)[:MAX_ATTRIBUTE_CHARS]}
                    score = next((item[k] for k in _SCORE_KEYS if isinstance(item.get(k), (int, float))), None)
                    if score is not None:
                        hit["score"] = float(score)
                    hits.append(hit)
            return hits
    return []


def called_tool(name: str, arguments: Json, tool_id: str | None) -> str:
    """The name a call gives for its tool (``op``/``tool_id`` of the discovery tool, or the alias's id), unchecked."""
    if tool_id is not None:
        return tool_id
    target = arguments.get("op", arguments.get("tool_id"))
    return str(target) if isinstance(target, str) else name


async def resolved_tool(
    name: str, arguments: Json, tool_id: str | None, resolve: Callable[[str], str | None] | None
) -> str:
    """The catalogue tool id a call runs, for span names and labels: resolved, else :data:`UNKNOWN_TOOL`.

    ``name`` (a discovery tool the server serves, e.g. ``tool_batch``) stands for a call that names no op.
    """
    if tool_id is not None:
        return tool_id[:MAX_ATTRIBUTE_CHARS]
    target = arguments.get("op", arguments.get("tool_id"))
    if not isinstance(target, str):
        return name[:MAX_ATTRIBUTE_CHARS]
    if resolve is None or not target or len(target) > MAX_ATTRIBUTE_CHARS:
        return UNKNOWN_TOOL
    import anyio.to_thread  # noqa: PLC0415 - the SDK's dependency; resolving may read a lookup shard

    try:
        found = await anyio.to_thread.run_sync(resolve, target)
    except Exception:  # a tampered shard: the call's own answer says so; the label stays bounded
        found = None
    return found[:MAX_ATTRIBUTE_CHARS] if isinstance(found, str) and found else UNKNOWN_TOOL


def _error_code(answer: Json) -> str | None:
    if is_error(answer) or answer.get("ok") is False:
        error = answer.get("error")
        return str(error.get("code"))[:MAX_ATTRIBUTE_CHARS] if isinstance(error, dict) else "UNKNOWN"
    return None


async def observe(
    name: str,
    arguments: Json,
    run: Callable[[], Awaitable[Json]],
    *,
    tool_id: str | None = None,
    resolve: Callable[[str], str | None] | None = None,
) -> Json:
    """Run one MCP tool call inside its span (a search or a call; other calls run as they are).

    ``resolve`` maps a call's ``op`` to the catalogue's tool id (None when unknown); without it every
    named op is :data:`UNKNOWN_TOOL`.
    """
    query = search_query(name, arguments)
    is_call = tool_id is not None or name in CALL_TOOLS
    if query is None and not is_call:
        return await run()
    tool = await resolved_tool(name, arguments, tool_id, resolve) if is_call else name[:MAX_ATTRIBUTE_CHARS]
    operation = "execute_tool" if is_call else "retrieval"
    span_name = f"execute_tool {tool}" if is_call else "retrieval toolcat"
    attributes: dict[str, Any] = {"gen_ai.operation.name": operation, "toolcat.mcp.tool": name[:MAX_ATTRIBUTE_CHARS]}
    if is_call:
        attributes.update({"gen_ai.tool.name": tool, "gen_ai.tool.type": "function"})
    else:
        attributes["gen_ai.retrieval.query.text"] = query or ""
    started = time.perf_counter()
    with _tracer.start_as_current_span(span_name, kind=trace.SpanKind.INTERNAL, attributes=attributes) as span:
        answer = await run()
        _annotate(span, answer, is_call)
    code = _error_code(answer)
    labels = {"gen_ai.operation.name": operation, "gen_ai.tool.name": tool}
    _duration.record(time.perf_counter() - started, {**labels, **({"error.type": code} if code else {})})
    if is_call:
        _calls.add(1, labels)
    if code is not None:
        _errors.add(1, {**labels, "error.type": code})
    return answer


def _annotate(span: Any, answer: Json, is_call: bool) -> None:
    """Put what the answer says on its span: the call id and version, the hits, the error code."""
    if not span.is_recording():
        return
    meta = answer.get("meta")
    if isinstance(meta, dict):
        if meta.get("trace_id"):
            span.set_attribute("gen_ai.tool.call.id", str(meta["trace_id"])[:MAX_ATTRIBUTE_CHARS])
        if meta.get("registry_version"):
            span.set_attribute("toolcat.registry_version", str(meta["registry_version"])[:MAX_ATTRIBUTE_CHARS])
    if not is_call:
        hits = top_hits(answer)
        span.set_attribute("gen_ai.retrieval.documents", json.dumps(hits))
        span.set_attribute("toolcat.search.hits", [h["id"] for h in hits])
        span.set_attribute("toolcat.search.scores", [h.get("score", 0.0) for h in hits])
    code = _error_code(answer)
    if code is not None:
        span.set_attribute("error.type", code)
        span.set_status(trace.StatusCode.ERROR, code)


class TracedAudit:
    """An audit sink whose records carry the OpenTelemetry trace id (``otel_trace_id``) when a span is in effect."""

    def __init__(self, sink: AuditSink) -> None:
        self.sink = sink

    def record(self, **fields: Any) -> None:
        """Keep one record through the wrapped sink, with the trace id of the current span."""
        trace_id = current_trace_id()
        if trace_id is not None:
            fields["extra"] = {**(fields.get("extra") or {}), "otel_trace_id": trace_id}
        self.sink.record(**fields)


def traced(sink: AuditSink | None) -> AuditSink | None:
    """``sink`` with trace ids on its records (None stays None)."""
    return TracedAudit(sink) if sink is not None else None

"""The discovery tools as MCP tools: their ``tools/list`` entries, input validation, and the call path into a Catalog.

An input that breaks a tool's input schema is answered with a ``VALIDATION_ERROR`` envelope (so the model can
correct itself); otherwise the matching :class:`toolcat.reader.Catalog` method runs in a worker thread.
:class:`toolcat.mcp.server.CatalogServer` uses these for ``tools/list`` and ``tools/call``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ..reader import Catalog, error_envelope
from ..reader.dialects import DiscoveryTool, dialect_tools
from ..reader.field_errors import field_errors
from ..reader.schemaguard import MAX_ARGS_DEPTH, too_deep

Json = dict[str, Any]


def json_text(value: Any) -> str:
    """A result as the JSON text of a ``tools/call`` answer."""
    return json.dumps(value, ensure_ascii=False, default=str)


def input_errors(tool: DiscoveryTool, arguments: Json) -> list[Json]:
    """Field errors of ``arguments`` against the tool's input schema (empty when valid)."""
    deep = too_deep(arguments, MAX_ARGS_DEPTH)
    if deep is not None:  # jsonschema recurses (and its messages repr the value): refuse before validating
        return [
            {
                "field": deep.removeprefix("$.") or "$",
                "message": f"nested deeper than {MAX_ARGS_DEPTH} lists/objects (or contains itself)",
                "expected": f"at most {MAX_ARGS_DEPTH} levels",
            }
        ]
    return field_errors(_validator(tool.name, tool.dialect).iter_errors(arguments), unexpected="argument")


@functools.cache
def _validator(name: str, dialect: str) -> Any:
    """The compiled input-schema validator of one discovery tool (jsonschema is a build-side dependency)."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - loaded on the first call only

    tool = next(t for t in dialect_tools(dialect) if t.name == name)
    return Draft202012Validator(tool.input_schema)


def input_error_envelope(tool: DiscoveryTool, errors: list[Json]) -> Json:
    """The envelope answering arguments that break a discovery tool's input schema."""
    names = ", ".join(e["field"] for e in errors)
    return error_envelope(
        "VALIDATION_ERROR",
        f"{len(errors)} invalid argument(s) for {tool.name}: {names}",
        details={"field_errors": errors, "input_schema": tool.input_schema},
        hints=[f"Call {tool.name} again with arguments that match its input schema (details.input_schema)."],
        help_path="root",
    )


def output_schema(tool: DiscoveryTool) -> dict[str, Any]:
    """The outputSchema the server declares: dialects.py's, the single source for every export."""
    return tool.output_schema


def mcp_tool(tool: DiscoveryTool) -> dict[str, Any]:
    """The ``tools/list`` entry of a discovery tool."""
    return {**tool.as_mcp(), "outputSchema": output_schema(tool)}


async def call_tool(catalog: Catalog, tool: DiscoveryTool, arguments: Json) -> Json:
    """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
    errors = input_errors(tool, arguments)
    if errors:
        return input_error_envelope(tool, errors)
    method: Callable[..., Json] = getattr(catalog, tool.method)
    result = await anyio.to_thread.run_sync(functools.partial(method, **arguments))
    if not isinstance(result, dict):
        return error_envelope("INTERNAL", f"{tool.method} returned {type(result).__name__}, not an object")
    return result

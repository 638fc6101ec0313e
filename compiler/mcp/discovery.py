"""The discovery tools as MCP tools: their ``tools/list`` entries, input validation, and the call path into a Catalog.

An input that breaks a tool's input schema is answered with a ``VALIDATION_ERROR`` envelope (so the model can
correct itself); otherwise the matching :class:`toolcat.reader.Catalog` method runs in a worker thread.
Catalogue tools can be MCP tools too (:class:`CatalogTool`): the always-loaded ones in every dialect (marked
pinned, counted apart from the discovery tools), in the namespaced dialect each tool a client described, kept in its
:class:`WorkingSet` (the ``tool_reference`` pattern: a discovered tool becomes callable), and in the direct dialect
every tool the session may see (:func:`direct_catalog_tools`). The namespaced dialect also serves a
``discover_<domain>_tools`` per domain the catalogue declares (:func:`discovery_tools`, seed 002). :class:`toolcat.mcp.server.CatalogServer` uses these for
``tools/list`` and ``tools/call``.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..engines.schemaguard import MAX_ARGS_DEPTH
from ..format.dialects import SESSIONLESS_CALL, DiscoveryTool, input_help, served_tools
from ..format.envelope import error_envelope
from ..format.field_errors import field_errors
from ..format.json_paths import too_deep
from ..format.types import Json
from ..reader.catalog import Catalog
from . import fairness


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
    return field_errors(
        _validator(json.dumps(tool.input_schema, sort_keys=True)).iter_errors(arguments), unexpected="argument"
    )


@functools.cache
def _validator(schema_text: str) -> Any:
    """The compiled validator of one input schema (a discovery tool's, or the per-domain tools' shared one)."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - loaded on the first call only

    return Draft202012Validator(json.loads(schema_text))


def input_error_envelope(tool: DiscoveryTool, errors: list[Json]) -> Json:
    """The envelope answering arguments that break a discovery tool's input schema."""
    names = ", ".join(e["field"] for e in errors)
    return error_envelope(
        "VALIDATION_ERROR",
        f"{len(errors)} invalid argument(s) for {tool.name}: {names}",
        details={"field_errors": errors, "input_schema": tool.input_schema},
        hints=[f"Call {tool.name} again with arguments that match its input schema (details.input_schema)."],
        help_path="root",
        next_action=input_help(tool),
    )


def output_schema(tool: DiscoveryTool) -> dict[str, Any]:
    """The outputSchema the server declares: dialects.py's, with nullable type arrays written portably.

    ``{"type": ["string", "null"]}`` is valid JSON Schema but fails portability checks (MCP Inspector's
    ``--strict``, some clients' schema converters); :func:`portable_schema` writes it as ``anyOf``.
    """
    portable: dict[str, Any] = _declared_any(portable_schema(tool.output_schema))
    return portable


def _declared_any(schema: Any) -> Any:
    """``schema`` where every property that may hold any JSON value says so (no bare ``{}``), at any depth.

    A batch item's ``result`` sits in ``results.items``: declared there too, so typed clients (fastmcp's
    ``.data``) keep each item's result.
    """
    if isinstance(schema, list):
        return [_declared_any(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _declared_any(value) for key, value in schema.items()}
    properties = out.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: _any_if_bare(sub) for name, sub in properties.items()}
    return out


#: Every JSON value, spelled with validation keywords: the same meaning as ``{}``, which portability checks flag.
ANY_JSON: dict[str, Any] = {
    "anyOf": [{"type": kind} for kind in ("object", "array", "string", "number", "boolean", "null")]
}
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"})


def _any_if_bare(schema: Any) -> Any:
    if isinstance(schema, dict) and set(schema) <= _ANNOTATIONS:
        return {**schema, **ANY_JSON}
    return schema


def portable_schema(schema: Any) -> Any:
    """``schema`` with every ``type: [X, "null"]`` rewritten as ``anyOf: [{type: X, ...}, {type: "null"}]``."""
    if isinstance(schema, list):
        return [portable_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: portable_schema(value) for key, value in schema.items()}
    kinds = out.get("type")
    if isinstance(kinds, list) and len(kinds) > 1:
        rest = {k: v for k, v in out.items() if k not in {"type", "description", "title", "default"}}
        shared = {k: v for k, v in out.items() if k in {"description", "title", "default"}}
        branches = [{"type": kind, **(rest if kind != "null" else {})} for kind in kinds]
        return {**shared, "anyOf": branches}
    return out


def mcp_tool(tool: DiscoveryTool) -> dict[str, Any]:
    """The ``tools/list`` entry of a discovery tool; both schemas written portably (same meaning, no type arrays)."""
    return {**tool.as_mcp(), "inputSchema": portable_schema(tool.input_schema), "outputSchema": output_schema(tool)}


async def call_tool(catalog: Catalog, tool: DiscoveryTool, arguments: Json) -> Json:
    """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
    errors = input_errors(tool, arguments)
    if errors:
        return input_error_envelope(tool, errors)
    method: Callable[..., Json] = getattr(catalog, tool.method)
    # abandon_on_cancel: the server's per-call deadline answers the client even while the thread still runs
    call = functools.partial(method, **dict(tool.bound), **arguments)  # a per-domain tool's domain is bound
    result = await fairness.run_sync(call)  # under the call's fair-share slot (mcp/fairness.py)
    if not isinstance(result, dict):
        return error_envelope("INTERNAL", f"{tool.method} returned {type(result).__name__}, not an object")
    return result


def discovery_tools(catalog: Catalog, dialect: str) -> tuple[DiscoveryTool, ...]:
    """The discovery tools served in ``dialect``: its own, and the namespaced dialect's per-domain ones (seed 002)."""
    return served_tools(dialect, catalog.discovery_domains())


# -- the namespaced dialect without a session (docs/mcp.md, "Namespaced execution") --------------------------
_BECOMES_CALLABLE = ("the tool then becomes callable by its alias", "it then becomes callable by its alias")


def sessionless_tools(tools: tuple[DiscoveryTool, ...]) -> tuple[DiscoveryTool, ...]:
    """The namespaced tools listed to a client that cannot receive list changes: ``tool_call`` beside them.

    ``tool_call`` comes after the discovery tools (the per-domain ones included), and the describing tools
    say to run a described tool with it (it will never be listed by its alias for this client).
    """
    out: list[DiscoveryTool] = []
    for tool in tools:
        text = tool.description
        for said in _BECOMES_CALLABLE:
            text = text.replace(said, "run it with tool_call")
        out.append(replace(tool, description=text) if text != tool.description else tool)
    return (*out, SESSIONLESS_CALL)


def call_by_tool_call(answer: Json, listed: set[str], resolve: Callable[[str], str | None]) -> Json:
    """``answer`` for a client without a session: an unlisted alias's call goes through ``tool_call``.

    A next_action (or a ``usage`` line) calling a catalogue tool by an alias this client is not listed becomes
    the same call through ``tool_call``, the one way such a client can run it. ``listed`` holds the names this client is listed (those calls stay); ``resolve`` maps an alias to its id.
    """
    if not isinstance(answer, dict):
        return answer
    out = dict(answer)
    holders = [out]
    if isinstance(out.get("error"), dict):
        out["error"] = dict(out["error"])
        holders.append(out["error"])
    for holder in holders:
        action = holder.get("next_action")
        if not isinstance(action, dict):
            continue
        op, args = action.get("op"), action.get("args")
        if isinstance(op, str) and op not in listed and resolve(op) is not None:
            args = args if isinstance(args, dict) else {}
            holder["next_action"] = {"op": SESSIONLESS_CALL.name, "args": {"name": op, "arguments": args}}
    alias, usage = out.get("alias"), out.get("usage")
    if isinstance(alias, str) and alias not in listed and isinstance(usage, str) and usage.startswith(alias + "("):
        inside = usage[len(alias) + 1 : -1]
        pairs = ", ".join(f'"{k}": {v}' for k, v in (p.split("=", 1) for p in inside.split(", ") if "=" in p))
        out["usage"] = f'{SESSIONLESS_CALL.name}(name="{alias}", arguments={{{pairs}}})'
    return out


#: ``_meta`` key marking a pinned (always_load) tool in ``tools/list``: counted apart from the discovery tools.
PINNED_META_KEY = "toolcat/pinned"


# -- catalogue tools as MCP tools: always-loaded ones, and the namespaced dialect's working set -------------
#: Described tools a namespaced session keeps callable at once; the least recently used one leaves first.
WORKING_SET_SIZE = 32


@dataclass(frozen=True, slots=True)
class CatalogTool:
    """One catalogue tool exposed as an MCP tool of its own, named by its provider alias."""

    name: str
    tool_id: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    #: A pinned (``always_load``) tool: listed beside the discovery tools, and marked so clients count it apart.
    pinned: bool = False

    def as_mcp(self) -> dict[str, Any]:
        """The ``tools/list`` entry (no outputSchema: the answer is the reader's exec envelope)."""
        entry = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": self.annotations,
        }
        return {**entry, "_meta": {PINNED_META_KEY: True}} if self.pinned else entry


def catalog_tool(spec: Json) -> CatalogTool | None:
    """A described (or always-loaded) tool as an MCP tool; None when it has no alias or schema to offer."""
    tool_id, alias = spec.get("tool_id"), spec.get("alias")
    if not isinstance(tool_id, str) or not isinstance(alias, str) or not alias:
        return None
    raw_schema = spec.get("args_schema")
    schema: dict[str, Any] = raw_schema if isinstance(raw_schema, dict) else {}
    if schema.get("type") != "object":
        schema = {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}
    summary = str(spec.get("summary") or tool_id)
    description = spec.get("description")
    text = f"{summary}\n\n{description}" if isinstance(description, str) and description != summary else summary
    raw_hints = spec.get("annotations")
    hints: dict[str, Any] = raw_hints if isinstance(raw_hints, dict) else {}
    annotations: dict[str, Any] = {k: v for k, v in hints.items() if k.endswith("Hint") and isinstance(v, bool)}
    annotations.setdefault("readOnlyHint", spec.get("kind") == "read")
    annotations["title"] = tool_id
    return CatalogTool(alias, tool_id, f"[{tool_id}] {text}", schema, annotations)


def direct_catalog_tools(catalog: Catalog) -> dict[str, CatalogTool]:
    """The direct dialect's tools (seed 001's legacy mode): every tool the session may see, by alias, with its schema."""
    listed = catalog.direct_tools()
    out: dict[str, CatalogTool] = {}
    for spec in listed.get("tools", []) if listed.get("ok") else []:
        tool = catalog_tool(spec)
        if tool is not None:
            out[tool.name] = tool
    return out


class WorkingSet:
    """The described tools one client may call by alias: at most ``size``, least recently used out first."""

    def __init__(self, size: int = WORKING_SET_SIZE) -> None:
        self.size = size
        self._tools: OrderedDict[str, CatalogTool] = OrderedDict()

    def add(self, tool: CatalogTool) -> bool:
        """Keep ``tool`` callable; True when the list of tools changed (it was not there, or one left)."""
        known = self._tools.get(tool.name)
        self._tools[tool.name] = tool
        self._tools.move_to_end(tool.name)
        while len(self._tools) > self.size:
            self._tools.popitem(last=False)
        return known != tool

    def get(self, name: str) -> CatalogTool | None:
        """The tool called ``name`` (marked as just used), or None."""
        tool = self._tools.get(name)
        if tool is not None:
            self._tools.move_to_end(name)
        return tool

    def tools(self) -> list[CatalogTool]:
        """The tools in the set, least recently used first."""
        return list(self._tools.values())

    def clear(self) -> None:
        """Forget every tool (a new catalogue version was loaded)."""
        self._tools.clear()


def not_described_envelope(name: str, tool_id: str) -> Json:
    """The answer to a call of a catalogue tool this session has not described (namespaced dialect)."""
    return error_envelope(
        "NOT_AUTHORIZED",
        f"{name} is not callable yet: describe {tool_id} first, then call it by its alias",
        hints=["tool_describe(name) returns the tool's arguments and makes it callable in this session."],
        next_action={"op": "tool_describe", "args": {"name": tool_id}},
        help_path=tool_id,
    )

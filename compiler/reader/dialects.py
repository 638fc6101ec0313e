"""The discovery tools of each dialect: the one definition that provider exports and the MCP server share.

A dialect is the small set of tools an agent is given instead of the whole catalogue:

* ``spec``: ``list``, ``search_nodes``, ``search_tool_by_category``, ``expand_tool``, ``call_tool``
* ``gateway``: ``tool_help``, ``tool_exec``, ``tool_batch``
* ``namespaced``: ``tool_list``, ``tool_describe``, ``find_tool``

Each tool carries its name, the description a model reads, a JSON Schema of its input
(matching the reader method's keyword arguments), a JSON Schema of its output, MCP
annotations, and the name of the :class:`toolcat.reader.Catalog` method it maps to.
Pure data and stdlib only: the reader imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DIALECT_NAMES: tuple[str, ...] = ("spec", "gateway", "namespaced")

_READ_ONLY: dict[str, Any] = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
_RUNS_TOOLS: dict[str, Any] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

_ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "details": {"type": "object"},
        "hints": {"type": "array", "items": {"type": "string"}},
        "next_action": {"type": ["object", "null"]},
        "help_path": {"type": "string"},
    },
    "required": ["code", "message", "help_path"],
}


def _envelope(result: dict[str, Any]) -> dict[str, Any]:
    """Output schema of a reader operation: ``{ok: true, ...result}`` or ``{ok: false, error}``."""
    return {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "error": _ERROR, **result},
        "required": ["ok"],
    }


_POINTER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_id": {"type": "string"},
        "alias": {"type": "string"},
        "type": {"enum": ["tool", "skill"]},
        "path": {"type": "array", "items": {"type": "string"}},
        "summary": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "kind": {"enum": ["read", "write"]},
        "confidence": {"type": "number"},
    },
    "required": ["tool_id", "summary"],
}
_POINTERS: dict[str, Any] = {"type": "array", "items": _POINTER}
#: tool_list rows: metadata only, the canonical name and its alias.
_LISTED: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "alias": {"type": "string"},
            "type": {"enum": ["tool", "skill"]},
            "kind": {"enum": ["read", "write"]},
            "summary": {"type": "string"},
        },
        "required": ["name", "alias"],
    },
}
_NODES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "path": {"type": "array", "items": {"type": "string"}},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "tool_count": {"type": "integer"},
            "confidence": {"type": "number"},
        },
    },
}
_EXEC_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "op": {"type": "string"},
        "ok": {"type": "boolean"},
        "result": {},
        "meta": {
            "type": "object",
            "properties": {
                "trace_id": {"type": "string"},
                "latency_ms": {"type": "number"},
                "warnings": {"type": "array", "items": {"type": "string"}},
            },
        },
        "error": _ERROR,
    },
    "required": ["op", "ok"],
}
_LIMIT: dict[str, Any] = {
    "type": "integer",
    "minimum": 1,
    "maximum": 50,
    "default": 5,
    "description": "Most results to return.",
}
_ARGS: dict[str, Any] = {
    "type": "object",
    "description": "Arguments exactly as the tool's args_schema defines them.",
    "additionalProperties": True,
}


@dataclass(frozen=True, slots=True)
class DiscoveryTool:
    """One tool of a dialect, as a model sees it and as the reader answers it."""

    name: str
    dialect: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, Any]
    method: str

    @property
    def read_only(self) -> bool:
        """True when calling it never runs a catalogue tool."""
        return bool(self.annotations.get("readOnlyHint"))

    def as_mcp(self) -> dict[str, Any]:
        """The MCP ``tools/list`` entry for this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": {"title": self.name.replace("_", " "), **self.annotations},
        }


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


_SPEC = (
    DiscoveryTool(
        "list",
        "spec",
        "List one node of the tool catalogue: its child categories and the tools filed there, as pointers "
        '(id, summary, tags; never argument schemas). Start with path "" (the root), then go down.',
        _obj(
            {
                "path": {
                    "type": "string",
                    "default": "",
                    "description": 'Dotted node path, e.g. "work.tasks"; "" is the root.',
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Keep only tools with all these tags.",
                },
                "query": {"type": "string", "description": "Rank the node's tools by relevance to this text."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 10,
                    "description": "Most pointers to return.",
                },
                "cursor": {"type": "string", "description": "next_cursor from the previous page."},
            }
        ),
        _envelope(
            {
                "path": {"type": "array"},
                "children": _NODES,
                "tools": _POINTERS,
                "next_cursor": {"type": ["string", "null"]},
            }
        ),
        _READ_ONLY,
        "list",
    ),
    DiscoveryTool(
        "search_nodes",
        "spec",
        "Search the catalogue's categories by what you want to do; returns node paths with a 0-1 confidence. "
        "Use it to find where to look, then call search_tool_by_category or list.",
        _obj(
            {
                "query": {"type": "string", "minLength": 1, "description": "What you want to do, in plain words."},
                "limit": _LIMIT,
            },
            ["query"],
        ),
        _envelope({"results": _NODES}),
        _READ_ONLY,
        "search_nodes",
    ),
    DiscoveryTool(
        "search_tool_by_category",
        "spec",
        "Search for tools inside one category (and its sub-categories); returns pointers with a 0-1 confidence.",
        _obj(
            {
                "query": {"type": "string", "minLength": 1, "description": "What the tool should do."},
                "category_path": {
                    "type": "string",
                    "description": 'Dotted node path from list or search_nodes, e.g. "files".',
                },
                "limit": _LIMIT,
                "cursor": {"type": "string", "description": "next_cursor from the previous page."},
            },
            ["query", "category_path"],
        ),
        _envelope(
            {
                "category_path": {"type": "array", "items": {"type": "string"}},
                "results": _POINTERS,
                "next_cursor": {"type": ["string", "null"]},
            }
        ),
        _READ_ONLY,
        "search_tool_by_category",
    ),
    DiscoveryTool(
        "expand_tool",
        "spec",
        "Get the full definition of one tool: args_schema, result_schema, examples, errors, policy. "
        "Call it before call_tool; never guess argument names.",
        _obj(
            {"tool_id": {"type": "string", "description": 'Canonical id (e.g. "file.read") or its alias.'}}, ["tool_id"]
        ),
        _envelope(
            {
                "tool_id": {"type": "string"},
                "path": {"type": "array"},
                "summary": {"type": "string"},
                "args_schema": {"type": "object"},
                "result_schema": {},
                "examples": {"type": "array"},
                "errors": {"type": "array"},
                "policy": {"type": "object"},
                "annotations": {"type": "object"},
            }
        ),
        _READ_ONLY,
        "expand_tool",
    ),
    DiscoveryTool(
        "call_tool",
        "spec",
        "Run one catalogue tool with arguments that match its args_schema (from expand_tool). "
        "On a VALIDATION_ERROR, read error.details.field_errors, fix the arguments and retry.",
        _obj(
            {"tool_id": {"type": "string", "description": "Canonical id or alias of the tool to run."}, "args": _ARGS},
            ["tool_id", "args"],
        ),
        _EXEC_RESULT,
        _RUNS_TOOLS,
        "call_tool",
    ),
)

_GATEWAY = (
    DiscoveryTool(
        "tool_help",
        "gateway",
        'Browse the tool catalogue. "root" lists the top-level groups; a group ("files") lists its operations; '
        'an operation id ("file.read") gives its arguments, defaults, notes and examples. Read an operation\'s '
        "help before tool_exec.",
        _obj(
            {
                "path": {
                    "type": "string",
                    "default": "root",
                    "description": '"root", a group path, or an operation id; from a previous answer or help_path.',
                },
                "format": {
                    "type": "string",
                    "enum": ["short", "full"],
                    "default": "short",
                    "description": "short: one line per item; full: everything.",
                },
                "include_examples": {"type": "boolean", "default": True, "description": "Include example calls."},
                "include_schemas": {
                    "type": "boolean",
                    "default": False,
                    "description": "Include the raw JSON Schemas of arguments and result.",
                },
            }
        ),
        _envelope(
            {
                "path": {"type": "string"},
                "level": {"type": "string"},
                "groups": {"type": "array"},
                "ops": {"type": "array"},
                "op": {"type": "string"},
                "args": {"type": "array"},
                "usage": {"type": "string"},
            }
        ),
        _READ_ONLY,
        "tool_help",
    ),
    DiscoveryTool(
        "tool_exec",
        "gateway",
        "Run one operation. args must match the schema tool_help shows. On an error, call "
        "tool_help(error.help_path), fix the arguments and retry; never guess ids or required fields.",
        _obj(
            {
                "op": {"type": "string", "description": 'Operation id from tool_help, e.g. "file.read".'},
                "args": _ARGS,
                "idempotency_key": {
                    "type": "string",
                    "description": "Repeat a write safely: the same key returns the first result.",
                },
                "dry_run": {"type": "boolean", "default": False, "description": "Validate and describe; run nothing."},
            },
            ["op", "args"],
        ),
        _EXEC_RESULT,
        _RUNS_TOOLS,
        "tool_exec",
    ),
    DiscoveryTool(
        "tool_batch",
        "gateway",
        "Run several operations in one call; each answers like tool_exec, in order.",
        _obj(
            {
                "ops": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "op": {"type": "string"},
                            "args": _ARGS,
                            "idempotency_key": {"type": "string"},
                            "dry_run": {"type": "boolean"},
                        },
                        "required": ["op", "args"],
                        "additionalProperties": False,
                    },
                    "description": "The operations, each {op, args}.",
                },
                "mode": {
                    "type": "string",
                    "enum": ["sequential", "parallel"],
                    "default": "sequential",
                    "description": "sequential stops at the first failure; parallel runs all.",
                },
            },
            ["ops"],
        ),
        {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "results": {"type": "array", "items": _EXEC_RESULT}},
            "required": ["ok", "results"],
        },
        _RUNS_TOOLS,
        "tool_batch",
    ),
)

_NAMESPACED = (
    DiscoveryTool(
        "tool_list",
        "namespaced",
        "List tools by canonical name and alias (metadata only), optionally for one namespace or tag set.",
        _obj(
            {
                "namespace": {"type": "string", "description": 'First id segment, e.g. "file".'},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Keep only tools with all these tags.",
                },
            }
        ),
        _envelope({"namespace": {"type": ["string", "null"]}, "count": {"type": "integer"}, "tools": _LISTED}),
        _READ_ONLY,
        "tool_list",
    ),
    DiscoveryTool(
        "tool_describe",
        "namespaced",
        "Get one tool's full spec (argument schema, examples, errors, policy) by canonical name or alias; "
        "for a skill, its instructions and resource list.",
        _obj(
            {"name": {"type": "string", "description": 'Canonical name ("file.read") or alias ("file_read").'}},
            ["name"],
        ),
        _envelope({"tool_id": {"type": "string"}, "args_schema": {"type": "object"}}),
        _READ_ONLY,
        "tool_describe",
    ),
    DiscoveryTool(
        "find_tool",
        "namespaced",
        "Find the tools that fit a purpose described in plain words; returns ranked pointers with a 0-1 confidence.",
        _obj(
            {
                "purpose": {"type": "string", "minLength": 1, "description": "What you need to get done."},
                "limit": _LIMIT,
            },
            ["purpose"],
        ),
        _envelope(
            {
                "matches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "relevance": {"type": "number"},
                            "reason": {"type": "string"},
                        },
                    },
                }
            }
        ),
        _READ_ONLY,
        "find_tool",
    ),
)

DIALECTS: dict[str, tuple[DiscoveryTool, ...]] = {"spec": _SPEC, "gateway": _GATEWAY, "namespaced": _NAMESPACED}


def dialect_tools(dialect: str) -> tuple[DiscoveryTool, ...]:
    """The discovery tools of ``dialect``; a ValueError names the valid dialects."""
    try:
        return DIALECTS[dialect]
    except KeyError:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECT_NAMES)}") from None


def discovery_tool(name: str, dialect: str | None = None) -> DiscoveryTool | None:
    """The discovery tool called ``name`` (in ``dialect`` when given), or None."""
    for key in (dialect,) if dialect else DIALECT_NAMES:
        for tool in DIALECTS.get(key or "", ()):
            if tool.name == name:
                return tool
    return None


def canonical_name(name: str, to_id: dict[str, str]) -> str | None:
    """Map a provider's tool-call name back: a canonical id stays, an alias becomes its id, else None."""
    if name in to_id:
        return to_id[name]
    if name in to_id.values():
        return name
    return None

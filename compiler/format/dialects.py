"""The discovery tools of each dialect: the one definition that provider exports and the MCP server share.

A dialect is the small set of tools an agent is given instead of the whole catalogue:

* ``spec``: ``list``, ``search_nodes``, ``search_tool_by_category``, ``expand_tool``, ``call_tool``
* ``gateway``: ``tool_help``, ``tool_exec``, ``tool_batch``
* ``namespaced``: ``tool_list``, ``tool_describe``, ``find_tool`` (and, when the catalogue declares them,
  one ``discover_<domain>_tools`` per domain: :func:`domain_tool`, seed 002)
* ``direct``: none; every tool the session may use is exposed itself, with its schema (seed 001's legacy
  mode, the gateway feature flag turned off)

Each tool carries its name, the description a model reads, a JSON Schema of its input
(matching the reader method's keyword arguments), a JSON Schema of its output, MCP
annotations, and the name of the :class:`toolcat.reader.Catalog` method it maps to.
Pure data and stdlib only: the reader imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DIALECT_NAMES: tuple[str, ...] = ("spec", "gateway", "namespaced", "direct")

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
        "type": {"enum": ["tool", "skill", "agent"]},
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
            "type": {"enum": ["tool", "skill", "agent"]},
            "kind": {"enum": ["read", "write"]},
            "summary": {"type": "string"},
        },
        "required": ["name"],
    },
}
_NODES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
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
#: One answer of a batch: an exec envelope, a help answer (``type: "help"``), or ``status: "not_run"``.
_BATCH_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"enum": ["ok", "failed", "not_run"]},
        "type": {"enum": ["exec", "help"]},
        "op": {"type": "string"},
        "ok": {"type": "boolean"},
        "result": {},
        "error": _ERROR,
    },
    "required": ["status"],
}
#: Lean on purpose: every token of these definitions is paid on every turn (bench-tokens); the reader
#: checks bounds itself and answers BAD_REQUEST with the rule.
_LIMIT: dict[str, Any] = {"type": "integer", "maximum": 50}
#: A tool search's query: how to phrase it (every dialect's search for tools; one sentence, it is in every prompt).
_QUERY_HINT = "Action, object, domain: 'upload a file to an S3 bucket'"
_ARGS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": True,
}
#: A node path: "a/b", "a.b" or ["a", "b"]; "" is the root; names match case-insensitively.
_PATH: dict[str, Any] = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    "description": '"coding/refactoring" or ["Coding", "Refactoring"]; "" is the root.',
}
_TAGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_CAPABILITY: dict[str, Any] = {"type": "string", "description": "A skill capability."}
_CURSOR: dict[str, Any] = {"type": "string", "description": "next_cursor of the last page."}


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
    #: Arguments the reader method receives before the caller's (a per-domain tool's ``domain``).
    bound: tuple[tuple[str, str], ...] = ()

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


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null: a null optional argument means the argument is absent (docs/reader.md)."""
    out = dict(schema)
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    elif "enum" in out:  # typed too: Gemini's function declarations need a type on every property
        out["type"] = [*sorted({"string" if isinstance(v, str) else "number" for v in out["enum"]}), "null"]
        out["enum"] = [*out["enum"], None]
    elif "anyOf" in out:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An input schema: its optional properties accept null too (OpenAI's strict mode sends null for each)."""
    needed = required or []
    return {
        "type": "object",
        "properties": {k: v if k in needed else _nullable(v) for k, v in properties.items()},
        "required": needed,
        "additionalProperties": False,
    }


_SPEC = (
    DiscoveryTool(
        "list",
        "spec",
        "Browse a category: its child categories and tools (no schemas). Filters: tags, capability; query ranks.",
        _obj(
            {
                "path": _PATH,
                "tags": _TAGS,
                "capability": _CAPABILITY,
                "query": {"type": "string"},
                "limit": _LIMIT,
                "cursor": _CURSOR,
            }
        ),
        _envelope(
            {
                "path": {"type": "array", "items": {"type": "string"}},
                "nodes": _NODES,
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
        "Find categories for a purpose.",
        _obj({"query": {"type": "string"}, "limit": _LIMIT}, ["query"]),
        _envelope({"results": _NODES}),
        _READ_ONLY,
        "search_nodes",
    ),
    DiscoveryTool(
        "search_tool_by_category",
        "spec",
        'Find tools for a purpose in a category and below it ("" = everywhere).',
        _obj(
            {
                "query": {"type": "string", "description": _QUERY_HINT},
                "category_path": _PATH,
                "limit": _LIMIT,
                "cursor": _CURSOR,
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
        "A tool's full definition (args_schema, examples). Call it before call_tool.",
        _obj({"tool_id": {"type": "string"}}, ["tool_id"]),
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
        "Run a tool with args per its args_schema; on VALIDATION_ERROR fix the listed fields and retry.",
        _obj({"tool_id": {"type": "string"}, "args": _ARGS}, ["tool_id", "args"]),
        _EXEC_RESULT,
        _RUNS_TOOLS,
        "call_tool",
    ),
)

_GATEWAY = (
    DiscoveryTool(
        "tool_help",
        "gateway",
        'Browse ops: path "root" lists groups, a group its ops, an op id its args. query finds ops by purpose.',
        _obj(
            {
                "path": {"type": "string"},
                "query": {"type": "string", "description": _QUERY_HINT},
                "format": {"enum": ["short", "full"]},
                "include_examples": {"type": "boolean"},
                "include_schemas": {"type": "boolean"},
                "limit": _LIMIT,
            }
        ),
        _envelope(
            {
                "path": {"type": "string"},
                "level": {"type": "string"},
                "groups": {"type": "array"},
                "operations": {"type": "array"},
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
        "Run an op with args per its tool_help; on error read tool_help(error.help_path), fix, retry.",
        _obj(
            {
                "op": {"type": "string"},
                "args": _ARGS,
                "idempotency_key": {"type": "string", "description": "Retries with it return the first result."},
                "dry_run": {"type": "boolean"},
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
        'Run up to 100 items {"type": "exec", "op", "args"} or {"type": "help", "path"}; '
        "sequential (default) stops at the first failure.",
        _obj(
            {
                "ops": {"type": "array", "maxItems": 100, "items": {"type": "object"}},
                "mode": {"enum": ["sequential", "parallel"]},
            },
            ["ops"],
        ),
        {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "results": {"type": "array", "items": _BATCH_ITEM}},
            "required": ["ok"],
        },
        _RUNS_TOOLS,
        "tool_batch",
    ),
)

_NAMESPACED = (
    DiscoveryTool(
        "tool_list",
        "namespaced",
        "List tools by name and alias (no schemas), optionally of one namespace, tag set or capability.",
        _obj(
            {
                "namespace": {"type": "string", "description": 'Id prefix, e.g. "file".'},
                "tags": _TAGS,
                "capability": _CAPABILITY,
            }
        ),
        _envelope({"namespace": {"type": ["string", "null"]}, "count": {"type": "integer"}, "tools": _LISTED}),
        _READ_ONLY,
        "tool_list",
    ),
    DiscoveryTool(
        "tool_describe",
        "namespaced",
        "Get a tool's full spec by name or alias; the tool then becomes callable by its alias.",
        _obj({"name": {"type": "string", "description": 'Name ("file.read") or alias ("file_read").'}}, ["name"]),
        _envelope({"tool_id": {"type": "string"}, "alias": {"type": "string"}, "args_schema": {"type": "object"}}),
        _READ_ONLY,
        "tool_describe",
    ),
    DiscoveryTool(
        "find_tool",
        "namespaced",
        "Find tools for a purpose in plain words (0-1 relevance).",
        _obj({"purpose": {"type": "string", "minLength": 1, "description": _QUERY_HINT}, "limit": _LIMIT}, ["purpose"]),
        _envelope(
            {
                "matches": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "summary": {"type": "string"},
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

#: The namespaced dialect's call tool, for a client that cannot receive list changes (no session: protocol
#: 2026-07-28, a stateless HTTP server, a host that fixes its tool list): there a described tool never joins the
#: list, and frameworks call listed tools only, so it is run through this one (docs/mcp.md, "Namespaced
#: execution"). Not in ``DISCOVERY_TOOLS``: a session that lists described tools by alias does not need it.
SESSIONLESS_CALL = DiscoveryTool(
    "tool_call",
    "namespaced",
    "Run a described tool: its name, and arguments per its args_schema.",
    _obj({"name": {"type": "string"}, "arguments": _ARGS}, ["name", "arguments"]),
    _EXEC_RESULT,
    _RUNS_TOOLS,
    "tool_exec",
)

#: Each dialect's discovery tools, by dialect name (the reader's dialect modules are ``toolcat.reader.dialects.DIALECTS``).
DISCOVERY_TOOLS: dict[str, tuple[DiscoveryTool, ...]] = {
    "spec": _SPEC,
    "gateway": _GATEWAY,
    "namespaced": _NAMESPACED,
    "direct": (),  # the catalogue's own tools are the tools (reader/dialects/direct.py lists them)
}


@dataclass(frozen=True, slots=True)
class DialectTraits:
    """What the MCP server, exports, ``serve`` and the integrations need to know about a dialect, declared once.

    They ask these traits, never the dialect's name; adding a dialect means one entry in :data:`TRAITS` (and its
    tools in :data:`DISCOVERY_TOOLS`, its module in ``reader/dialects/``: docs/architecture.md, "add a dialect").
    """

    #: the catalogue's own tools are the dialect's tools: no discovery tools, nothing to describe first (direct)
    catalogue_tools: bool = False
    #: a described tool becomes callable by its alias, per client: working sets, tools/list_changed, and
    #: ``tool_call`` for clients without a session (seed 004's gating: namespaced)
    describe_gates: bool = False
    #: the per-domain ``discover_<domain>_tools`` sit beside its tools (seed 002)
    domain_discovery: bool = False


TRAITS: dict[str, DialectTraits] = {
    "spec": DialectTraits(),
    "gateway": DialectTraits(),
    "namespaced": DialectTraits(describe_gates=True, domain_discovery=True),
    "direct": DialectTraits(catalogue_tools=True),
}


def traits(dialect: str | None) -> DialectTraits:
    """The traits of ``dialect`` (a dialect with none declared has none of them)."""
    return TRAITS.get(dialect or "", DialectTraits())


def manifest_discovery(manifest: dict[str, Any]) -> tuple[bool, list[str]]:
    """The build's ``discovery`` section (``toolcat.yaml``'s, recorded in the manifest), read one way everywhere.

    Whether the catalogue lists its pinned (``always_load``) tools beside the discovery tools by default
    (``discovery.pinned``), and the namespaces it declares per-domain discovery tools for (``discovery.domains``).
    """
    raw = manifest.get("discovery")
    if not isinstance(raw, dict):
        return False, []
    domains = raw.get("domains")
    return raw.get("pinned") is True, [d for d in (domains if isinstance(domains, list) else []) if isinstance(d, str)]


#: The dialect per-domain discovery tools sit in: they sit beside its ``tool_list(namespace)`` (seed 002).
DOMAIN_DIALECT = next(name for name, t in TRAITS.items() if t.domain_discovery)


def domain_tool_name(domain: str) -> str:
    """The per-domain discovery tool of a namespace: ``file`` → ``discover_file_tools`` (seed 002's names)."""
    return f"discover_{domain}_tools"


def domain_tool(domain: str) -> DiscoveryTool:
    """``discover_<domain>_tools(tool?)``: a domain's tools (name and one line), or one tool's details (seed 002).

    It answers through :meth:`toolcat.reader.Catalog.discover` with ``domain`` bound, so the same input
    schema serves every domain; a model reads the domain in the tool's name and description.
    """
    return DiscoveryTool(
        domain_tool_name(domain),
        DOMAIN_DIALECT,
        f"Discover the {domain}.* tools: without arguments their names and one line each; "
        "with tool, that tool's parameters and usage (it then becomes callable by its alias).",
        _obj({"tool": {"type": "string", "description": 'A tool of this domain by name or alias, e.g. "read_file".'}}),
        _envelope(
            {
                "domain": {"type": "string"},
                "count": {"type": "integer"},
                "tools": _LISTED,
                "tool_id": {"type": "string"},
                "alias": {"type": "string"},
                "parameters": {"type": "array", "items": {"type": "string"}},
                "usage": {"type": "string"},
            }
        ),
        _READ_ONLY,
        "discover",
        (("domain", domain),),
    )


def dialect_tools(dialect: str) -> tuple[DiscoveryTool, ...]:
    """The discovery tools of ``dialect``; a ValueError names the valid dialects."""
    try:
        return DISCOVERY_TOOLS[dialect]
    except KeyError:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECT_NAMES)}") from None


def served_tools(dialect: str, domains: Any = ()) -> tuple[DiscoveryTool, ...]:
    """A dialect's discovery tools, and in the namespaced dialect one ``discover_<domain>_tools`` per domain after them.

    ``domains`` is the catalogue's (manifest ``discovery.domains``); other dialects ignore it. The MCP server
    lists, and the provider exports write, exactly these.
    """
    tools = dialect_tools(dialect)
    return (*tools, *(domain_tool(str(d)) for d in domains)) if traits(dialect).domain_discovery else tools


#: Each dialect's help at the root: the call that shows how its tools are called.
_ROOT_HELP: dict[str, dict[str, Any]] = {
    "spec": {"op": "list", "args": {"path": ""}},
    "gateway": {"op": "tool_help", "args": {"path": "root"}},
    "namespaced": {"op": "tool_list", "args": {}},
}


def input_help(tool: DiscoveryTool) -> dict[str, Any]:
    """The next_action after ``tool`` refused its input (VALIDATION_ERROR): its dialect's root help.

    The root help names every tool of the dialect with its usage, so the agent can call ``tool`` again with
    arguments its input schema accepts (the MCP server answers bad input with it).
    """
    return {"op": _ROOT_HELP[tool.dialect]["op"], "args": dict(_ROOT_HELP[tool.dialect]["args"])}


def discovery_tool(name: str, dialect: str | None = None) -> DiscoveryTool | None:
    """The discovery tool called ``name`` (in ``dialect`` when given), or None."""
    for key in (dialect,) if dialect else DIALECT_NAMES:
        for tool in DISCOVERY_TOOLS.get(key or "", ()):
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

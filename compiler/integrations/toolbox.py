"""One dialect's tools for an agent host, in-process: what the framework adapters wrap, with 004's per-step gating.

A :class:`Toolbox` holds a :class:`~toolcat.reader.Catalog` and a dialect, and answers two questions a host asks
every step of its loop: which tools does the model get now (:meth:`Toolbox.tools`), and what does a call of one
of them answer (:meth:`Toolbox.call`, always a JSON-able dict: a result or an error envelope, never a raise).

* ``spec``, ``gateway``: the dialect's discovery tools (``toolcat.format.dialects``), then, when the host asks
  (``Catalog.open(pinned=True)`` or the catalogue's ``discovery.pinned``), the pinned (``always_load``) catalogue
  tools this session can run, by their provider alias (``Catalog.pinned_tools``).
* ``namespaced``: ``tool_list``, ``tool_describe``, ``find_tool`` (and a ``discover_<domain>_tools`` per domain the
  catalogue declares), the pinned tools, and **each tool the model described**: a successful ``tool_describe`` (or
  ``discover_<domain>_tools(tool=...)``) adds the tool, by its alias and with the schema the model was shown, to
  the tools of the next step. That is seed 004's gating ("the model can only call tools that are included in the
  current step's tool list"), kept by the host, so it needs no protocol session: at most ``working_set`` described
  tools stay, the least recently used leaving first.
* ``direct``: every tool the session may see, by alias, with its schema (no discovery).

Only the reader (stdlib) is imported here: the framework adapters (:mod:`toolcat.integrations.langchain`,
:mod:`~toolcat.integrations.openai_agents`, :mod:`~toolcat.integrations.pydantic_ai`) import their framework when
they are imported, and none of them imports ``mcp``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..format.dialects import DIALECT_NAMES, DiscoveryTool, input_help, served_tools, traits
from ..format.envelope import error_envelope
from ..format.types import Json
from ..reader.catalog import Catalog

__all__ = ["WORKING_SET_SIZE", "HostTool", "Toolbox"]

#: Described tools a namespaced toolbox keeps offering; the least recently used one leaves first (as the MCP server).
WORKING_SET_SIZE = 32


@dataclass(frozen=True, slots=True)
class HostTool:
    """One tool as a framework declares it to the model: name, description and a JSON Schema of its arguments."""

    name: str
    description: str
    #: A JSON Schema of type object: the arguments the model sends.
    parameters: dict[str, Any]
    #: The catalogue tool it runs (canonical id); None for a discovery tool.
    tool_id: str | None = None
    #: True when calling it never runs a catalogue tool, or runs one marked read-only.
    read_only: bool = False
    #: A pinned (``always_load``) catalogue tool, offered beside the discovery tools in every dialect.
    pinned: bool = False


def _discovery_host_tool(tool: DiscoveryTool) -> HostTool:
    return HostTool(tool.name, tool.description, tool.input_schema, None, tool.read_only)


def catalogue_host_tool(spec: Json, *, pinned: bool = False) -> HostTool | None:
    """A lean spec (``direct_tools``, ``always_loaded``) or a ``tool_describe`` answer as a tool; None without an alias."""
    tool_id, alias = spec.get("tool_id"), spec.get("alias")
    if not isinstance(tool_id, str) or not isinstance(alias, str) or not alias:
        return None
    raw = spec.get("args_schema")
    schema: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    schema["type"] = "object"
    schema.setdefault("properties", {})
    summary = str(spec.get("summary") or tool_id)
    description = spec.get("description")
    text = f"{summary}\n\n{description}" if isinstance(description, str) and description.strip() != summary else summary
    return HostTool(alias, f"[{tool_id}] {text}", schema, tool_id, spec.get("kind") == "read", pinned)


class Toolbox:
    """The tools of one dialect over one catalogue, for one conversation (its described tools are that conversation's).

    ``Toolbox(Catalog.open("build"), "namespaced")``; a framework adapter asks :meth:`tools` at every step and
    sends each call to :meth:`call`. Listeners added with :meth:`on_change` are told when the tool list changed
    (a namespaced describe), so an adapter holding a live list can update it before the next step.
    """

    def __init__(self, catalog: Catalog, dialect: str = "gateway", *, working_set: int = WORKING_SET_SIZE) -> None:
        if dialect not in DIALECT_NAMES:
            raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECT_NAMES)}")
        if not isinstance(working_set, int) or isinstance(working_set, bool) or working_set < 1:
            raise ValueError(f"working_set must be a positive integer, got {working_set!r}")
        self.catalog = catalog
        self.dialect = dialect
        self.working_set = working_set
        self._discovery = {t.name: t for t in served_tools(dialect, catalog.discovery_domains())}
        self._fixed: dict[str, HostTool] = {}
        for spec in catalog.pinned_tools():  # only when the host asks (Catalog.open(pinned=True)): 001's three tools
            tool = catalogue_host_tool(spec, pinned=True)
            if tool is not None and tool.name not in self._discovery:
                self._fixed[tool.name] = tool
        if traits(dialect).catalogue_tools:
            listed = catalog.direct_tools()
            for spec in listed.get("tools", []) if listed.get("ok") else []:
                tool = catalogue_host_tool(spec)
                if tool is not None:
                    self._fixed.setdefault(tool.name, tool)
        self._described: OrderedDict[str, HostTool] = OrderedDict()
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # -- what the model gets this step ------------------------------------------------------------
    def tools(self) -> list[HostTool]:
        """The tools of the next step: the discovery tools, the pinned (or, direct, every) tool, then the described."""
        with self._lock:
            described = [t for name, t in self._described.items() if name not in self._fixed]
        return [*map(_discovery_host_tool, self._discovery.values()), *self._fixed.values(), *described]

    def described(self) -> list[str]:
        """The aliases the model described and may now call (namespaced), least recently used first."""
        with self._lock:
            return list(self._described)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after each change of :meth:`tools` (a tool described, or one leaving the working set)."""
        self._listeners.append(listener)

    # -- a call --------------------------------------------------------------------------------
    def call(self, name: str, arguments: Any = None) -> Json:
        """Answer a call of the tool ``name``: the reader's answer, or an error envelope (never raises)."""
        args = {} if arguments is None else arguments
        if not isinstance(args, dict):
            return error_envelope(
                "BAD_REQUEST",
                f"the arguments of {name} must be a JSON object, got {type(args).__name__}",
                hints=["Send the arguments as an object of named values."],
            )
        discovery = self._discovery.get(name)
        if discovery is not None:
            return self._discover(discovery, args)
        tool_id = self._catalogue_tool(name)
        if tool_id is None:
            return error_envelope(
                "TOOL_NOT_FOUND",
                f"{name!r:.120} is not one of this step's tools",
                details={"tools": [t.name for t in self.tools()]},
                hints=["Call one of the tools you were given; describe a tool first to be given it (namespaced)."],
                next_action=input_help(next(iter(self._discovery.values()))) if self._discovery else None,
            )
        try:
            return self.catalog.tool_exec(tool_id, args, dialect=self.dialect)
        except Exception as exc:  # the reader answers envelopes; a host handler may still raise
            return error_envelope("INTERNAL", f"{name} failed: {type(exc).__name__}: {exc}")

    def _catalogue_tool(self, name: str) -> str | None:
        fixed = self._fixed.get(name)
        if fixed is not None:
            return fixed.tool_id
        with self._lock:
            described = self._described.get(name)
            if described is not None:
                self._described.move_to_end(name)
                return described.tool_id
        return None

    def _discover(self, tool: DiscoveryTool, args: Json) -> Json:
        """Run a discovery tool's Catalog method; a namespaced describe then offers the tool next step."""
        properties = tool.input_schema.get("properties", {})
        unknown = sorted(set(args) - set(properties))
        missing = [k for k in tool.input_schema.get("required", []) if k not in args]
        if unknown or missing:
            errors = [{"field": k, "message": "unexpected argument", "expected": "absent"} for k in unknown]
            errors += [{"field": k, "message": f"'{k}' is required", "expected": "present"} for k in missing]
            return error_envelope(
                "VALIDATION_ERROR",
                f"{len(errors)} invalid argument(s) for {tool.name}: {', '.join(e['field'] for e in errors)}",
                details={"field_errors": errors, "input_schema": tool.input_schema},
                hints=[f"Call {tool.name} again with arguments that match its input schema (details.input_schema)."],
                next_action=input_help(tool),
            )
        method: Callable[..., Json] = getattr(self.catalog, tool.method)
        try:
            result = method(**dict(tool.bound), **args)
        except Exception as exc:  # a reader method answers envelopes; this is a last resort, never a traceback
            return error_envelope("INTERNAL", f"{tool.name} failed: {type(exc).__name__}: {exc}")
        if (
            traits(self.dialect).describe_gates
            and tool.method in ("tool_describe", "discover")
            and result.get("ok") is True
        ):
            self._remember(result)
        return result

    def _remember(self, described: Json) -> None:
        """Offer a described tool from the next step on (not one this reader cannot run: its describe said why)."""
        tool = catalogue_host_tool(described)
        if tool is None or described.get("executable") is False or tool.name in self._fixed:
            return
        with self._lock:
            changed = self._described.get(tool.name) != tool
            self._described[tool.name] = tool
            self._described.move_to_end(tool.name)
            while len(self._described) > self.working_set:
                self._described.popitem(last=False)
                changed = True
        if changed:
            for listener in list(self._listeners):
                listener()

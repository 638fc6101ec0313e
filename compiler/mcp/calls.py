"""The ``tools/call`` path: which tool a name means, the bounds a call runs under, and the answer it gets.

A discovery tool runs its :class:`~toolcat.reader.Catalog` method (:func:`~.discovery.call_tool`); ``tool_call``
and the catalogue tools a dialect lists by alias (pinned, direct, described) run through ``Catalog.tool_exec``.
Every call runs under the server's per-call deadline (an ``UNAVAILABLE`` envelope past it), the client's
share of the server's calls (:mod:`.fairness`), its idempotency scope, and the version gate (no reload inside
one answer; the answer names its registry_version). A describe that succeeds adds the tool to the client's
working set where a description gates it; a client without a session is told to run catalogue tools through
``tool_call``. A name that means no tool is a protocol error naming the listed ones.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..format.dialects import SESSIONLESS_CALL, DiscoveryTool
from ..format.envelope import error_envelope, is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from ..reader.execution.idempotency import client_scope
from . import fairness, fleet, telemetry
from .clients import client_id, client_key
from .discovery import call_by_tool_call, call_tool, catalog_tool, input_error_envelope, input_errors, json_text
from .toolset import DialectTools

__all__ = ["DESCRIBE_METHODS", "ToolCalls", "call_timeout_envelope"]

log = logging.getLogger(__name__)

#: The Catalog methods whose success describes a tool (it may then join the client's working set).
DESCRIBE_METHODS = frozenset({"tool_describe", "discover"})


def call_timeout_envelope(name: str, seconds: float) -> Json:
    """The answer to a tools/call that ran past the server's per-call deadline."""
    return error_envelope(
        "UNAVAILABLE",
        f"{name} did not finish within this server's {seconds:g} s per-call limit; it was abandoned",
        details={"timeout_s": seconds},
        hints=["Retry with a smaller request (fewer batch items, a narrower query), or later."],
    )


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """Answers ``tools/call`` for one server: runs the named tool within the bounds and shapes its answer."""

    catalog: Catalog
    tools: DialectTools
    #: the server's state namespace, which every client's identity starts with
    namespace: str
    #: the global bound on calls in flight, with each identity's share (issue 36)
    shares: fairness.FairShares
    #: fleet (docs/deploy.md): no reload inside one answer
    gate: fleet.VersionGate
    call_seconds: float

    async def call_tool(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        """``tools/call``: the result as JSON text plus ``structuredContent``; an envelope is ``isError``."""
        arguments = dict(params.arguments or {})
        tool = self.tools.by_name.get(params.name)
        async with self.gate.reading():  # fleet (docs/deploy.md): no reload inside one answer
            result = await self._bounded(ctx, params.name, tool, arguments)
            if tool is not None and tool.method in DESCRIBE_METHODS and result.get("ok") is True:
                await self._describe_made_callable(ctx, result)
            if self.tools.traits.describe_gates and self.tools.working_set(client_key(ctx)) is None:
                result = await anyio.to_thread.run_sync(self._sessionless_answer, result)
            version = self.catalog.registry_version
        return types.CallToolResult(
            content=[types.TextContent(text=json_text(result))],
            structured_content=result,
            is_error=is_error(result) or result.get("ok") is False,
            _meta={fleet.VERSION_META_KEY: version},  # the answer names its version
        )

    async def _bounded(
        self, ctx: ServerRequestContext[Any], name: str, tool: DiscoveryTool | None, arguments: Json
    ) -> Json:
        """Run the call within the per-call deadline, the client's share and its idempotency scope."""
        who = client_id(self.namespace, ctx)
        try:
            # idempotency keys are per client (the worker thread copies the context)
            with anyio.fail_after(self.call_seconds), client_scope(who):
                async with self.shares.slot(who):
                    if tool is SESSIONLESS_CALL:
                        return await self._tool_call(arguments)
                    if tool is not None:
                        call = functools.partial(self.call, tool, arguments)
                        return await telemetry.observe(tool.name, arguments, call, resolve=self.catalog.resolve)
                    return await self._call_catalog_tool(ctx, name, arguments)
        except TimeoutError:
            return call_timeout_envelope(name, self.call_seconds)

    async def call(self, tool: DiscoveryTool, arguments: Json) -> Json:
        """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
        return await call_tool(self.catalog, tool, arguments)

    def _sessionless_answer(self, result: Json) -> Json:
        """An answer to a client without a session: calls of catalogue tools by alias go through tool_call."""
        listed = {tool.name for tool in self.tools.sessionless} | set(self.tools.always)
        return call_by_tool_call(result, listed, self.catalog.resolve)

    async def _tool_call(self, arguments: Json) -> Json:
        """``tool_call(name, arguments)``: the catalogue tool ``name`` (id or alias) run through the reader."""
        errors = input_errors(SESSIONLESS_CALL, arguments)
        if errors:
            return input_error_envelope(SESSIONLESS_CALL, errors)
        name = str(arguments["name"])
        tool_id = await anyio.to_thread.run_sync(self.catalog.resolve, name)
        # an unknown name runs as given: the reader answers TOOL_NOT_FOUND with the closest names
        return await self._run_alias(name, tool_id or name, dict(arguments["arguments"]))

    async def _describe_made_callable(self, ctx: ServerRequestContext[Any], described: Json) -> None:
        """Add a described tool to the client's working set and say the tool list changed (tool_reference-like)."""
        tool = catalog_tool(described)
        working = self.tools.working_set(client_key(ctx))
        if working is None or tool is None or tool.name in self.tools.by_name or not described.get("executable", True):
            return
        if await anyio.to_thread.run_sync(working.add, tool):
            try:
                await ctx.session.send_tool_list_changed()
            except Exception as exc:  # a client that left: the call still answers
                log.debug("cannot send tools/list_changed: %s", exc)

    async def _call_catalog_tool(self, ctx: ServerRequestContext[Any], name: str, arguments: Json) -> Json:
        """Run a pinned or direct catalogue tool, or where a description gates tools any catalogue tool, by alias.

        Where a description gates tools, an alias is callable once the tool exists (the reader applies the
        policy, and ``require_expand`` when set), whether or not it is listed: a stateless client never sees its
        described tools in ``tools/list``, and must still be able to call what ``tool_describe`` told it to.
        Any other name is a protocol error.
        """
        key = client_key(ctx)
        tool = self.tools.always.get(name) or self.tools.direct.get(name)
        working = self.tools.working_set(key)
        if tool is None and working is not None:
            tool = await anyio.to_thread.run_sync(working.get, name)  # the working set is in the state store
        tool_id = tool.tool_id if tool is not None else None
        if tool_id is None and self.tools.traits.describe_gates:
            tool_id = await anyio.to_thread.run_sync(self.catalog.resolve, name)
        if tool_id is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {name!r:.120}",
                data={"tools": [t["name"] for t in self.tools.listed(key)]},
            )
        return await self._run_alias(name, tool_id, arguments)

    async def _run_alias(self, name: str, tool_id: str, arguments: Json) -> Json:
        """Run a catalogue tool called by its alias, in its span (fleet: docs/deploy.md)."""
        run = functools.partial(self.catalog.tool_exec, tool_id, arguments, dialect=self.tools.dialect)
        return await telemetry.observe(name, arguments, lambda: fairness.run_sync(run), tool_id=tool_id)

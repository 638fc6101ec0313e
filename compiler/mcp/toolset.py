"""What one dialect lists in ``tools/list`` over one catalogue, and which names a call may use.

The dialect's discovery tools (:func:`~.discovery.discovery_tools`), the pinned (always-loaded) catalogue tools
when the host or catalogue asks, every catalogue tool when the dialect's tools are the catalogue's own
(``catalogue_tools``: direct), and, when a description gates a tool (``describe_gates``: namespaced), each
handshake-era client's described tools, kept in the state store. What a dialect is asked is its
:class:`~toolcat.format.dialects.DialectTraits`, never its name. :meth:`DialectTools.load` reads it all again
for a new registry_version.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext

from ..format.dialects import DiscoveryTool, traits
from ..reader.catalog import Catalog
from .caching import LIST_TTL_MS
from .clients import client_key
from .discovery import CatalogTool, catalog_tool, direct_catalog_tools, discovery_tools, mcp_tool, sessionless_tools
from .prompts import SYSTEM_PROMPT
from .state import StoredWorkingSet, WorkingSets

__all__ = ["DialectTools"]

log = logging.getLogger(__name__)


class DialectTools:
    """The tools one dialect serves over one catalogue, by name, and each client's view of them."""

    def __init__(self, catalog: Catalog, dialect: str, namespace: str, working_sets: WorkingSets) -> None:
        self.catalog = catalog
        self.dialect = dialect
        self.traits = traits(dialect)
        #: every working set's key starts with this (the server's state namespace)
        self.namespace = namespace
        #: Each handshake-era client's described tools (``describe_gates``), by :func:`~.clients.client_key`.
        self.working_sets = working_sets
        self.load()

    def load(self) -> None:
        """Read the dialect's tools from the catalogue (at start, and for each new registry_version).

        A client that cannot receive list changes (no session) never sees a described tool listed, so where a
        description gates a tool it is listed ``tool_call`` to run one (:func:`~.discovery.sessionless_tools`);
        ``tool_call`` answers in both eras (a handshake-era client is not listed it: its described tools join
        its list). Working sets drop records of other versions as they are read.
        """
        self.tools: tuple[DiscoveryTool, ...] = discovery_tools(self.catalog, self.dialect)
        self.sessionless = sessionless_tools(self.tools) if self.traits.describe_gates else self.tools
        self.by_name: dict[str, DiscoveryTool] = {tool.name: tool for tool in self.sessionless}
        self.always: dict[str, CatalogTool] = self._always_loaded()
        #: the catalogue's own tools (every tool the session may see), by alias, where they are the dialect's tools
        self.direct: dict[str, CatalogTool] = direct_catalog_tools(self.catalog) if self.traits.catalogue_tools else {}

    def _always_loaded(self) -> dict[str, CatalogTool]:
        """The pinned tools by alias: the always-loaded ones this session can run, when the host or catalogue asks.

        Without ``--pinned`` (``Catalog.open(pinned=)``) or the catalogue's ``discovery.pinned``, none: the gateway
        lists exactly its discovery tools. One whose alias is a discovery tool's name is left out.
        """
        out: dict[str, CatalogTool] = {}
        for spec in self.catalog.pinned_tools():  # only when the host or the catalogue asks (seed 001: 3 tools)
            tool = catalog_tool(spec)
            if tool is None or tool.name in self.by_name:
                log.warning("always-loaded tool %s is not exposed: its alias is missing or taken", spec.get("tool_id"))
                continue
            out[tool.name] = replace(tool, pinned=True)
        return out

    def working_set(self, key: str | None) -> StoredWorkingSet | None:
        """The described tools of one handshake-era client (``describe_gates``); None for a stateless request."""
        if key is None or not self.traits.describe_gates:
            return None
        return self.working_sets.of(f"{self.namespace}/{key}")

    def listed(self, key: str | None = None) -> list[dict[str, Any]]:
        """What ``tools/list`` shows a client: the dialect's tools, the always-loaded ones, its described ones."""
        working = self.working_set(key)
        listed = [mcp_tool(tool) for tool in (self.tools if working is not None else self.sessionless)]
        listed += [tool.as_mcp() for tool in self.always.values()]
        listed += [tool.as_mcp() for tool in self.direct.values() if tool.name not in self.always]
        if working is not None:
            listed += [t.as_mcp() for t in working.tools() if t.name not in self.always]
        return listed

    async def list_tools(
        self,
        ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        """``tools/list``: public while it is the same for everyone, private for a client's own described tools."""
        key = client_key(ctx)
        listed = await anyio.to_thread.run_sync(self.listed, key)  # the working set is in the state store
        tools = [types.Tool.model_validate(t) for t in listed]
        if self.working_set(key) is not None:  # this client's own view: its described tools
            return types.ListToolsResult(tools=tools, ttl_ms=0, cache_scope="private")
        return types.ListToolsResult(tools=tools, ttl_ms=LIST_TTL_MS, cache_scope="public")

    def instructions(self) -> str:
        """The server's instructions: the catalogue, its discovery tools, the pinned ones and the system prompt."""
        manifest = self.catalog.manifest
        names = ", ".join(tool.name for tool in self.tools)
        head = f"{manifest.get('title') or 'A tool catalogue'}: {manifest.get('summary') or ''} "
        if not self.tools:  # gateway-modes: the direct dialect lists every tool itself
            return f"{head}Every tool is listed with its input schema; call it by name.".strip()
        pinned = ", ".join(self.always)
        beside = f" Pinned beside them (not discovery tools): {pinned}." if pinned else ""
        era = (
            " A described tool joins your tool list by its alias when your client keeps a session;"
            " otherwise run it with tool_call(name, arguments)."
            if self.traits.describe_gates
            else ""
        )
        return (
            f"{head}Discover and run its tools with {names} ({len(self.tools)} discovery tools).{era}{beside} "
            f"The prompt '{SYSTEM_PROMPT}' explains the workflow."
        ).strip()

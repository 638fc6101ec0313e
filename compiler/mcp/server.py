"""An MCP server over a published catalogue: one dialect's discovery tools, prompts and skills.

The server exposes only the 2-5 discovery tools of the chosen dialect (their names,
descriptions, input and output schemas and annotations come from
:mod:`toolcat.format.dialects`, the source the provider exports use too). A call runs
the matching :class:`toolcat.reader.Catalog` method in a worker thread and answers
with the result as JSON text plus ``structuredContent``; an error envelope from the
reader becomes an ``isError: true`` result carrying the envelope, and so does an input
that breaks the tool's input schema (so the model can correct itself). An unknown
tool name is a protocol error (``-32602``); malformed requests are rejected by the SDK.

The chosen dialect's system prompt is an MCP prompt; skills are MCP resources
(``toolcat://skills/<name>`` is level 2, ``toolcat://skills/<name>/<path>`` level 3),
read only when a client asks. A watcher polls the catalogue (a folder's catalog.json
mtime, or ``Catalog.refresh()`` for a URL); when a new registry_version is published it
swaps it in and tells every client that the tool and resource lists changed.

This module holds the server, its change watcher and its transports; the tool call path is in
:mod:`toolcat.mcp.discovery`, the prompts in :mod:`toolcat.mcp.prompts`, the skill resources in
:mod:`toolcat.mcp.resources` and the stdio framing in :mod:`toolcat.mcp.stdio`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..format.dialects import DiscoveryTool, dialect_tools
from ..format.envelope import ReaderError, is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from . import fleet, prompts, resources, telemetry
from .discovery import (
    CatalogTool,
    WorkingSet,
    call_tool,
    catalog_tool,
    json_text,
    mcp_tool,
    not_described_envelope,
)
from .prompts import SYSTEM_PROMPT, get_prompt, list_prompts
from .resources import resource_templates
from .state import StateStore, open_state  # fleet (issue 26): serve's state behind one interface

__all__ = [
    "FOLDER_POLL_SECONDS",
    "MAX_TRACKED_SESSIONS",
    "URL_POLL_SECONDS",
    "CatalogServer",
    "ServeOptions",
    "make_server",
    "open_catalog",
    "serve",
]

log = logging.getLogger(__name__)


#: Folders are polled often (a stat is cheap); URLs less often (each poll is a conditional GET).
FOLDER_POLL_SECONDS = 1.0
URL_POLL_SECONDS = 30.0
#: Legacy (handshake) sessions kept for change notifications; the oldest are forgotten beyond this.
MAX_TRACKED_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How ``toolcat serve`` runs: which catalogue, which dialect, which transport."""

    location: str
    dialect: str = "gateway"
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    read_only: bool = False
    audit: str | None = None
    poll_seconds: float | None = None
    cache_dir: str | None = None
    #: Which handlers run (``Catalog.open(allow_handlers=)``); None: a folder's all, a URL's none.
    allow_handlers: dict[str, list[Any]] | None = None
    #: ``sha256:<hex>`` of the manifest file to serve (kept across refreshes).
    pin: str | None = None
    #: Folder the file.* tools work in (else $TOOLCAT_SANDBOX).
    sandbox: str | None = None
    # fleet (issue 26): where serve's state lives (memory, sqlite:PATH, redis://HOST:PORT/DB), OTLP, drain
    state: str = "memory"
    otlp_endpoint: str | None = None
    drain_seconds: float = 20.0


class CatalogServer:
    """The MCP server of one catalogue and one dialect; transports call :meth:`run_stdio` or :meth:`run_http`."""

    def __init__(
        self,
        catalog: Catalog,
        dialect: str = "gateway",
        *,
        poll_seconds: float | None = None,
        watch_path: Path | None = None,
        state: StateStore | None = None,
    ) -> None:
        self.catalog = catalog
        # fleet (issue 26): the state store (idempotency, audit) and the gate that keeps one version per answer
        self.state = state if state is not None else open_state("memory")
        self.gate = fleet.VersionGate()
        self.drain_seconds = fleet.DRAIN_SECONDS
        self.dialect = dialect
        self.tools = dialect_tools(dialect)
        self.by_name = {tool.name: tool for tool in self.tools}
        self.watch_path = watch_path
        self.poll_seconds = (
            poll_seconds
            if poll_seconds is not None
            else (FOLDER_POLL_SECONDS if watch_path is not None else URL_POLL_SECONDS)
        )
        self.bus = InMemorySubscriptionBus()
        self._sessions: dict[int, ServerSession] = {}
        #: Each client's described tools (namespaced dialect), by session; bounded like ``_sessions``.
        self._working: dict[int, WorkingSet] = {}
        self.always: dict[str, CatalogTool] = self._always_loaded()
        self.changes = 0
        self.server: Server[Any] = Server(
            "toolcat",
            version=__version__,
            title=f"toolcat ({dialect} dialect)",
            instructions=self._instructions(),
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.middleware.append(self._track_sessions)

    # -- options ----------------------------------------------------------------------------
    def initialization_options(self) -> Any:
        """The initialize result: tools, prompts and resources, each announcing list changes."""
        return self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        )

    def _instructions(self) -> str:
        manifest = self.catalog.manifest
        names = ", ".join(tool.name for tool in self.tools)
        return (
            f"{manifest.get('title') or 'A tool catalogue'}: {manifest.get('summary') or ''} "
            f"Discover and run its tools with {names}; the prompt '{SYSTEM_PROMPT}' explains the workflow."
        ).strip()

    # -- tools --------------------------------------------------------------------------------
    def _always_loaded(self) -> dict[str, CatalogTool]:
        """The catalogue's always-loaded tools by alias (one whose alias is a discovery tool's name is left out)."""
        out: dict[str, CatalogTool] = {}
        for spec in self.catalog.always_loaded():
            tool = catalog_tool(spec)
            if tool is None or tool.name in self.by_name:
                log.warning("always-loaded tool %s is not exposed: its alias is missing or taken", spec.get("tool_id"))
                continue
            out[tool.name] = tool
        return out

    def working_set(self, session: Any) -> WorkingSet:
        """The described tools of one client connection (namespaced dialect).

        The SDK builds a ServerSession per request; the connection behind it (its private ``_connection``,
        pinned SDK) is what stays the same for one client.
        """
        key = id(getattr(session, "_connection", session))
        if key not in self._working:
            if len(self._working) >= MAX_TRACKED_SESSIONS:
                self._working.pop(next(iter(self._working)))
            self._working[key] = WorkingSet()
        return self._working[key]

    def listed_tools(self, session: Any = None) -> list[dict[str, Any]]:
        """What ``tools/list`` shows a session: the dialect's tools, the always-loaded ones, its described ones."""
        listed = [mcp_tool(tool) for tool in self.tools]
        listed += [tool.as_mcp() for tool in self.always.values()]
        if self.dialect == "namespaced" and session is not None:
            listed += [t.as_mcp() for t in self.working_set(session).tools() if t.name not in self.always]
        return listed

    async def _list_tools(
        self,
        ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in self.listed_tools(ctx.session)])

    async def _call_tool(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        tool = self.by_name.get(params.name)
        async with self.gate.reading():  # fleet (issue 26): no reload inside one answer; the answer names its version
            if tool is not None:
                result = await telemetry.observe(tool.name, arguments, functools.partial(self.call, tool, arguments))
                if tool.name == "tool_describe" and result.get("ok") is True:
                    await self._describe_made_callable(ctx, result)
            else:
                result = await self._call_catalog_tool(ctx, params.name, arguments)
            version = self.catalog.registry_version
        failed = is_error(result) or result.get("ok") is False
        return types.CallToolResult(
            content=[types.TextContent(text=json_text(result))],
            structured_content=result,
            is_error=failed,
            _meta={fleet.VERSION_META_KEY: version},
        )

    async def _describe_made_callable(self, ctx: ServerRequestContext[Any], described: Json) -> None:
        """Add a described tool to the client's working set and say the tool list changed (tool_reference-like)."""
        tool = catalog_tool(described)
        if tool is None or tool.name in self.by_name or not described.get("executable", True):
            return
        if self.working_set(ctx.session).add(tool):
            try:
                await ctx.session.send_tool_list_changed()
            except Exception as exc:  # a client that left: the call still answers
                log.debug("cannot send tools/list_changed: %s", exc)

    async def _call_catalog_tool(self, ctx: ServerRequestContext[Any], name: str, arguments: Json) -> Json:
        """Run an always-loaded or described catalogue tool by its alias; an unknown name is a protocol error."""
        tool = self.always.get(name)
        if tool is None and self.dialect == "namespaced":
            tool = self.working_set(ctx.session).get(name)
            if tool is None:
                tool_id = await anyio.to_thread.run_sync(self.catalog.resolve, name)
                if tool_id is not None and self.state.shared:  # fleet (issue 26): stateless, any replica runs it
                    return await self._run_alias(name, tool_id, arguments)
                if tool_id is not None:
                    return not_described_envelope(name, tool_id)
        if tool is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {name!r:.120}",
                data={"tools": [t["name"] for t in self.listed_tools(ctx.session)]},
            )
        return await self._run_alias(name, tool.tool_id, arguments)

    async def _run_alias(self, name: str, tool_id: str, arguments: Json) -> Json:
        """Run a catalogue tool called by its alias, in its span (fleet, issue 26)."""
        run = functools.partial(self.catalog.tool_exec, tool_id, arguments, dialect=self.dialect)
        return await telemetry.observe(name, arguments, lambda: anyio.to_thread.run_sync(run), tool_id=tool_id)

    async def call(self, tool: DiscoveryTool, arguments: Json) -> Json:
        """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
        return await call_tool(self.catalog, tool, arguments)

    # -- prompts ------------------------------------------------------------------------------
    async def _list_prompts(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListPromptsResult:
        return list_prompts(self.dialect)

    async def _get_prompt(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.GetPromptRequestParams,
    ) -> types.GetPromptResult:
        return await get_prompt(self.catalog, self.dialect, params)

    def system_prompt(self) -> str:
        """The dialect's system prompt from the build's prompt sections, else one written from the dialect."""
        return prompts.system_prompt(self.catalog, self.dialect)

    # -- resources (skills) -------------------------------------------------------------------
    def skill_resources(self) -> list[types.Resource]:
        """Level 2 and level 3 of every skill, as resources (their contents are read on demand)."""
        return resources.skill_resources(self.catalog)

    async def _list_resources(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await anyio.to_thread.run_sync(self.skill_resources))

    async def _list_templates(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        return resource_templates()

    async def _read_resource(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.ReadResourceRequestParams,
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(self.read_resource, str(params.uri))

    def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
        return resources.read_resource(self.catalog, uri)

    # -- change notifications -----------------------------------------------------------------
    async def _track_sessions(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[HandlerResult]],
    ) -> HandlerResult:
        """Remember each handshake-era connection (once, at notifications/initialized) to notify it later."""
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            if len(self._sessions) >= MAX_TRACKED_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[id(ctx.session)] = ctx.session
        return result

    async def notify_changed(self) -> int:
        """Tell every client that tools, resources and prompts changed; returns how many sessions were reached."""
        reached = 0
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
                reached += 1
            except Exception as exc:
                log.debug("dropping a closed MCP session: %s", exc)
                self._sessions.pop(key, None)
        for event in (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged()):
            await self.bus.publish(event)
        return reached

    def _stamp(self) -> tuple[int, int] | None:
        if self.watch_path is None:
            return None
        try:
            stat = (self.watch_path / "catalog.json").stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    async def check_for_update(self, last: tuple[int, int] | None) -> tuple[bool, tuple[int, int] | None]:
        """Refresh when the folder's catalog.json changed (or always, for a URL); True when a new version loaded."""
        stamp = self._stamp()
        if self.watch_path is not None and stamp == last:
            return False, last
        previous = self.catalog.registry_version
        try:
            async with self.gate.writing():  # fleet (issue 26): the calls in flight finish on the old version
                changed = await anyio.to_thread.run_sync(self.catalog.refresh)
        except ReaderError as exc:
            log.warning("cannot refresh the catalogue (%s): still serving %s", exc.message, previous)
            return False, last
        if changed:
            self.changes += 1
            self.always = self._always_loaded()
            for working in self._working.values():  # described tools may have changed or gone
                working.clear()
            reached = await self.notify_changed()
            log.info(
                "registry_version %s -> %s; notified %d session(s)", previous, self.catalog.registry_version, reached
            )
        return changed, stamp

    async def watch(self) -> None:
        """Poll for new registry versions until cancelled."""
        last = self._stamp()
        while True:
            await anyio.sleep(self.poll_seconds)
            try:
                _, last = await self.check_for_update(last)
            except Exception:
                log.exception("the catalogue watcher failed; it keeps polling")

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[Json]:
        async with anyio.create_task_group() as group:
            if self.poll_seconds > 0:
                group.start_soon(self.watch)
            yield {}
            group.cancel_scope.cancel()

    # -- transports ---------------------------------------------------------------------------
    async def run_stdio(self) -> None:
        """Serve one client over stdin/stdout until it closes them."""
        from .stdio import stdio_transport  # noqa: PLC0415 - answers bad lines the SDK would drop

        async with stdio_transport() as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream, self.initialization_options())

    def http_app(self, host: str = "127.0.0.1") -> Any:
        """The Starlette app of the streamable HTTP transport, at ``/mcp``.

        With a shared state store (a fleet) it is stateless: no handshake session lives in one replica.
        """
        return self.server.streamable_http_app(host=host, json_response=True, stateless_http=self.state.shared)

    async def run_http(self, host: str, port: int, ready: Callable[[str], None] | None = None) -> None:
        """Serve streamable HTTP on host:port (``/mcp``) until cancelled; ``ready`` gets the URL once bound."""
        import uvicorn  # noqa: PLC0415

        # fleet (issue 26): /healthz, /readyz and the drain on SIGTERM wrap the app
        drain = fleet.Drain(
            self.http_app(host),
            fleet.readiness(lambda: self.catalog.registry_version, self.state.ping),
            self.drain_seconds,
        )
        config = uvicorn.Config(
            drain, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn's `started` is a flag, not an event
            await asyncio.sleep(0.02)
        if server.started:
            fleet.drain_on_sigterm(server, drain)
        if server.started and ready is not None:
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            ready(f"http://{host}:{bound}/mcp")
        await task


def open_catalog(options: ServeOptions) -> Catalog:
    """Open the catalogue ``toolcat serve`` will serve (raises ReaderError when it cannot)."""
    return Catalog.open(
        options.location,
        options.cache_dir,
        read_only=options.read_only,
        audit=options.audit,
        allow_handlers=options.allow_handlers,
        pin=options.pin,
        sandbox=options.sandbox,
    )


def make_server(options: ServeOptions, catalog: Catalog | None = None) -> CatalogServer:
    """A :class:`CatalogServer` for ``options`` (opening the catalogue unless one is given)."""
    catalog = catalog or open_catalog(options)
    is_url = options.location.startswith(("http://", "https://"))
    watch_path = None if is_url else Path(options.location)
    # fleet (issue 26): the state store holds idempotency records and the audit sink for every replica
    state = open_state(options.state)
    catalog.session.use_state(state.idempotency, telemetry.traced(state.audit_sink(catalog.session_id, options.audit)))
    catalog.audit = catalog.session.audit
    server = CatalogServer(
        catalog, options.dialect, poll_seconds=options.poll_seconds, watch_path=watch_path, state=state
    )
    server.drain_seconds = options.drain_seconds
    return server


def serve(options: ServeOptions, ready: Callable[[str], None] | None = None) -> None:
    """Run the server with the chosen transport until the client (stdio) or a signal (http) stops it."""
    telemetry.configure(options.otlp_endpoint)  # fleet (issue 26): OTLP only when configured
    server = make_server(options)
    log.info(
        "serving %s (registry_version %s) with the %s dialect over %s",
        options.location,
        server.catalog.registry_version,
        options.dialect,
        options.transport,
    )
    if options.transport == "stdio":
        anyio.run(server.run_stdio)
    else:
        os.environ.setdefault("PYTHONUNBUFFERED", "1")
        asyncio.run(server.run_http(options.host, options.port, ready))

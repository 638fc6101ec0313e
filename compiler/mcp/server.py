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
read only when a client asks, and also through the Skills extension (``skills/list``,
``skills/get``: :mod:`toolcat.mcp.skills`). A watcher polls the catalogue (a folder's catalog.json
mtime, or ``Catalog.refresh()`` for a URL); when a new registry_version is published it
swaps it in and tells every client that the tool and resource lists changed.

Both protocol eras are served through the SDK's public API: the 2025-11-25 handshake and the stateless
2026-07-28 revision (no session: any replica answers any request). Lists and ``resources/read`` carry
cache hints (``ttlMs``, ``cacheScope``): ``public`` where the answer is fixed by the registry_version,
``private`` for a per-client view. Each call runs under a deadline (``call_seconds``) and each client
under a concurrency bound (``client_calls``), so one client cannot starve the others.

This module holds the server, its change watcher and its transports; the tool call path is in
:mod:`toolcat.mcp.discovery`, the prompts in :mod:`toolcat.mcp.prompts`, the skill resources in
:mod:`toolcat.mcp.resources` and the stdio framing in :mod:`toolcat.mcp.stdio`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import ipaddress
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.caching import CacheHint
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
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..format import settings
from ..format.dialects import SESSIONLESS_CALL, DiscoveryTool, traits
from ..format.envelope import ReaderError, error_envelope, is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from ..reader.execution.idempotency import client_scope
from . import fairness, fleet, prompts, resources, skills, telemetry
from .discovery import (
    CatalogTool,
    call_by_tool_call,
    call_tool,
    catalog_tool,
    direct_catalog_tools,
    discovery_tools,
    input_error_envelope,
    input_errors,
    json_text,
    mcp_tool,
    sessionless_tools,
)
from .http_guard import (
    HEADER_SECONDS,
    IDENTITY_KEY,
    SESSION_IDLE_SECONDS,
    BearerToken,
    ClientIdentity,
    ExposureError,
    ReadDeadline,
    SessionBound,
    exposure,
    guarded_protocol,
)
from .prompts import SYSTEM_PROMPT, get_prompt, list_prompts
from .resources import resource_templates
from .state import (  # fleet (docs/deploy.md): serve's state behind one interface
    StateStore,
    StoredWorkingSet,
    WorkingSets,
    http_stateless,
    open_state,
    state_spec,
)

__all__ = [
    "CALL_SECONDS",
    "CLIENT_CALLS",
    "FOLDER_POLL_SECONDS",
    "LIST_TTL_MS",
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
#: How long a client may keep a list answer fixed by the registry_version (``ttlMs``, ``cacheScope: public``);
#: a new version is also announced (list_changed notifications, subscriptions/listen events).
LIST_TTL_MS = 5 * 60 * 1000
#: Seconds one tools/call may take before the client gets an UNAVAILABLE envelope (the server keeps serving).
CALL_SECONDS = 60.0
#: Calls one client may have running at once; the next wait their turn (other clients are not slowed).
CLIENT_CALLS = 4
#: Calls the whole server runs at once, whoever sends them; a free slot goes to the client running the fewest.
MAX_CALLS = fairness.MAX_CALLS


#: The SDK's own session limit sits this far above toolcat's bound, so an eviction in progress never 503s.
SESSION_SLACK = 16


@dataclass(frozen=True, slots=True)
class HttpGuard:
    """Who may reach the HTTP transport (Host/Origin allow-lists, a bearer token) and how many sessions it keeps."""

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    token: str | None = field(default=None, repr=False)
    max_sessions: int = 1_000
    #: Networks whose X-Forwarded-For (and X-Forwarded-Proto) names the client (``--trusted-proxy CIDR``); none by default.
    trusted_proxies: tuple[str, ...] = ()
    #: Seconds a connection has to send a request's headers, and connections served at once (None: see http_guard).
    header_seconds: float = HEADER_SECONDS
    connection_limit: int | None = None


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
    #: Namespaces the agent may see and run (``Catalog.open(allowed_namespaces=)``); None: all.
    allow_namespaces: tuple[str, ...] | None = None
    #: Namespaces hidden from the agent (applied by listing every namespace but these).
    deny_namespaces: tuple[str, ...] = ()
    #: A tool runs only after the agent read its spec (``Catalog.open(require_expand=)``).
    require_expand: bool = False
    #: Seconds a handler (an http endpoint, an upstream MCP server) has per call (``Catalog.open(timeout=)``).
    timeout: float = 10.0
    #: Seconds one tools/call may take in all (a tool_batch included).
    call_seconds: float = CALL_SECONDS
    #: Calls one client may run at once.
    client_calls: int = CLIENT_CALLS
    #: Calls the whole server runs at once (each client's share is ``client_calls``).
    max_calls: int = MAX_CALLS
    #: HTTP only: networks of the proxies whose X-Forwarded-For is believed (``--trusted-proxy CIDR``).
    trusted_proxies: tuple[str, ...] = ()
    #: HTTP only: seconds to send a request's headers; connections served at once (None: MAX_CONNECTIONS).
    header_seconds: float = HEADER_SECONDS
    connection_limit: int | None = None
    #: HTTP only: Host and Origin values accepted beyond loopback.
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    #: HTTP only: the environment variable holding the bearer token clients must send.
    token_env: str | None = None
    #: HTTP only: handshake-era sessions kept (a new one evicts the one idle for longest).
    max_sessions: int = 1_000

    # fleet (docs/deploy.md): where serve's state lives (memory, sqlite:PATH, redis://HOST:PORT/DB; None: the
    # default of state.state_spec), whether HTTP keeps MCP sessions (None: stateless only for redis), OTLP, drain
    state: str | None = None
    stateless: bool | None = None
    otlp_endpoint: str | None = None
    drain_seconds: float = 20.0
    #: The host's context (``Catalog.open(context=)``, ``--context KEY=VALUE``): values for tools' declared context args.
    context: dict[str, Any] | None = None
    #: List the pinned (always_load) tools beside the discovery tools (``--pinned``); None: the catalogue's setting.
    pinned: bool | None = None


#: The one client of a stdio server: unique per process, so stdio servers sharing a --state file share no keys.
STDIO_CLIENT = f"stdio:{os.urandom(6).hex()}"


def client_key(ctx: ServerRequestContext[Any]) -> str | None:
    """Who is calling, for per-client state: a handshake-era HTTP session's id, :data:`STDIO_CLIENT`, or None.

    Read from public request data only: a 2026-07-28 request belongs to no session (None); over
    streamable HTTP the ``Mcp-Session-Id`` header names the session; over stdio the process has one client.
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return STDIO_CLIENT
    session = headers.get("mcp-session-id")
    return f"http:{session}" if session else None


def peer_key(ctx: ServerRequestContext[Any]) -> str:
    """Who sent a request without a session: its HTTP identity, else its network peer, else the stdio client.

    The HTTP identity is what :class:`~.http_guard.ClientIdentity` gave it (the token's principal, then the
    client key the server issued, else the connection); a peer is ``peer:<address>``; else :data:`STDIO_CLIENT`.
    """
    request_scope = getattr(ctx.request, "scope", None)
    if isinstance(request_scope, dict) and isinstance(request_scope.get(IDENTITY_KEY), str):
        return str(request_scope[IDENTITY_KEY])
    client = getattr(ctx.request, "client", None)
    host = getattr(client, "host", None)
    return f"peer:{host}" if host else STDIO_CLIENT


def state_namespace(catalog: Catalog) -> str:
    """What every state key of a server starts with: a digest of the catalogue and what changes its answers.

    The catalogue's location, the sandbox its file tools work in, read-only, the allowed namespaces and
    the host's context: two servers that differ in any of these never read each other's kept answers or
    working sets, even through one state file (issue 36: servers with two --sandbox folders shared one).
    """
    session = catalog.session
    facts = {
        "location": str(catalog.source.location),
        "sandbox": str(getattr(session.policy, "sandbox", None)),
        "read_only": session.read_only,
        "namespaces": session.allowed_namespaces,
        "context": sorted((str(k), repr(v)) for k, v in session.context.items()),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


def call_timeout_envelope(name: str, seconds: float) -> Json:
    """The answer to a tools/call that ran past the server's per-call deadline."""
    return error_envelope(
        "UNAVAILABLE",
        f"{name} did not finish within this server's {seconds:g} s per-call limit; it was abandoned",
        details={"timeout_s": seconds},
        hints=["Retry with a smaller request (fewer batch items, a narrower query), or later."],
    )


class CatalogServer:
    """The MCP server of one catalogue and one dialect; transports call :meth:`run_stdio` or :meth:`run_http`."""

    def __init__(
        self,
        catalog: Catalog,
        dialect: str = "gateway",
        *,
        poll_seconds: float | None = None,
        watch_path: Path | None = None,
        call_seconds: float = CALL_SECONDS,
        client_calls: int = CLIENT_CALLS,
        state: StateStore | None = None,
        max_calls: int = MAX_CALLS,
    ) -> None:
        self.catalog = catalog
        self.call_seconds = call_seconds
        self.client_calls = client_calls
        #: the global bound on calls in flight, with each identity's share (issue 36)
        self.shares = fairness.FairShares(max_calls, client_calls)
        #: every state key of this server starts with this (catalogue, sandbox, policy)
        self.namespace = state_namespace(catalog)
        # fleet (docs/deploy.md): the state store (idempotency, audit) and the gate that keeps one version per answer
        self.state = state if state is not None else open_state("memory")
        self.gate = fleet.VersionGate()
        self.drain_seconds = fleet.DRAIN_SECONDS
        #: HTTP without MCP sessions (any replica answers any request); False keeps handshake-era sessions.
        self.stateless = False
        self.dialect = dialect
        self.tools = discovery_tools(catalog, dialect)  # gateway-modes: + per-domain tools (namespaced)
        self._index_tools()
        self.watch_path = watch_path
        self.poll_seconds = (
            poll_seconds
            if poll_seconds is not None
            else (FOLDER_POLL_SECONDS if watch_path is not None else URL_POLL_SECONDS)
        )
        self.bus = InMemorySubscriptionBus()
        self._sessions: dict[int, ServerSession] = {}
        #: Each handshake-era client's described tools (namespaced dialect), by :func:`client_key`, in the state store.
        self.working_sets = WorkingSets(self.state.clients, lambda: self.catalog.registry_version)
        self.trusted_proxies: tuple[str, ...] = ()
        self.always: dict[str, CatalogTool] = self._always_loaded()
        #: gateway-modes: the direct dialect's tools (every tool the session may see), by alias; empty elsewhere
        self.direct: dict[str, CatalogTool] = direct_catalog_tools(catalog) if traits(dialect).catalogue_tools else {}
        self.changes = 0
        self.server: Server[Any] = Server(
            "toolcat",
            version=__version__,
            title=f"toolcat ({dialect} dialect)",
            instructions=self._instructions(),
            lifespan=self._lifespan,
            cache_hints={"server/discover": CacheHint(LIST_TTL_MS, "public")},
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
        self.server.add_request_handler("skills/list", skills.SkillsListParams, self._list_skills)
        self.server.add_request_handler("skills/get", skills.SkillsGetParams, self._get_skill)
        self.server.add_request_handler("resources/directory/read", skills.DirectoryReadParams, self._read_directory)
        self.server.extensions[skills.EXTENSION_ID] = dict(skills.SETTINGS)

    def _index_tools(self) -> None:
        """Each discovery tool by name; in the namespaced dialect also the list a client without a session gets.

        A client that cannot receive list changes (no session) never sees a described tool listed, so it is
        listed ``tool_call`` to run one (:func:`~toolcat.mcp.discovery.sessionless_tools`); ``tool_call``
        answers in both eras (a handshake-era client is not listed it: its described tools join its list).
        """
        namespaced = self.dialect == SESSIONLESS_CALL.dialect
        self.sessionless_tools = sessionless_tools(self.tools) if namespaced else self.tools
        self.by_name = {tool.name: tool for tool in self.sessionless_tools}

    # -- options ----------------------------------------------------------------------------
    def initialization_options(self) -> Any:
        """The initialize result: tools, prompts and resources, each announcing list changes."""
        return self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        )

    def _instructions(self) -> str:
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
            if self.dialect == SESSIONLESS_CALL.dialect
            else ""
        )
        return (
            f"{head}Discover and run its tools with {names} ({len(self.tools)} discovery tools).{era}{beside} "
            f"The prompt '{SYSTEM_PROMPT}' explains the workflow."
        ).strip()

    # -- tools --------------------------------------------------------------------------------
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
        """The described tools of one handshake-era client (namespaced dialect); None for a stateless request."""
        if key is None or not traits(self.dialect).describe_gates:
            return None
        return self.working_sets.of(f"{self.namespace}/{key}")

    def listed_tools(self, key: str | None = None) -> list[dict[str, Any]]:
        """What ``tools/list`` shows a client: the dialect's tools, the always-loaded ones, its described ones."""
        working = self.working_set(key)
        listed = [mcp_tool(tool) for tool in (self.tools if working is not None else self.sessionless_tools)]
        listed += [tool.as_mcp() for tool in self.always.values()]
        listed += [tool.as_mcp() for tool in self.direct.values() if tool.name not in self.always]
        if working is not None:
            listed += [t.as_mcp() for t in working.tools() if t.name not in self.always]
        return listed

    async def _list_tools(
        self,
        ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        key = client_key(ctx)
        listed = await anyio.to_thread.run_sync(self.listed_tools, key)  # the working set is in the state store
        tools = [types.Tool.model_validate(t) for t in listed]
        if self.working_set(key) is not None:  # this client's own view: its described tools
            return types.ListToolsResult(tools=tools, ttl_ms=0, cache_scope="private")
        return types.ListToolsResult(tools=tools, ttl_ms=LIST_TTL_MS, cache_scope="public")

    async def _call_tool(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        tool = self.by_name.get(params.name)
        # fleet (docs/deploy.md): no reload inside one answer; the answer names its version
        async with self.gate.reading():
            try:
                # idempotency keys are per client (the worker thread copies the context)
                with anyio.fail_after(self.call_seconds), client_scope(self.client_id(ctx)):
                    async with self.shares.slot(self.client_id(ctx)):
                        if tool is SESSIONLESS_CALL:
                            result = await self._tool_call(arguments)
                        elif tool is not None:
                            call = functools.partial(self.call, tool, arguments)
                            result = await telemetry.observe(tool.name, arguments, call, resolve=self.catalog.resolve)
                        else:
                            result = await self._call_catalog_tool(ctx, params.name, arguments)
            except TimeoutError:
                result = call_timeout_envelope(params.name, self.call_seconds)
            if tool is not None and tool.method in ("tool_describe", "discover") and result.get("ok") is True:
                await self._describe_made_callable(ctx, result)
            if self.dialect == SESSIONLESS_CALL.dialect and self.working_set(client_key(ctx)) is None:
                result = await anyio.to_thread.run_sync(self._sessionless_answer, result)
            version = self.catalog.registry_version
        failed = is_error(result) or result.get("ok") is False
        return types.CallToolResult(
            content=[types.TextContent(text=json_text(result))],
            structured_content=result,
            is_error=failed,
            _meta={fleet.VERSION_META_KEY: version},
        )

    def _sessionless_answer(self, result: Json) -> Json:
        """An answer to a client without a session: calls of catalogue tools by alias go through tool_call."""
        listed = {tool.name for tool in self.sessionless_tools} | set(self.always)
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
        working = self.working_set(client_key(ctx))
        if working is None or tool is None or tool.name in self.by_name or not described.get("executable", True):
            return
        if await anyio.to_thread.run_sync(working.add, tool):
            try:
                await ctx.session.send_tool_list_changed()
            except Exception as exc:  # a client that left: the call still answers
                log.debug("cannot send tools/list_changed: %s", exc)

    async def _call_catalog_tool(self, ctx: ServerRequestContext[Any], name: str, arguments: Json) -> Json:
        """Run an always-loaded catalogue tool, or in the namespaced dialect any catalogue tool, by its alias.

        In the namespaced dialect an alias is callable once the tool exists (the reader applies the policy,
        and ``require_expand`` when set), whether or not it is listed: a stateless client never sees its
        described tools in ``tools/list``, and must still be able to call what ``tool_describe`` told it to.
        Any other name is a protocol error.
        """
        key = client_key(ctx)
        tool = self.always.get(name) or self.direct.get(name)
        working = self.working_set(key)
        if tool is None and working is not None:
            tool = await anyio.to_thread.run_sync(working.get, name)  # the working set is in the state store
        tool_id = tool.tool_id if tool is not None else None
        if tool_id is None and traits(self.dialect).describe_gates:
            tool_id = await anyio.to_thread.run_sync(self.catalog.resolve, name)
        if tool_id is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {name!r:.120}",
                data={"tools": [t["name"] for t in self.listed_tools(key)]},
            )
        return await self._run_alias(name, tool_id, arguments)

    async def _run_alias(self, name: str, tool_id: str, arguments: Json) -> Json:
        """Run a catalogue tool called by its alias, in its span (fleet: docs/deploy.md)."""
        run = functools.partial(self.catalog.tool_exec, tool_id, arguments, dialect=self.dialect)
        return await telemetry.observe(name, arguments, lambda: fairness.run_sync(run), tool_id=tool_id)

    def client_id(self, ctx: ServerRequestContext[Any]) -> str:
        """Who is calling, for idempotency keys and call shares (docs/security.md, "Who a client is").

        Its MCP session (handshake era), else what :class:`~.http_guard.ClientIdentity` named (the token's
        principal, then the client key the server issued, else the connection), else the stdio process;
        prefixed by this server's :func:`state_namespace`, so servers of other catalogues or sandboxes never
        share a key.
        """
        return f"{getattr(self, 'namespace', '')}/{client_key(ctx) or peer_key(ctx)}"

    async def call(self, tool: DiscoveryTool, arguments: Json) -> Json:
        """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
        return await call_tool(self.catalog, tool, arguments)

    # -- the Skills extension -----------------------------------------------------------------
    async def _list_skills(self, _ctx: ServerRequestContext[Any], params: skills.SkillsListParams) -> Json:
        listed = await anyio.to_thread.run_sync(skills.list_skills, self.catalog, params.cursor)
        return {**listed, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}

    async def _get_skill(self, _ctx: ServerRequestContext[Any], params: skills.SkillsGetParams) -> Json:
        found = await anyio.to_thread.run_sync(skills.get_skill, self.catalog, params.uri)
        return {**found, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}

    async def _read_directory(self, _ctx: ServerRequestContext[Any], params: skills.DirectoryReadParams) -> Json:
        return await anyio.to_thread.run_sync(skills.directory_read, self.catalog, params.uri, params.cursor)

    # -- prompts ------------------------------------------------------------------------------
    async def _list_prompts(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListPromptsResult:
        return list_prompts(self.dialect).model_copy(update={"ttl_ms": LIST_TTL_MS, "cache_scope": "public"})

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
        """Every skill's ``skill://<name>/SKILL.md`` (Skills extension), then its level 2 and 3 as ``toolcat://``."""
        return skills.skill_md_resources(self.catalog) + resources.skill_resources(self.catalog)

    async def _list_resources(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        found = await anyio.to_thread.run_sync(self.skill_resources)
        return types.ListResourcesResult(resources=found, ttl_ms=LIST_TTL_MS, cache_scope="public")

    async def _list_templates(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        listed = resource_templates()
        templates = skills.skill_templates() + listed.resource_templates
        return listed.model_copy(
            update={"resource_templates": templates, "ttl_ms": LIST_TTL_MS, "cache_scope": "public"}
        )

    async def _read_resource(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.ReadResourceRequestParams,
    ) -> types.ReadResourceResult:
        found = await anyio.to_thread.run_sync(self.read_resource, str(params.uri))
        return found.model_copy(update={"ttl_ms": LIST_TTL_MS, "cache_scope": "public"})

    def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
        if uri.startswith(skills.SKILL_SCHEME):
            return skills.read_skill_file(self.catalog, uri)
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
            async with self.gate.writing():  # fleet (docs/deploy.md): the calls in flight finish on the old version
                changed = await anyio.to_thread.run_sync(self.catalog.refresh)
        except ReaderError as exc:
            log.warning("cannot refresh the catalogue (%s): still serving %s", exc.message, previous)
            return False, last
        if changed:
            self.changes += 1
            self.always = self._always_loaded()  # working sets drop records of other versions as they are read
            self.tools = discovery_tools(self.catalog, self.dialect)
            self._index_tools()
            self.direct = direct_catalog_tools(self.catalog) if traits(self.dialect).catalogue_tools else {}
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

    def http_app(self, host: str = "127.0.0.1", guard: HttpGuard | None = None) -> Any:
        """The ASGI app of the streamable HTTP transport at ``/mcp``, behind the guards of :mod:`.http_guard`."""
        from mcp.server.transport_security import TransportSecuritySettings  # noqa: PLC0415 - mcp is an optional extra

        guard = guard or HttpGuard()
        seen = exposure(host, guard.allowed_hosts, guard.allowed_origins, token=guard.token is not None)
        for warning in seen.warnings:
            log.warning("%s", warning)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection="*" not in seen.allowed_hosts + seen.allowed_origins,
            allowed_hosts=list(seen.allowed_hosts),
            allowed_origins=list(seen.allowed_origins),
        )
        # mcp 2.2 added the SDK's own idle timeout and session cap; before it, SessionBound alone bounds sessions
        bounds: dict[str, Any] = {
            "session_idle_timeout": SESSION_IDLE_SECONDS,
            "max_sessions": guard.max_sessions + SESSION_SLACK,
        }
        accepted = inspect.signature(self.server.streamable_http_app).parameters
        app: Any = self.server.streamable_http_app(
            host=host,
            json_response=True,
            stateless_http=self.stateless,  # fleet (docs/deploy.md): no handshake session lives in one replica
            transport_security=security,
            **{name: value for name, value in bounds.items() if name in accepted},
        )
        app = ReadDeadline(ClientIdentity(SessionBound(app, guard.max_sessions)))
        return BearerToken(app, guard.token) if guard.token is not None else app

    async def run_http(
        self, host: str, port: int, ready: Callable[[str], None] | None = None, guard: HttpGuard | None = None
    ) -> None:
        """Serve streamable HTTP on host:port (``/mcp``) until cancelled; ``ready`` gets the URL once bound."""
        import uvicorn  # noqa: PLC0415 - uvicorn is an optional extra: imported only on the path that needs it

        # fleet (docs/deploy.md): /healthz, /readyz and the drain on SIGTERM wrap the app
        drain = fleet.Drain(
            self.http_app(host, guard),
            fleet.readiness(lambda: self.catalog.registry_version, self.state.ping),
            self.drain_seconds,
        )
        proxies = list((guard or HttpGuard()).trusted_proxies)
        config = uvicorn.Config(
            drain,
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
            # a time limit on request headers, a bound on connections (issue 36: slowloris)
            http=guarded_protocol((guard or HttpGuard()).header_seconds, (guard or HttpGuard()).connection_limit),
            proxy_headers=bool(proxies),  # X-Forwarded-For only from a proxy the host named (issue 36)
            forwarded_allow_ips=proxies or None,
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
        fleet.exit_after_drain(drain)


def open_catalog(options: ServeOptions) -> Catalog:
    """Open the catalogue ``toolcat serve`` will serve (raises ReaderError when it cannot)."""

    def opened(allowed: list[str] | None) -> Catalog:
        return Catalog.open(
            options.location,
            options.cache_dir,
            read_only=options.read_only,
            audit=options.audit,
            allow_handlers=options.allow_handlers,
            pin=options.pin,
            sandbox=options.sandbox,
            allowed_namespaces=allowed,
            require_expand=options.require_expand,
            timeout=options.timeout,
            context=options.context,
            pinned=options.pinned,
        )

    allowed = list(options.allow_namespaces) if options.allow_namespaces is not None else None
    if not options.deny_namespaces:
        return opened(allowed)
    every = allowed if allowed is not None else namespaces_of(opened(None))
    return opened([name for name in every if name not in options.deny_namespaces])


def namespaces_of(catalog: Catalog) -> list[str]:
    """The top-level namespaces of a catalogue's tools (``file`` of ``file.read``), sorted."""
    listing = catalog.tool_list()
    rows = [] if is_error(listing) else listing.get("tools", [])
    return sorted({str(row["name"]).split(".", 1)[0] for row in rows if isinstance(row.get("name"), str)})


def make_server(options: ServeOptions, catalog: Catalog | None = None) -> CatalogServer:
    """A :class:`CatalogServer` for ``options`` (opening the catalogue unless one is given)."""
    catalog = catalog or open_catalog(options)
    is_url = options.location.startswith(("http://", "https://"))
    watch_path = None if is_url else Path(options.location)
    # fleet (docs/deploy.md): the state store holds idempotency records, working sets and the audit sink
    state = open_state(state_spec(options.state, options.location, options.transport))
    catalog.session.use_state(state.idempotency, telemetry.traced(state.audit_sink(catalog.session_id, options.audit)))
    server = CatalogServer(
        catalog,
        options.dialect,
        poll_seconds=options.poll_seconds,
        watch_path=watch_path,
        call_seconds=options.call_seconds,
        client_calls=options.client_calls,
        state=state,
        max_calls=options.max_calls,
    )
    server.drain_seconds = options.drain_seconds
    server.stateless = http_stateless(options.stateless, state)
    return server


def http_guard(options: ServeOptions) -> HttpGuard:
    """The HTTP guards of ``options``; the token is read from the named environment variable (never logged)."""
    token = None
    if options.token_env is not None:
        token = settings.named(options.token_env)
        if token is None:
            raise ExposureError(
                f"--token-env {options.token_env}: that environment variable is unset or empty; "
                f"export {options.token_env}=<a long random token> and give clients the same token"
            )
    for cidr in options.trusted_proxies:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise ExposureError(
                f"--trusted-proxy {cidr!r} is not an address or network: give the proxy's address or CIDR, "
                "e.g. --trusted-proxy 10.0.0.5 or --trusted-proxy 10.0.0.0/24"
            ) from None
    guard = HttpGuard(
        options.allowed_hosts,
        options.allowed_origins,
        token,
        options.max_sessions,
        tuple(options.trusted_proxies),
        options.header_seconds,
        options.connection_limit,
    )
    exposure(options.host, guard.allowed_hosts, guard.allowed_origins, token=token is not None)  # fail before opening
    return guard


def serve(options: ServeOptions, ready: Callable[[str], None] | None = None) -> None:
    """Run the server with the chosen transport until the client (stdio) or a signal (http) stops it."""
    guard = http_guard(options) if options.transport == "http" else None
    telemetry.configure(options.otlp_endpoint)  # fleet (docs/deploy.md): OTLP only when configured
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
        settings.set_default("PYTHONUNBUFFERED", "1")
        asyncio.run(server.run_http(options.host, options.port, ready, guard))

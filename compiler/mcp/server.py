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

This module holds what ``toolcat serve`` is given (:class:`ServeOptions`) and :class:`CatalogServer`, which
composes the parts, each a module of its own meaning:

- :mod:`.toolset`: what the dialect lists and which names a call may use (asked of the dialect's traits);
- :mod:`.calls`: the ``tools/call`` path, its bounds and its answer (the discovery tools' own call path is
  :mod:`.discovery`);
- :mod:`.content`: prompts, skill resources and the Skills extension (written by :mod:`.prompts`,
  :mod:`.resources`, :mod:`.skills`);
- :mod:`.clients`: who is calling, and the namespace of the server's state keys;
- :mod:`.watch`: new registry versions, and telling every client;
- :mod:`.transports`: stdio and streamable HTTP behind their guards (:mod:`.stdio`, :mod:`.http_guard`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import ListenHandler

from .. import __version__
from ..format import settings
from ..format.dialects import DiscoveryTool
from ..format.envelope import is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from . import clients, fairness, fleet, telemetry, transports
from .caching import LIST_TTL_MS
from .calls import ToolCalls
from .content import CatalogContent
from .discovery import CatalogTool
from .http_guard import HEADER_SECONDS, ExposureError, exposure
from .state import (  # fleet (docs/deploy.md): serve's state behind one interface
    StateStore,
    WorkingSets,
    http_stateless,
    open_state,
    state_spec,
)
from .toolset import DialectTools
from .transports import HttpGuard
from .watch import ChangeWatcher

__all__ = [
    "CALL_SECONDS",
    "CLIENT_CALLS",
    "MAX_CALLS",
    "CatalogServer",
    "ServeOptions",
    "http_guard",
    "make_server",
    "open_catalog",
    "serve",
]

log = logging.getLogger(__name__)


#: Seconds one tools/call may take before the client gets an UNAVAILABLE envelope (the server keeps serving).
CALL_SECONDS = 60.0
#: Calls one client may have running at once; the next wait their turn (other clients are not slowed).
CLIENT_CALLS = 4
#: Calls the whole server runs at once, whoever sends them; a free slot goes to the client running the fewest.
MAX_CALLS = fairness.MAX_CALLS


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


class CatalogServer:
    """The MCP server of one catalogue and one dialect; transports call :meth:`run_stdio` or :meth:`run_http`.

    It owns what its parts share (the catalogue, the state store, the version gate, the call shares) and
    composes them: :attr:`toolset` (what is listed), :attr:`calls` (``tools/call``), :attr:`content`
    (prompts and skills) and :attr:`watcher` (new versions); the low-level SDK :attr:`server` is wired to
    their handlers.
    """

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
        self.dialect = dialect
        #: every state key of this server starts with this (catalogue, sandbox, policy)
        self.namespace = clients.state_namespace(catalog)
        # fleet (docs/deploy.md): the state store (idempotency, audit) and the gate that keeps one version per answer
        self.state = state if state is not None else open_state("memory")
        self.gate = fleet.VersionGate()
        self.drain_seconds = fleet.DRAIN_SECONDS
        #: HTTP without MCP sessions (any replica answers any request); False keeps handshake-era sessions.
        self.stateless = False
        working_sets = WorkingSets(self.state.clients, lambda: self.catalog.registry_version)
        self.toolset = DialectTools(catalog, dialect, self.namespace, working_sets)
        #: the global bound on calls in flight, with each identity's share (issue 36)
        shares = fairness.FairShares(max_calls, client_calls)
        self.calls = ToolCalls(catalog, self.toolset, self.namespace, shares, self.gate, call_seconds)
        self.content = CatalogContent(catalog, dialect)
        self.watcher = ChangeWatcher(
            catalog, self.gate, self.toolset.load, watch_path=watch_path, poll_seconds=poll_seconds
        )
        self.server: Server[Any] = Server(
            "toolcat",
            version=__version__,
            title=f"toolcat ({dialect} dialect)",
            instructions=self.toolset.instructions(),
            lifespan=self.watcher.lifespan,
            cache_hints={"server/discover": CacheHint(LIST_TTL_MS, "public")},
            on_list_tools=self.toolset.list_tools,
            on_call_tool=self.calls.call_tool,
            on_list_prompts=self.content.list_prompts,
            on_get_prompt=self.content.get_prompt,
            on_list_resources=self.content.list_resources,
            on_list_resource_templates=self.content.list_templates,
            on_read_resource=self.content.read_resource_request,
            on_subscriptions_listen=ListenHandler(self.watcher.bus),
        )
        self.server.middleware.append(self.watcher.track_sessions)
        self.content.add_skills_extension(self.server)

    # -- what tests and hosts read of the parts -------------------------------------------------
    @property
    def tools(self) -> tuple[DiscoveryTool, ...]:
        """The dialect's discovery tools (:attr:`DialectTools.tools`)."""
        return self.toolset.tools

    @property
    def by_name(self) -> dict[str, DiscoveryTool]:
        """The discovery tools a call may name, by name."""
        return self.toolset.by_name

    @property
    def direct(self) -> dict[str, CatalogTool]:
        """The catalogue's own tools by alias where they are the dialect's tools; empty elsewhere."""
        return self.toolset.direct

    def listed_tools(self, key: str | None = None) -> list[dict[str, Any]]:
        """What ``tools/list`` shows a client (:meth:`DialectTools.listed`)."""
        return self.toolset.listed(key)

    async def call(self, tool: DiscoveryTool, arguments: Json) -> Json:
        """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
        return await self.calls.call(tool, arguments)

    def client_id(self, ctx: ServerRequestContext[Any]) -> str:
        """Who is calling, prefixed by this server's state namespace (:func:`~.clients.client_id`)."""
        return clients.client_id(getattr(self, "namespace", ""), ctx)

    def system_prompt(self) -> str:
        """The dialect's system prompt from the build's prompt sections, else one written from the dialect."""
        return self.content.system_prompt()

    def skill_resources(self) -> list[Any]:
        """Every skill's resources (:meth:`CatalogContent.skill_resources`)."""
        return self.content.skill_resources()

    def read_resource(self, uri: str) -> Any:
        """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
        return self.content.read_resource(uri)

    # -- transports ---------------------------------------------------------------------------
    async def run_stdio(self) -> None:
        """Serve one client over stdin/stdout until it closes them."""
        await transports.run_stdio(self.server)

    def http_app(self, host: str = "127.0.0.1", guard: HttpGuard | None = None) -> Any:
        """The ASGI app of the streamable HTTP transport at ``/mcp``, behind the guards of :mod:`.http_guard`."""
        return transports.http_app(self.server, host, guard, stateless=self.stateless)

    async def run_http(
        self, host: str, port: int, ready: Callable[[str], None] | None = None, guard: HttpGuard | None = None
    ) -> None:
        """Serve streamable HTTP on host:port (``/mcp``) until cancelled; ``ready`` gets the URL once bound."""
        await transports.run_http(
            self.http_app(host, guard),
            host,
            port,
            ready=ready,
            guard=guard,
            readiness=fleet.readiness(lambda: self.catalog.registry_version, self.state.ping),
            drain_seconds=self.drain_seconds,
        )


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

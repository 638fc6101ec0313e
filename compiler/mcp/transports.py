"""The transports a server runs on: stdio, and streamable HTTP at ``/mcp`` behind its guards.

stdio is one client over stdin/stdout, framed by :mod:`.stdio` (which answers lines the SDK would drop).
Streamable HTTP is the SDK's ASGI app behind :mod:`.http_guard` (Host/Origin allow-lists, a bearer token,
a bound on sessions, a deadline on request headers, who a client is) and :mod:`.fleet` (``/healthz``,
``/readyz``, the drain on SIGTERM), run by uvicorn; both are optional extras, imported on the path that
needs them. What the guards allow is :class:`HttpGuard`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.lowlevel import NotificationOptions, Server

from . import fleet, http_guard

__all__ = ["SESSION_SLACK", "HttpGuard", "http_app", "initialization_options", "run_http", "run_stdio"]

log = logging.getLogger(__name__)

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
    header_seconds: float = http_guard.HEADER_SECONDS
    connection_limit: int | None = None


def initialization_options(server: Server[Any]) -> Any:
    """The initialize result: tools, prompts and resources, each announcing list changes."""
    return server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over stdin/stdout until it closes them."""
    from .stdio import stdio_transport  # noqa: PLC0415 - answers bad lines the SDK would drop

    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, initialization_options(server))


def http_app(server: Server[Any], host: str = "127.0.0.1", guard: HttpGuard | None = None, *, stateless: bool) -> Any:
    """The ASGI app of the streamable HTTP transport at ``/mcp``, behind the guards of :mod:`.http_guard`."""
    from mcp.server.transport_security import TransportSecuritySettings  # noqa: PLC0415 - mcp is an optional extra

    guard = guard or HttpGuard()
    seen = http_guard.exposure(host, guard.allowed_hosts, guard.allowed_origins, token=guard.token is not None)
    for warning in seen.warnings:
        log.warning("%s", warning)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection="*" not in seen.allowed_hosts + seen.allowed_origins,
        allowed_hosts=list(seen.allowed_hosts),
        allowed_origins=list(seen.allowed_origins),
    )
    # mcp 2.2 added the SDK's own idle timeout and session cap; before it, SessionBound alone bounds sessions
    bounds: dict[str, Any] = {
        "session_idle_timeout": http_guard.SESSION_IDLE_SECONDS,
        "max_sessions": guard.max_sessions + SESSION_SLACK,
    }
    accepted = inspect.signature(server.streamable_http_app).parameters
    app: Any = server.streamable_http_app(
        host=host,
        json_response=True,
        stateless_http=stateless,  # fleet (docs/deploy.md): no handshake session lives in one replica
        transport_security=security,
        **{name: value for name, value in bounds.items() if name in accepted},
    )
    app = http_guard.ReadDeadline(http_guard.ClientIdentity(http_guard.SessionBound(app, guard.max_sessions)))
    return http_guard.BearerToken(app, guard.token) if guard.token is not None else app


async def run_http(
    app: Any,
    host: str,
    port: int,
    *,
    ready: Callable[[str], None] | None = None,
    guard: HttpGuard | None = None,
    readiness: Callable[[], str | None],
    drain_seconds: float = fleet.DRAIN_SECONDS,
) -> None:
    """Serve the ASGI ``app`` on host:port until cancelled; ``ready`` gets the URL once bound."""
    import uvicorn  # noqa: PLC0415 - uvicorn is an optional extra: imported only on the path that needs it

    guard = guard or HttpGuard()
    # fleet (docs/deploy.md): /healthz, /readyz and the drain on SIGTERM wrap the app
    drain = fleet.Drain(app, readiness, drain_seconds)
    proxies = list(guard.trusted_proxies)
    config = uvicorn.Config(
        drain,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        # a time limit on request headers, a bound on connections (issue 36: slowloris)
        http=http_guard.guarded_protocol(guard.header_seconds, guard.connection_limit),
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

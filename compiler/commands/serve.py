"""``toolcat serve``: a catalogue as an MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..format.dialects import DIALECT_NAMES, traits
from .flags import SECONDS, bounded, path_option, repeatable
from .reader import allow_handlers_from, context_from, context_option, handler_options


@click.command()
@path_option("--build", "build_dir", "Build folder to serve (default: build).", kind="folder")
@click.option("--url", default=None, help="Base URL of a published catalogue (instead of --build).")
@click.option(
    "--dialect",
    type=click.Choice(DIALECT_NAMES),
    default="gateway",
    show_default=True,
    help="Which discovery tools to expose; direct exposes every allowed tool itself, with its schema (no discovery).",
)
@click.option(
    "--transport",
    type=click.Choice(("stdio", "http")),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@bounded("--port", click.IntRange(0, 65535), 8000, "HTTP port (0 picks a free one and prints it).")
@click.option("--read-only", is_flag=True, help="Refuse tools of kind=write (PERMISSION_DENIED).")
@path_option("--audit", "audit", "Append one JSON line per operation to this file.", kind="file")
@click.option(
    "--poll",
    "poll_seconds",
    type=float,
    default=None,
    help="Seconds between checks for a new registry_version (default 1 for a folder, 30 for a URL; 0 off).",
)
@path_option("--cache-dir", "cache_dir", "On-disk cache for a URL catalogue.", kind="folder")
@click.option(
    "--pin",
    default=None,
    metavar="sha256:HEX",
    help="Serve only the catalogue whose manifest file has this sha256 (kept across refreshes).",
)
@repeatable(
    "--allow-namespace",
    "allow_namespaces",
    "NS",
    "Show and run only tools of this namespace (repeatable; default: all). Others are not listed.",
)
@repeatable("--deny-namespace", "deny_namespaces", "NS", "Hide this namespace's tools from the agent (repeatable).")
@click.option("--require-expand", is_flag=True, help="Run a tool only after the agent read its spec.")
@click.option(
    "--pinned/--no-pinned",
    default=None,
    help="List the catalogue's pinned (always_load) tools that can run here beside the discovery tools "
    "(default: the catalogue's discovery.pinned setting, else only the discovery tools).",
)
@bounded("--timeout", SECONDS, 10.0, "Seconds a handler (an upstream MCP server, an http endpoint) has per call.")
@bounded(
    "--call-timeout",
    SECONDS,
    60.0,
    "Seconds one tools/call (a tool_batch included) may take before the client gets UNAVAILABLE.",
)
@bounded(
    "--client-calls",
    click.IntRange(1, 64),
    4,
    "Calls one client may run at once; more wait their turn, other clients are not slowed.",
)
@bounded(
    "--max-calls",
    click.IntRange(1, 1024),
    32,
    "Calls the whole server runs at once; a free slot goes to the client running the fewest.",
)
@repeatable(
    "--trusted-proxy",
    "trusted_proxies",
    "CIDR",
    "HTTP: believe X-Forwarded-For from this proxy address or network (repeatable; default: none).",
)
@bounded(
    "--header-timeout",
    click.FloatRange(min=0.5, max=600),
    10.0,
    "HTTP: seconds a connection has to send a request's headers before it is closed.",
)
@bounded(
    "--max-connections",
    click.IntRange(8, 65_536),
    None,
    "HTTP: connections served at once (default 512, or half the open-file limit); past it the oldest "
    "connection that has not sent its headers is closed.",
)
@repeatable(
    "--allowed-host",
    "allowed_hosts",
    "HOST[:PORT]",
    "HTTP: a Host header to accept (repeatable); needed with --allowed-origin to serve beyond loopback.",
)
@repeatable(
    "--allowed-origin",
    "allowed_origins",
    "URL",
    "HTTP: a browser Origin to accept, e.g. https://app.example.com (repeatable).",
)
@click.option(
    "--token-env",
    default=None,
    metavar="NAME",
    help="HTTP: require 'Authorization: Bearer <token>', the token read from environment variable NAME.",
)
@bounded(
    "--max-sessions",
    click.IntRange(1, 100_000),
    1000,
    "HTTP: handshake-era sessions kept; a new one ends the one idle for longest.",
)
# fleet (docs/deploy.md): where serve's state lives, OTLP export, the drain on SIGTERM (docs/deploy.md)
@click.option(
    "--state",
    default=None,
    metavar="memory|sqlite:PATH|redis://HOST:PORT/DB",
    help="Where idempotency records, working sets and the audit live (default: HTTP sqlite in "
    "$XDG_STATE_HOME/toolcat/, stdio memory); sqlite is shared on one host, redis across hosts.",
)
@click.option(
    "--stateless/--stateful",
    default=None,
    help="HTTP: answer without MCP sessions, so any replica answers any request (default: stateless only with "
    "redis://). Stateless clients get no list_changed notifications.",
)
@click.option("--otlp-endpoint", default=None, help="Export traces and metrics over OTLP/HTTP here (the [otel] extra).")
@bounded(
    "--drain-seconds",
    click.FloatRange(0, 3600),
    20.0,
    "On SIGTERM, how long to let calls in flight finish while refusing new ones.",
)
@context_option
@handler_options
def serve(
    build_dir: Path | None,
    url: str | None,
    dialect: str,
    transport: str,
    host: str,
    port: int,
    read_only: bool,
    audit: Path | None,
    poll_seconds: float | None,
    cache_dir: Path | None,
    pin: str | None,
    allow_namespaces: tuple[str, ...],
    deny_namespaces: tuple[str, ...],
    require_expand: bool,
    pinned: bool | None,
    timeout: float,
    call_timeout: float,
    client_calls: int,
    max_calls: int,
    trusted_proxies: tuple[str, ...],
    header_timeout: float,
    max_connections: int | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    token_env: str | None,
    max_sessions: int,
    allow_http: tuple[str, ...],
    allow_mcp: tuple[str, ...],
    allow_python: tuple[str, ...],
    sandbox: str | None,
    state: str | None,
    stateless: bool | None,
    otlp_endpoint: str | None,
    drain_seconds: float,
    context_pairs: tuple[str, ...] = (),
) -> None:
    """Serve a catalogue to MCP clients through one dialect's discovery tools.

    A --url catalogue runs no python, http or mcp handler unless an --allow-* flag names it;
    http handlers reach loopback or private addresses only when --allow-http lists them.
    Over HTTP beyond loopback (--host 0.0.0.0) give --allowed-host and --allowed-origin, or --token-env.
    """
    from ..format.envelope import ReaderError  # noqa: PLC0415 - keeps --help fast
    from ..mcp.http_guard import ExposureError  # noqa: PLC0415 - same
    from ..mcp.server import ServeOptions  # noqa: PLC0415 - the mcp SDK is heavy
    from ..mcp.server import serve as run_serve  # noqa: PLC0415 - same module

    if build_dir is not None and url is not None:
        raise click.UsageError("give either --build DIR or --url URL, not both")
    if traits(dialect).catalogue_tools and require_expand:
        raise click.UsageError(
            "--require-expand has no meaning with --dialect direct: every tool is listed with its schema. "
            "Drop --require-expand, or serve a discovery dialect (gateway, spec, namespaced)."
        )
    location = url if url is not None else str(build_dir or Path("build"))
    options = ServeOptions(
        location=location,
        dialect=dialect,
        transport=transport,
        host=host,
        port=port,
        read_only=read_only,
        audit=str(audit) if audit else None,
        poll_seconds=poll_seconds,
        cache_dir=str(cache_dir) if cache_dir else None,
        pin=pin,
        sandbox=sandbox,
        allow_handlers=allow_handlers_from(allow_http, allow_mcp, allow_python),
        allow_namespaces=allow_namespaces or None,
        deny_namespaces=deny_namespaces,
        require_expand=require_expand,
        pinned=pinned,
        timeout=timeout,
        call_seconds=call_timeout,
        client_calls=client_calls,
        max_calls=max_calls,
        trusted_proxies=trusted_proxies,
        header_seconds=header_timeout,
        connection_limit=max_connections,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        token_env=token_env,
        max_sessions=max_sessions,
        state=state,
        stateless=stateless,
        otlp_endpoint=otlp_endpoint,
        drain_seconds=drain_seconds,
        context=context_from(context_pairs),
    )

    def ready(endpoint: str) -> None:
        click.echo(f"toolcat MCP server ({dialect} dialect) listening on {endpoint}", err=True)
        sys.stderr.flush()

    try:
        run_serve(options, ready)
    except ReaderError as exc:
        hint = " ".join(exc.hints)
        raise click.ClickException(f"cannot serve {location}: {exc.message}" + (f" ({hint})" if hint else "")) from None
    except ExposureError as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:  # fleet (docs/deploy.md): a bad --state or --otlp-endpoint
        raise click.BadParameter(str(exc), param_hint="--state/--otlp-endpoint") from None
    except KeyboardInterrupt:
        pass


COMMANDS: list[click.Command] = [serve]

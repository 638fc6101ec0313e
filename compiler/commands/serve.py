"""``toolcat serve``: a catalogue as an MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .reader import allow_handlers_from, handler_options

DIALECTS = ("spec", "gateway", "namespaced")


@click.command()
@click.option(
    "--build",
    "build_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Build folder to serve (default: build).",
)
@click.option("--url", default=None, help="Base URL of a published catalogue (instead of --build).")
@click.option(
    "--dialect",
    type=click.Choice(DIALECTS),
    default="gateway",
    show_default=True,
    help="Which discovery tools to expose.",
)
@click.option(
    "--transport",
    type=click.Choice(("stdio", "http")),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="HTTP port (0 picks a free one and prints it).",
)
@click.option("--read-only", is_flag=True, help="Refuse tools of kind=write (NOT_AUTHORIZED).")
@click.option(
    "--audit",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Append one JSON line per operation to this file.",
)
@click.option(
    "--poll",
    "poll_seconds",
    type=float,
    default=None,
    help="Seconds between checks for a new registry_version (default 1 for a folder, 30 for a URL; 0 off).",
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="On-disk cache for a URL catalogue.",
)
@click.option(
    "--pin",
    default=None,
    metavar="sha256:HEX",
    help="Serve only the catalogue whose manifest file has this sha256 (kept across refreshes).",
)
# fleet (issue 26): where serve's state lives, OTLP export, the drain on SIGTERM (docs/deploy.md)
@click.option(
    "--state",
    default="memory",
    show_default=True,
    metavar="memory|sqlite:PATH|redis://HOST:PORT/DB",
    help="Where idempotency records and the audit live; sqlite and redis are shared by replicas (HTTP is then stateless).",
)
@click.option("--otlp-endpoint", default=None, help="Export traces and metrics over OTLP/HTTP here (the [otel] extra).")
@click.option(
    "--drain-seconds",
    type=click.FloatRange(0, 3600),
    default=20.0,
    show_default=True,
    help="On SIGTERM, how long to let calls in flight finish while refusing new ones.",
)
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
    allow_http: tuple[str, ...],
    allow_mcp: tuple[str, ...],
    allow_python: tuple[str, ...],
    sandbox: str | None,
    state: str,
    otlp_endpoint: str | None,
    drain_seconds: float,
) -> None:
    """Serve a catalogue to MCP clients through one dialect's discovery tools.

    A --url catalogue runs no python, http or mcp handler unless an --allow-* flag names it;
    http handlers reach loopback or private addresses only when --allow-http lists them.
    """
    from ..format.envelope import ReaderError  # noqa: PLC0415 - keeps --help fast
    from ..mcp.server import ServeOptions  # noqa: PLC0415 - the mcp SDK is heavy
    from ..mcp.server import serve as run_serve  # noqa: PLC0415 - same module

    if build_dir is not None and url is not None:
        raise click.UsageError("give either --build DIR or --url URL, not both")
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
        state=state,
        otlp_endpoint=otlp_endpoint,
        drain_seconds=drain_seconds,
    )

    def ready(endpoint: str) -> None:
        click.echo(f"toolcat MCP server ({dialect} dialect) listening on {endpoint}", err=True)
        sys.stderr.flush()

    try:
        run_serve(options, ready)
    except ReaderError as exc:
        hint = " ".join(exc.hints)
        raise click.ClickException(f"cannot serve {location}: {exc.message}" + (f" ({hint})" if hint else "")) from None
    except ValueError as exc:  # fleet (issue 26): a bad --state or --otlp-endpoint
        raise click.BadParameter(str(exc), param_hint="--state/--otlp-endpoint") from None
    except KeyboardInterrupt:
        pass


COMMANDS: list[click.Command] = [serve]

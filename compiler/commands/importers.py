"""``toolcat import openapi`` and ``toolcat import functions``: subcommands of the ``import`` group (toolcat.commands.mcp)."""

from __future__ import annotations

from pathlib import Path

import click

from ..aliases import PROVIDERS
from .mcp import import_group

_OUT = click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder to write (default catalog_src/<namespace>); replaced as a whole, its _import/overrides.yaml kept.",
)
_FORCE = click.option("--force", is_flag=True, help="Replace an --out folder that no import wrote.")


def _report(result: object) -> None:
    from ..importers.common import ImportResult  # noqa: PLC0415 - keeps --help fast

    assert isinstance(result, ImportResult)  # noqa: S101 - both importers return one
    click.echo(f"imported {result.count} tool(s) into {result.path} (namespace {result.namespace})")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


@import_group.command(name="openapi")
@click.argument("spec")
@click.option("--namespace", default=None, help="First id segment of the tools (default: from the spec's title).")
@_OUT
@click.option("--allow-remote-refs", is_flag=True, help="Fetch $refs to http(s) documents (never done otherwise).")
@click.option("--server", default=None, help="Base URL for every operation, instead of the spec's servers.")
@click.option(
    "--server-var",
    "server_vars",
    multiple=True,
    metavar="NAME=VALUE",
    help="A value for a server variable (repeatable); others take their default.",
)
@_FORCE
def import_openapi(
    spec: str,
    namespace: str | None,
    out: Path | None,
    allow_remote_refs: bool,
    server: str | None,
    server_vars: tuple[str, ...],
    force: bool,
) -> None:
    """Write catalogue sources for every operation of an OpenAPI 3.0/3.1 or Swagger 2.0 SPEC (file or URL)."""
    from ..importers.common import ImporterError  # noqa: PLC0415 - keeps --help fast
    from ..importers.openapi import import_openapi as run_import  # noqa: PLC0415 - loads yaml, referencing

    variables: dict[str, str] = {}
    for item in server_vars:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.UsageError(f"--server-var {item!r}: expected NAME=VALUE")
        variables[name] = value
    if server is not None and not server.startswith(("http://", "https://")):
        raise click.UsageError(f"--server {server!r}: expected an http(s) URL")
    try:
        result = run_import(
            spec,
            namespace=namespace,
            out=out,
            allow_remote_refs=allow_remote_refs,
            server=server,
            server_vars=variables,
            force=force,
        )
    except ImporterError as exc:
        raise click.ClickException(str(exc)) from None
    _report(result)


@import_group.command(name="functions")
@click.argument("file", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice((*PROVIDERS, "mcp")),
    help="Whose definition format FILE holds (mcp: a tools/list result, or a folder of per-tool files).",
)
@click.option("--namespace", default=None, help="First id segment of the tools (default: the file's name).")
@_OUT
@_FORCE
def import_functions(file: Path, fmt: str, namespace: str | None, out: Path | None, force: bool) -> None:
    """Write catalogue sources for OpenAI, Anthropic, Gemini or MCP function definitions (no handler: the host runs them)."""
    from ..importers.common import ImporterError  # noqa: PLC0415 - keeps --help fast
    from ..importers.functions import import_functions as run_import  # noqa: PLC0415

    try:
        result = run_import(file, fmt=fmt, namespace=namespace, out=out, force=force)
    except ImporterError as exc:
        raise click.ClickException(str(exc)) from None
    _report(result)


COMMANDS: list[click.Command] = []  # the subcommands hang off ``import``, which toolcat.commands.mcp lists

"""``toolcat import``: turn other tool definitions (MCP servers, OpenAPI documents, functions) into catalogue sources."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..format.aliases import PROVIDERS
from .flags import key_values, path_option, repeatable


@click.group(name="import")
def import_group() -> None:
    """Turn other tool definitions into catalogue sources."""


_OUT = path_option(
    "--out",
    "out",
    "Folder to write (default catalog_src/<namespace>); replaced as a whole, its _import/overrides.yaml kept.",
    kind="folder",
)
_FORCE = click.option("--force", is_flag=True, help="Replace an --out folder that no import wrote.")


def _run(importer: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """Run an importer and report what it wrote; its ImporterError is a one-line error (exit 1)."""
    from ..importers.common import ImporterError, ImportResult  # noqa: PLC0415 - keeps --help fast

    try:
        result = importer(*args, **kwargs)
    except ImporterError as exc:
        raise click.ClickException(str(exc)) from None
    assert isinstance(result, ImportResult)  # noqa: S101 - every importer returns one
    click.echo(f"imported {result.count} tool(s) into {result.path} (namespace {result.namespace})")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


@import_group.command(name="mcp")
@click.option("--command", "command", default=None, help="Start this MCP server over stdio and read its tools/list.")
@click.option("--url", default=None, help="Read tools/list from this streamable HTTP MCP endpoint.")
@path_option(
    "--file",
    "file",
    'A saved tools/list: a JSON list, {"tools": [...]}, or a folder of per-tool JSON files.',
    exists=True,
)
@click.option("--namespace", default=None, help="First id segment of the imported tools (default: from the source).")
@path_option(
    "--out",
    "out",
    "Folder to write (default catalog_src/<namespace>); never one that holds sources no import wrote.",
    kind="folder",
)
@click.option(
    "--server-command",
    default=None,
    help="With --file: the command the mcp handler should start (default: none, tools are not executable).",
)
@click.option("--server-url", default=None, help="With --file: the URL the mcp handler should call.")
@repeatable(
    "--env",
    "env_pairs",
    "KEY=VAR",
    "Give the server KEY from this environment's $VAR; the handler holds the reference ${VAR}, never the "
    "value (repeatable).",
)
@click.option("--timeout", default=60.0, show_default=True, help="Seconds a live import may take in all.")
@_FORCE
def import_mcp(
    command: str | None, url: str | None, file: Path | None, env_pairs: tuple[str, ...], **options: Any
) -> None:
    """Write catalogue sources for the tools of an MCP server, each with an mcp handler."""
    # the other flags (--namespace, --out, --server-command, --server-url, --timeout, --force) are the importer's
    # parameters of the same names
    from ..importers.mcp import import_mcp as run_import  # noqa: PLC0415 - the importer loads yaml and the SDK

    if sum(x is not None for x in (command, url, file)) != 1:
        raise click.UsageError("give exactly one of --command, --url or --file")
    # KEY is the server's variable, VAR this environment's
    env = key_values(env_pairs, "--env", "KEY=VAR", "GITHUB_TOKEN=MY_GITHUB_TOKEN", value_required=True)
    _run(run_import, command=command, url=url, file=file, env=env, **options)


@import_group.command(name="openapi")
@click.argument("spec")
@click.option("--namespace", default=None, help="First id segment of the tools (default: from the spec's title).")
@_OUT
@click.option("--allow-remote-refs", is_flag=True, help="Fetch $refs to http(s) documents (never done otherwise).")
@path_option(
    "--ref-root",
    "ref_root",
    "Folder whose files $refs may read (default: the spec's own folder; a spec given by URL reads no file).",
    kind="folder",
    exists=True,
)
@click.option("--server", default=None, help="Base URL for every operation, instead of the spec's servers.")
@repeatable(
    "--server-var",
    "server_vars",
    "NAME=VALUE",
    "A value for a server variable (repeatable); others take their default.",
)
@_FORCE
def import_openapi(spec: str, server: str | None, server_vars: tuple[str, ...], **options: Any) -> None:
    """Write catalogue sources for every operation of an OpenAPI 3.0/3.1 or Swagger 2.0 SPEC (file or URL)."""
    # the other flags (--namespace, --out, --allow-remote-refs, --ref-root, --force) are the importer's parameters
    # of the same names
    from ..importers.openapi.operations import import_openapi as run_import  # noqa: PLC0415 - loads yaml, referencing

    variables = key_values(server_vars, "--server-var", "NAME=VALUE", "version=v1")
    if server is not None and not server.startswith(("http://", "https://")):
        raise click.UsageError(f"--server {server!r}: expected an http(s) URL")
    _run(run_import, spec, server=server, server_vars=variables, **options)


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
    from ..importers.functions import import_functions as run_import  # noqa: PLC0415 - loaded by the command that needs it

    _run(run_import, file, fmt=fmt, namespace=namespace, out=out, force=force)


COMMANDS: list[click.Command] = [import_group]

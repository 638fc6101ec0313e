"""``toolcat import``: turn other tool definitions (MCP servers, OpenAPI documents, functions) into catalogue sources."""

from __future__ import annotations

from pathlib import Path

import click

from ..format.aliases import PROVIDERS


@click.group(name="import")
def import_group() -> None:
    """Turn other tool definitions into catalogue sources."""


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


@import_group.command(name="mcp")
@click.option("--command", "command", default=None, help="Start this MCP server over stdio and read its tools/list.")
@click.option("--url", default=None, help="Read tools/list from this streamable HTTP MCP endpoint.")
@click.option(
    "--file",
    "file",
    type=click.Path(path_type=Path, exists=True),
    default=None,
    help='A saved tools/list: a JSON list, {"tools": [...]}, or a folder of per-tool JSON files.',
)
@click.option("--namespace", default=None, help="First id segment of the imported tools (default: from the source).")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder to write (default catalog_src/<namespace>); never one that holds sources no import wrote.",
)
@click.option(
    "--server-command",
    default=None,
    help="With --file: the command the mcp handler should start (default: none, tools are not executable).",
)
@click.option("--server-url", default=None, help="With --file: the URL the mcp handler should call.")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VAR",
    help="Give the server KEY from this environment's $VAR; the handler holds the reference ${VAR}, never the "
    "value (repeatable).",
)
@click.option("--timeout", default=60.0, show_default=True, help="Seconds a live import may take in all.")
@_FORCE
def import_mcp(
    command: str | None,
    url: str | None,
    file: Path | None,
    namespace: str | None,
    out: Path | None,
    server_command: str | None,
    server_url: str | None,
    env_pairs: tuple[str, ...],
    timeout: float,
    force: bool,
) -> None:
    """Write catalogue sources for the tools of an MCP server, each with an mcp handler."""
    from ..importers.common import ImporterError  # noqa: PLC0415 - keeps --help fast
    from ..importers.mcp import import_mcp as run_import  # noqa: PLC0415 - the importer loads yaml and the SDK

    if sum(x is not None for x in (command, url, file)) != 1:
        raise click.UsageError("give exactly one of --command, --url or --file")
    env: dict[str, str] = {}
    for pair in env_pairs:
        key, sep, var = pair.partition("=")
        if not sep or not key or not var:
            raise click.UsageError(f"--env {pair!r}: expected KEY=VAR (the server's variable, this environment's)")
        env[key] = var
    try:
        result = run_import(
            command=command,
            url=url,
            file=file,
            namespace=namespace,
            out=out,
            server_command=server_command,
            server_url=server_url,
            env=env,
            force=force,
            timeout=timeout,
        )
    except ImporterError as exc:
        raise click.ClickException(str(exc)) from None
    _report(result)


@import_group.command(name="openapi")
@click.argument("spec")
@click.option("--namespace", default=None, help="First id segment of the tools (default: from the spec's title).")
@_OUT
@click.option("--allow-remote-refs", is_flag=True, help="Fetch $refs to http(s) documents (never done otherwise).")
@click.option(
    "--ref-root",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="Folder whose files $refs may read (default: the spec's own folder; a spec given by URL reads no file).",
)
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
    ref_root: Path | None,
) -> None:
    """Write catalogue sources for every operation of an OpenAPI 3.0/3.1 or Swagger 2.0 SPEC (file or URL)."""
    from ..importers.common import ImporterError  # noqa: PLC0415 - keeps --help fast
    from ..importers.openapi.operations import import_openapi as run_import  # noqa: PLC0415 - loads yaml, referencing

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
            ref_root=ref_root,
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
    from ..importers.functions import import_functions as run_import  # noqa: PLC0415 - loaded by the command that needs it

    try:
        result = run_import(file, fmt=fmt, namespace=namespace, out=out, force=force)
    except ImporterError as exc:
        raise click.ClickException(str(exc)) from None
    _report(result)


COMMANDS: list[click.Command] = [import_group]

"""``toolcat show | help | exec | list``: the runtime reader from the command line.

Each command opens a catalogue (``--build DIR`` or ``--build URL``, optionally ``--pin
sha256:HEX``), makes one reader call and prints its envelope on stdout: JSON with ``--json``, a
readable form otherwise; warnings and errors go to stderr (:mod:`.output`). An error envelope
exits with status 1. ``toolcat exec`` runs handlers only as
the host allows (``--allow-http``, ``--allow-mcp``, ``--allow-python``; ``--sandbox`` for the
``file.*`` tools): see docs/reader.md.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..format import settings
from ..format.types import Json
from .flags import SECONDS, bounded, key_value, key_values, repeatable
from .output import emit, location_options, open_catalog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CatalogSource:
    """Where a reader command's catalogue comes from: ``--build`` (or ``--url``), ``--cache-dir``, ``--version``, ``--pin``."""

    build_dir: str
    url: str | None
    cache_dir: str | None
    version: str | None
    pin: str | None

    def open(self, **policy: Any) -> Any:
        """``Catalog.open`` of this source with the command's ``policy``; a clean error (exit 1) when it cannot."""
        return open_catalog(self.url or self.build_dir, self.cache_dir, version=self.version, pin=self.pin, **policy)


def _source_options(fn: Callable[..., None]) -> Callable[..., None]:
    """The source flags and ``--json``: the command gets ``source`` (a :class:`CatalogSource`) and ``as_json``."""

    @functools.wraps(fn)
    def command(
        *args: Any,
        build_dir: str,
        url: str | None,
        cache_dir: str | None,
        version: str | None,
        pin: str | None,
        **kw: Any,
    ) -> None:
        fn(*args, source=CatalogSource(build_dir, url, cache_dir, version, pin), **kw)

    decorated: Callable[..., None] = click.option(
        "--json", "as_json", is_flag=True, help="Print the reader's JSON envelope."
    )(command)
    decorated = click.option(
        "--pin",
        default=None,
        metavar="sha256:HEX",
        help="Refuse (INTEGRITY) unless the catalogue's manifest file has this sha256 "
        "(the sha256 of the manifest ref in catalog.json).",
    )(decorated)
    decorated = click.option("--version", "version", default=None, help="Pin a published registry_version.")(decorated)
    return location_options(decorated)


def handler_options(fn: Callable[..., None]) -> Callable[..., None]:
    """``--allow-http``, ``--allow-mcp``, ``--allow-python`` and ``--sandbox``: what handlers may run and touch."""
    fn = click.option(
        "--sandbox",
        default=None,
        type=click.Path(file_okay=False, exists=True),
        help="Folder the file.* tools work in (else $TOOLCAT_SANDBOX; without either they refuse).",
    )(fn)
    fn = repeatable(
        "--allow-python",
        "allow_python",
        "PREFIX",
        "Run python handlers from modules with this prefix, e.g. mypkg. (repeatable; "
        "a --url catalogue runs none by default).",
    )(fn)
    fn = repeatable(
        "--allow-mcp",
        "allow_mcp",
        "COMMAND|URL|JSON",
        "Run mcp handlers that start exactly this command line, call this URL, or match "
        """'{"command": [...], "env": {...}, "cwd": "..."}' (repeatable; """
        "a --url catalogue runs none by default).",
    )(fn)
    return repeatable(
        "--allow-http",
        "allow_http",
        "HOST[:PORT]",
        "Let http handlers call this host (repeatable; needed for a --url catalogue, and for "
        "loopback or private addresses).",
    )(fn)


def _keep(kind: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        ctx.meta[f"toolcat.context.{kind}"] = value
        return value

    return callback


def context_option(fn: Callable[..., None]) -> Callable[..., None]:
    """``--context KEY=VALUE``, ``--context-file PATH`` and ``--context-env KEY=VAR``: ``Catalog.open(context=...)``.

    A value on the command line is visible to every local user (``ps``, ``/proc``): a secret belongs in a
    file (``--context-file``, lines of ``KEY=VALUE``) or an environment variable (``--context-env``).
    """
    fn = click.option(
        "--context-env",
        multiple=True,
        metavar="KEY=VAR",
        expose_value=False,
        callback=_keep("env"),
        help="Like --context, the value read from environment variable VAR (kept off the command line).",
    )(fn)
    fn = click.option(
        "--context-file",
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        default=None,
        expose_value=False,
        callback=_keep("file"),
        help="Like --context, one KEY=VALUE per line of this file (# comments); kept off the command line.",
    )(fn)
    return click.option(
        "--context",
        "context_pairs",
        multiple=True,
        metavar="KEY=VALUE",
        help="Fill the argument KEY of every tool that declares it in 'contexts' with VALUE (a string), over "
        "the model's value; the model's schema leaves it out (repeatable). Secrets: --context-file or --context-env.",
    )(fn)


def context_from(pairs: tuple[str, ...]) -> dict[str, str] | None:
    """The host's context: ``--context-file`` lines, then ``--context-env``, then ``--context`` (None when none).

    BadParameter for a line or flag without '=', or an unset variable; a value is never shown in an error.
    """
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    context: dict[str, str] = {}
    file = meta.get("toolcat.context.file")
    if file is not None:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {file}: {exc}", param_hint="--context-file") from None
        for number, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                key, value = key_value(line, f"--context-file (line {number})")
                context[key] = value
    for pair in meta.get("toolcat.context.env") or ():
        key, variable = key_value(pair, "--context-env", "KEY=VAR", "api_key=MY_API_KEY")
        found = settings.named_variables().get(variable.strip())
        if found is None:
            raise click.BadParameter(
                f"environment variable {variable.strip()!r} is not set", param_hint="--context-env"
            )
        context[key] = found
    context.update(key_values(pairs, "--context", "KEY=VALUE", "project_id=P-0001"))
    return context or None


def allow_handlers_from(
    http: tuple[str, ...], mcp: tuple[str, ...], python: tuple[str, ...]
) -> dict[str, list[Any]] | None:
    """The ``allow_handlers`` of the --allow-* flags (None when none was given); BadParameter for bad JSON."""
    allow: dict[str, list[Any]] = {}
    if http:
        allow["http"] = list(http)
    if python:
        allow["python"] = list(python)
    if mcp:
        entries: list[Any] = []
        for text in mcp:
            if text.lstrip().startswith(("{", "[")):
                try:
                    entries.append(json.loads(text))
                except ValueError as exc:
                    raise click.BadParameter(f"{text!r} is not valid JSON: {exc}", param_hint="--allow-mcp") from None
            else:
                entries.append(text)
        allow["mcp"] = entries
    return allow or None


def _render_spec(spec: Json) -> str:
    lines = [
        f"{spec['tool_id']}  ({spec.get('type') or 'tool'}, {spec.get('kind')}; alias {spec.get('alias')})",
        f"  {spec.get('summary')}",
    ]
    if spec.get("deprecated"):
        lines.append(f"  DEPRECATED: {spec['deprecated']}")
    if spec.get("description"):
        lines += ["", *("  " + line for line in str(spec["description"]).strip().splitlines())]
    from ..format.schema_text import schema_text  # noqa: PLC0415 - the one notation of types and rules

    schema = spec.get("args_schema") or {}
    required = set(schema.get("required") or [])
    if schema.get("properties"):
        lines += ["", "arguments:"]
        for name, sub in schema["properties"].items():  # the author's order: the reader's describe keeps it
            flag = " (required)" if name in required else ""
            text = schema_text(sub, schema)
            described = sub.get("description", "") if isinstance(sub, dict) else ""
            lines.append(f"  {name}{flag}: {text}  {described}".rstrip())
    for example in spec.get("examples") or []:
        lines.append(
            f"example: {example.get('description', '')} {json.dumps(example.get('args', {}), ensure_ascii=False)}"
        )
    skill = spec.get("skill")
    if isinstance(skill, dict):
        lines += ["", "--- SKILL.md ---", skill.get("body", "").rstrip()]
        if skill.get("resources"):
            lines.append("resources: " + ", ".join(r["path"] for r in skill["resources"]))
    lines.append(f"\nhandler: {(spec.get('handler') or {}).get('type') or 'none (the host runs it)'}")
    return "\n".join(lines)


def _render_help(out: Json) -> str:
    level = out.get("level")
    if level == "root":
        version = f" (registry {out['registry_version']})" if out.get("registry_version") else ""
        lines = [f"{out.get('title')}{version}", out.get("summary") or "", "groups:"]
        lines += [f"  {g['name']:<16} {g.get('summary', '')}".rstrip() for g in out.get("groups", [])]
        lines.append(out.get("usage", ""))
        return "\n".join(line for line in lines if line)
    if level in ("group", "search"):
        lines = [f"{out['path']}: {out.get('summary') or out.get('query', '')}"]
        lines += [
            f"  {g['path']}/  ({g['op_count']} ops: {', '.join(g.get('sample_ops', []))})"
            for g in out.get("groups", [])
        ]
        lines += [f"  {o['op']:<32} [{o.get('kind')}] {o.get('summary')}" for o in out.get("operations", [])]
        return "\n".join(lines)
    lines = [f"{out['op']} [{out.get('kind')}] {out.get('summary')}", f"usage: {out.get('usage')}", "args:"]
    for arg in out.get("args", []):
        extra = " (required)" if arg.get("required") else ""
        said = [f"default: {json.dumps(arg['default'], ensure_ascii=False)}"] if "default" in arg else []
        rules = "".join(f"; {part}" for part in [*said, *([arg["rules"]] if arg.get("rules") else [])])
        lines.append(f"  {arg['name']}{extra}: {arg['type']}{rules}  {arg.get('description', '')}".rstrip())
    lines += [f"note: {n}" for n in out.get("notes", [])]
    lines += [f"don't: {d}" for d in (out.get("policy") or {}).get("dont", [])]
    lines += [
        f"example: {json.dumps(e.get('args', {}), ensure_ascii=False)}  {e.get('description', '')}"
        for e in out.get("examples", [])
    ]
    return "\n".join(lines)


def _render_list(out: Json) -> str:
    lines = [f"/{'/'.join(out.get('path', []))}  {out.get('title', '')}: {out.get('tool_count', 0)} tool(s) below"]
    lines += [
        f"  {n['name']}/  ({n.get('tool_count', 0)})  {n.get('summary', '')}".rstrip() for n in out.get("nodes", [])
    ]
    lines += [f"  {t['tool_id']:<32} [{t.get('kind')}] {t.get('summary')}" for t in out.get("tools", [])]
    if out.get("next_cursor"):
        lines.append(f"  … more: --cursor {out['next_cursor']}")
    return "\n".join(lines)


def _render_exec(out: Json) -> str:
    if out.get("dry_run"):
        return "\n".join(
            ["dry run: nothing was executed", json.dumps(out.get("would_run"), indent=2, ensure_ascii=False)]
        )
    result = out.get("result")
    body = result if isinstance(result, str) else json.dumps(result, indent=2, ensure_ascii=False, default=repr)
    if isinstance(result, dict) and isinstance(result.get("body"), str) and result.get("level") == 2:
        body = result["body"]
    return body


@click.command("show")
@click.argument("tool_id")
@_source_options
def show(
    tool_id: str,
    source: CatalogSource,
    as_json: bool,
) -> None:
    """Print the full spec of TOOL_ID (canonical id, provider alias or skill name)."""
    catalog = source.open()
    emit(catalog.tool_describe(tool_id), as_json, _render_spec)


@click.command("help")
@click.argument("path", default="root")
@click.option("--full", is_flag=True, help="Everything: description, notes, errors, all examples.")
@click.option("--schemas", is_flag=True, help="Include the raw JSON Schemas.")
@_source_options
def help_(
    path: str,
    full: bool,
    schemas: bool,
    source: CatalogSource,
    as_json: bool,
) -> None:
    """Gateway help for PATH: root, a group (onto, onto.task) or an operation (onto.task.update)."""
    catalog = source.open()
    emit(catalog.tool_help(path, format="full" if full else "short", include_schemas=schemas), as_json, _render_help)


@click.command("exec")
@click.argument("op")
@click.option("--args", "args_json", default="{}", show_default=True, help="Arguments as a JSON object.")
@click.option("--dry-run", is_flag=True, help="Validate and show what would run; run nothing.")
@click.option("--read-only", is_flag=True, help="Refuse tools of kind write.")
@bounded("--timeout", SECONDS, 10.0, "Seconds the handler (an upstream MCP server, an http endpoint) has for the call.")
@repeatable(
    "--allow-secret",
    "allow_secret",
    "HOST=VAR",
    "Let http handlers that call HOST send the environment variable VAR (repeatable; without any, a "
    "folder's handlers may send every variable they name and a --url catalogue's none).",
)
@context_option
@handler_options
@_source_options
def exec_(
    op: str,
    args_json: str,
    dry_run: bool,
    read_only: bool,
    timeout: float,
    allow_secret: tuple[str, ...],
    allow_http: tuple[str, ...],
    allow_mcp: tuple[str, ...],
    allow_python: tuple[str, ...],
    sandbox: str | None,
    source: CatalogSource,
    as_json: bool,
    context_pairs: tuple[str, ...] = (),
) -> None:
    """Validate and run operation OP with --args through its handler (as far as the --allow-* flags allow)."""
    try:
        args = json.loads(args_json)
    except ValueError as exc:
        msg = f'--args is not valid JSON: {exc}. Example: --args \'{{"path": "README.md"}}\''
        raise click.BadParameter(msg, param_hint="--args") from None
    catalog = source.open(
        read_only=read_only,
        sandbox=sandbox,
        timeout=timeout,
        allow_handlers=allow_handlers_from(allow_http, allow_mcp, allow_python),
        allow_secrets=_allow_secrets(allow_secret),
        context=context_from(context_pairs),
    )
    emit(catalog.tool_exec(op, args, dry_run=dry_run), as_json, _render_exec)


def _allow_secrets(pairs: tuple[str, ...]) -> dict[str, list[str]] | None:
    """``--allow-secret HOST=VAR`` flags as ``allow_secrets`` (None when none was given)."""
    table: dict[str, list[str]] = {}
    for pair in pairs:
        host, var = key_value(pair, "--allow-secret", "HOST=VAR", "api.github.com=GITHUB_TOKEN", value_required=True)
        table.setdefault(host, []).append(var)
    return table or None


@click.command("list")
@click.argument("path", default="")
@click.option("--tag", "tags", multiple=True, help="Keep tools with this tag (repeatable; searches the subtree).")
@click.option("--query", default=None, help="Rank the subtree's tools for this text.")
@click.option("--limit", default=20, show_default=True, type=int, help="Tools per page (at most 50).")
@click.option("--cursor", default=None, help="Continue from a previous page.")
@_source_options
def list_(
    path: str,
    tags: tuple[str, ...],
    query: str | None,
    limit: int,
    cursor: str | None,
    source: CatalogSource,
    as_json: bool,
) -> None:
    """List the child nodes and tools at PATH (coding/refactoring; default the root)."""
    catalog = source.open()
    emit(catalog.list(path, tags=list(tags) or None, query=query, limit=limit, cursor=cursor), as_json, _render_list)


COMMANDS: list[click.Command] = [show, help_, exec_, list_]

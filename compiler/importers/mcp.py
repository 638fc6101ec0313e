"""``toolcat import mcp``: an MCP server's ``tools/list`` (live or saved) as catalogue sources.

Each MCP tool becomes one toolcat tool: id ``<namespace>.<name lowercased, other characters → _>``,
``summary`` = the description's first sentence (one line), ``description``, ``args_schema`` =
``inputSchema`` (``{type: object}`` when absent), the MCP ``annotations`` hints, ``kind`` from
``readOnlyHint`` (with a warning naming each such tool, since the hint is the server's word and a
``--read-only`` session will run them), and a ``handler: {type: mcp, command|url, tool}`` that
points back at the server, so toolcat can run it there. Secrets are references:
``--env KEY=VAR`` gives the server ``KEY`` from the host's ``$VAR`` and writes ``env: {KEY:
"${VAR}"}``. Output: ``<out>/_node.yaml``, ``<out>/tools.yaml`` and ``_import/`` written through
:func:`~toolcat.importers.common.write_tree` (atomic, keeps ``_import/overrides.yaml``, never replaces
a folder no import wrote). A live server is held to :data:`IMPORT_TIMEOUT_S`, :data:`MAX_PAGES`
pages and :data:`MAX_TOOLS` tools.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
from pathlib import Path
from typing import Any

from ..format import settings
from ..format.interpreter import interpreter_argv
from ..format.types import Json
from .common import (
    STATE_DIR,
    STATE_FILE,
    ImporterError,
    ImportResult,
    Warnings,
    apply_overrides,
    claim_out,
    dump_yaml,
    read_json,
    read_overrides,
    segment,
    summary_of,
    write_tree,
)

log = logging.getLogger(__name__)


ANNOTATION_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_NAMESPACE_NOISE = re.compile(r"(^mcp[-_]|[-_]mcp([-_]server)?$|[-_]server$)")
#: A live import (start, initialize, every tools/list page) must finish within this many seconds.
IMPORT_TIMEOUT_S = 60.0
#: tools/list pages and tools one import reads; a server that always has a next page stops here.
MAX_PAGES = 100
MAX_TOOLS = 10_000
#: JSON bytes of all tools read from a live server.
MAX_TOOLS_BYTES = 64 * 1024 * 1024
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class McpImportError(ImporterError):
    """A source that cannot be imported: the message says which and how to fix it (an :class:`ImporterError`)."""


def namespace_for(name: str) -> str:
    """A namespace from a server or file name: ``github-mcp-server`` → ``github``."""
    base = _NAMESPACE_NOISE.sub("", name.strip().lower()) or name
    return segment(base)


def read_dump(path: Path) -> list[tuple[str, Any]]:
    """``(JSON pointer, tool)`` for a saved ``tools/list``: the one reader of MCP dumps.

    ``import mcp --file`` and ``import functions --format mcp`` both use it: a JSON list,
    ``{"tools": [...]}``, a JSON-RPC response, one tool object, or a folder of per-tool files.
    """
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".snap") and p.is_file())
        if not files:
            raise McpImportError(f"{path}: no .json tool files in this folder")
        if len(files) > MAX_TOOLS:
            raise McpImportError(f"{path}: more than {MAX_TOOLS:,} tool files")
        return [(f"/{p.name}", read_json(p)) for p in files]
    data = read_json(path)
    prefix = ""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):  # a raw JSON-RPC response
        data, prefix = data["result"], "/result"
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data, prefix = data["tools"], prefix + "/tools"
    elif isinstance(data, dict) and "name" in data:
        return [(prefix or "/", data)]
    if not isinstance(data, list):
        raise McpImportError(f'{path}: expected a JSON list of tools, {{"tools": [...]}} or one tool object')
    return [(f"{prefix}/{i}", t) for i, t in enumerate(data)]


def load_dump(path: Path) -> list[Json]:
    """The tools of a saved ``tools/list`` (see :func:`read_dump`)."""
    return [tool for _, tool in read_dump(path)]


def arguments_schema(arguments: list[Any]) -> Json:
    """A JSON Schema for the Docker MCP registry's flattened ``arguments: [{name, type, desc, optional?, items?}]``."""
    properties: Json = {}
    required: list[str] = []
    for arg in arguments:
        if not isinstance(arg, dict) or not isinstance(arg.get("name"), str):
            continue
        prop: Json = {"type": arg.get("type", "string"), "description": arg.get("desc", "")}
        if "items" in arg:
            prop["items"] = arg["items"] if isinstance(arg["items"], dict) else {"type": arg["items"]}
        properties[arg["name"]] = prop
        if not arg.get("optional"):
            required.append(arg["name"])
    return {"type": "object", "properties": properties, "required": required}


def kind_of(annotations: Json) -> str:
    """read only when the server says ``readOnlyHint: true`` and not ``destructiveHint: true``; write otherwise."""
    return (
        "read"
        if annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True
        else "write"
    )


def convert(tools: list[Any], namespace: str, handler: Json | None) -> tuple[list[Json], list[str]]:
    """toolcat tool definitions for MCP tool entries, and warnings for the ones skipped, renamed or trusted on a hint."""
    out: list[Json] = []
    warnings: list[str] = []
    hinted: list[str] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(tools):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            warnings.append(f"tools[{index}]: skipped, no 'name'")
            continue
        name = entry["name"]
        tool_id = f"{namespace}.{segment(name)}"
        if tool_id in seen:
            if seen[tool_id] == name:
                warnings.append(f"tools[{index}] {name!r}: skipped, a second definition of the same tool")
                continue
            suffix = 2
            while f"{tool_id}_{suffix}" in seen:
                suffix += 1
            warnings.append(
                f"tools[{index}] {name!r}: id {tool_id} is taken by {seen[tool_id]!r}; using {tool_id}_{suffix}"
            )
            tool_id = f"{tool_id}_{suffix}"
        seen[tool_id] = name
        description = str(entry.get("description") or "").strip()
        raw = entry.get("annotations")
        annotations = {k: v for k, v in raw.items() if k in ANNOTATION_KEYS} if isinstance(raw, dict) else {}
        title = annotations.get("title") or entry.get("title")
        schema = entry.get("inputSchema") or entry.get("input_schema") or entry.get("parameters")
        if not schema and isinstance(entry.get("arguments"), list):
            schema = arguments_schema(entry["arguments"])
        if not isinstance(schema, dict) or not schema:
            schema = {"type": "object"}
        schema = dict(schema)
        schema.setdefault("type", "object")
        tool: Json = {
            "id": tool_id,
            "summary": summary_of(description, str(title or name.replace("_", " "))),
        }
        if description:
            tool["description"] = description
        tool["kind"] = kind_of(annotations)
        if tool["kind"] == "read":
            hinted.append(tool_id)
        tool["tags"] = [namespace, "mcp"]
        tool["args_schema"] = schema
        if isinstance(entry.get("outputSchema"), dict):
            tool["result_schema"] = entry["outputSchema"]
        if annotations:
            tool["annotations"] = annotations
        if handler is not None:
            tool["handler"] = {**handler, "tool": name}
        out.append(tool)
    if hinted:
        shown = ", ".join(hinted[:5]) + (f" and {len(hinted) - 5} more" if len(hinted) > 5 else "")
        warnings.append(
            f"{len(hinted)} tool(s) are kind: read only because the server says readOnlyHint: {shown}; "
            "a --read-only session will run them: check them, or set kind: write in _import/overrides.yaml"
        )
    return out, warnings


def node_of(namespace: str, title: str) -> Json:
    """The root ``_node.yaml`` of an import."""
    return {
        "title": title,
        "summary": f"Tools of the {title} MCP server, imported from its tools/list.",
        "tags": [namespace, "mcp"],
    }


def render(node: Json, tools: list[Json]) -> dict[str, str]:
    """``{relative path: YAML text}`` of an import (the one YAML dumper every importer uses)."""
    header = (
        f"# Generated by `toolcat import mcp` ({len(tools)} tools). A re-import replaces this file: put your "
        "own changes in _import/overrides.yaml.\n"
    )
    return {"_node.yaml": dump_yaml(node), "tools.yaml": header + dump_yaml({"tools": tools})}


async def fetch_tools(
    command: list[str] | None, url: str | None, env: dict[str, str] | None = None, seconds: float = IMPORT_TIMEOUT_S
) -> tuple[list[Json], str]:
    """``tools/list`` (every page) of a live server, and the server's name, within ``seconds`` in all."""
    import anyio  # noqa: PLC0415 - anyio is an optional extra: imported only on the path that needs it
    from mcp import ClientSession  # noqa: PLC0415 - the SDK only for live imports
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415 - mcp is an optional extra
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 - mcp is an optional extra

    transport: Any
    if command is not None:
        argv = interpreter_argv(command)  # python means this interpreter, as in the mcp handler that runs the tools
        transport = stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env=env or None))
    else:
        transport = streamable_http_client(str(url))
    tools: list[Json] = []
    with anyio.fail_after(seconds):
        async with transport as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
            init = await session.initialize()
            await _pages(session, tools)
    return tools, init.server_info.name


async def _pages(session: Any, tools: list[Json]) -> None:
    """Every tools/list page into ``tools``, held to :data:`MAX_PAGES`, :data:`MAX_TOOLS` and :data:`MAX_TOOLS_BYTES`."""
    import mcp_types  # noqa: PLC0415 - mcp_types is an optional extra: imported only on the path that needs it

    cursor: str | None = None
    seen: set[str] = set()
    size = 0
    for _ in range(MAX_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        for tool in page.tools:
            entry = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            size += len(json.dumps(entry))
            tools.append(entry)
            if len(tools) > MAX_TOOLS or size > MAX_TOOLS_BYTES:
                raise McpImportError(
                    f"the server lists more than {MAX_TOOLS:,} tools or {MAX_TOOLS_BYTES:,} bytes of them; "
                    "save a smaller tools/list and import it with --file"
                )
        cursor = page.next_cursor
        if not cursor:
            return
        if cursor in seen:
            raise McpImportError(f"the server's tools/list repeats the page cursor {cursor[:40]!r}: it never ends")
        seen.add(cursor)
    raise McpImportError(f"the server's tools/list has more than {MAX_PAGES} pages; save it and import it with --file")


def env_references(pairs: dict[str, str] | None) -> dict[str, str]:
    """``--env KEY=VAR`` pairs as the handler's ``env``: ``{KEY: "${VAR}"}`` (a reference, never a value)."""
    out: dict[str, str] = {}
    for key, var in (pairs or {}).items():
        if not _ENV_NAME.match(key) or not _ENV_NAME.match(var):
            raise McpImportError(f"--env {key}={var}: expected KEY=VAR, both environment variable names")
        out[key] = "${" + var + "}"
    return out


def _live(command: str | None, url: str | None, env: dict[str, str], timeout: float) -> tuple[list[Any], str, Json]:
    """The tools, server name and handler of a live server (the server gets ``env``'s values from this process)."""
    import anyio  # noqa: PLC0415 - anyio is an optional extra: imported only on the path that needs it

    argv = shlex.split(command) if command is not None else None
    if argv is not None and not argv:
        raise McpImportError("--command is empty")
    missing = sorted(var[2:-1] for var in env.values() if settings.named(var[2:-1]) is None)
    if missing:
        raise McpImportError(f"--env names {', '.join(missing)}, which is not set in this environment")
    values = {key: settings.named(var[2:-1]) or "" for key, var in env.items()}
    try:
        tools, server_name = anyio.run(fetch_tools, argv, url, values, timeout)
    except McpImportError:
        raise
    except Exception as exc:
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, McpImportError):
            raise leaf from None
        reason = (
            f"no answer within {timeout:g} s" if isinstance(leaf, TimeoutError) else f"{type(leaf).__name__}: {leaf}"
        )
        raise McpImportError(f"cannot read tools/list from {command or url}: {reason}") from None
    handler: Json = {"type": "mcp", "command": argv} if argv is not None else {"type": "mcp", "url": url}
    if env and argv is not None:
        handler["env"] = env
    return tools, str(server_name), handler


def import_mcp(
    *,
    command: str | None = None,
    url: str | None = None,
    file: Path | None = None,
    namespace: str | None = None,
    out: Path | None = None,
    server_command: str | None = None,
    server_url: str | None = None,
    src_root: Path = Path("catalog_src"),
    env: dict[str, str] | None = None,
    force: bool = False,
    timeout: float = IMPORT_TIMEOUT_S,
) -> ImportResult:
    """Import one server's tools (live over stdio or HTTP, or from a saved dump) as catalogue sources.

    ``env={"KEY": "VAR"}`` gives the server ``KEY`` from this process's ``$VAR`` and writes the
    reference ``${VAR}`` into the handler; an ``out`` folder no import wrote is never replaced
    unless ``force``.
    """
    references = env_references(env)
    if out is not None:
        claim_out(out, force=force)  # before a live server is started
    handler: Json | None
    if command is not None or url is not None:
        tools, source_name, handler = _live(command, url, references, timeout)
    elif file is not None:
        tools = load_dump(file)
        source_name = file.stem if file.is_file() else (file.name if file.name != "toolsnaps" else file.parent.name)
        if server_command and server_url:
            raise McpImportError("give --server-command or --server-url, not both")
        handler = (
            {"type": "mcp", "command": shlex.split(server_command)}
            if server_command
            else {"type": "mcp", "url": server_url}
            if server_url
            else None
        )
        if handler is not None and references and server_command:
            handler["env"] = references
    else:
        raise McpImportError("give one of command, url or file")
    ns = segment(namespace) if namespace else namespace_for(source_name)
    converted, notes = convert(tools, ns, handler)
    if not converted:
        raise McpImportError(f"{command or url or file}: no tools to import")
    if handler is None:
        notes.append("no server given (--server-command/--server-url): the tools are listed but not executable")
    target = out if out is not None else src_root / ns
    claim_out(target, force=force)
    files = _files(target, ns, source_name, converted, command or url or str(file), notes)
    write_tree(target, files, force=force)
    log.info("imported %d tools into %s", len(converted), target)
    return ImportResult(target, ns, len(converted), tuple(t["id"] for t in converted), tuple(notes))


def _files(target: Path, ns: str, title: str, tools: list[Json], source: str, notes: list[str]) -> dict[str, str]:
    """The files of an import, with the author's overrides applied, and the importer's state."""
    warnings = Warnings()
    overrides, _ = read_overrides(target)
    node = node_of(ns, title)
    apply_overrides({t["id"]: t for t in tools}, {"": node}, overrides, warnings)
    notes.extend(warnings.lines())
    files = render(node, tools)
    files[f"{STATE_DIR}/{STATE_FILE}"] = (
        json.dumps({"importer": "mcp", "source": source, "namespace": ns}, indent=1, sort_keys=True) + "\n"
    )
    return files

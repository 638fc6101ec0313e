"""``toolcat import mcp``: an MCP server's ``tools/list`` (live or saved) as catalogue sources.

Each MCP tool becomes one toolcat tool: id ``<namespace>.<name lowercased, other characters → _>``,
``summary`` = the description's first sentence (one line), ``description``, ``args_schema`` =
``inputSchema`` (``{type: object}`` when absent), the MCP ``annotations`` hints, ``kind`` from
``readOnlyHint``, and a ``handler: {type: mcp, command|url, tool}`` that points back at the
server, so toolcat can run it there. Output: ``<out>/_node.yaml`` and ``<out>/tools.yaml``.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from ..format.types import Json
from .common import ImporterError, ImportResult, segment, summary_of

log = logging.getLogger(__name__)


ANNOTATION_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_NAMESPACE_NOISE = re.compile(r"(^mcp[-_]|[-_]mcp([-_]server)?$|[-_]server$)")


class McpImportError(ImporterError):
    """A source that cannot be imported: the message says which and how to fix it."""


def namespace_for(name: str) -> str:
    """A namespace from a server or file name: ``github-mcp-server`` → ``github``."""
    base = _NAMESPACE_NOISE.sub("", name.strip().lower()) or name
    return segment(base)


def load_dump(path: Path) -> list[Json]:
    """The tools of a saved ``tools/list``: a JSON list, ``{"tools": [...]}``, or a folder of per-tool files."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".snap") and p.is_file())
        if not files:
            raise McpImportError(f"{path}: no .json tool files in this folder")
        return [_read_json(p) for p in files]
    data = _read_json(path)
    if isinstance(data, dict) and isinstance(data.get("result"), dict):  # a raw JSON-RPC response
        data = data["result"]
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    elif isinstance(data, dict) and "name" in data:
        data = [data]
    if not isinstance(data, list):
        raise McpImportError(f'{path}: expected a JSON list of tools, {{"tools": [...]}} or one tool object')
    return data


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise McpImportError(f"{path}: cannot read JSON ({exc})") from None


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


def convert(tools: list[Any], namespace: str, handler: Json | None) -> tuple[list[Json], list[str]]:
    """toolcat tool definitions for MCP tool entries, and warnings for the ones skipped or renamed."""
    out: list[Json] = []
    warnings: list[str] = []
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
        annotations = {k: v for k, v in (entry.get("annotations") or {}).items() if k in ANNOTATION_KEYS}
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
        tool["kind"] = "read" if annotations.get("readOnlyHint") is True else "write"
        tool["tags"] = [namespace, "mcp"]
        tool["args_schema"] = schema
        if isinstance(entry.get("outputSchema"), dict):
            tool["result_schema"] = entry["outputSchema"]
        if annotations:
            tool["annotations"] = annotations
        if handler is not None:
            tool["handler"] = {**handler, "tool": name}
        out.append(tool)
    return out, warnings


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks, so imported descriptions stay readable."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and all(line == line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def write_sources(out: Path, namespace: str, title: str, tools: list[Json]) -> Path:
    """Write ``_node.yaml`` and ``tools.yaml`` into ``out`` (deterministic YAML)."""
    out.mkdir(parents=True, exist_ok=True)
    node = {
        "title": title,
        "summary": f"Tools of the {title} MCP server, imported from its tools/list.",
        "tags": [namespace, "mcp"],
    }

    def dump(value: Any) -> str:
        return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)

    (out / "_node.yaml").write_text(dump(node), encoding="utf-8")
    header = f"# Imported by `toolcat import mcp` ({len(tools)} tools). Edit freely; re-import overwrites.\n"
    (out / "tools.yaml").write_text(header + dump({"tools": tools}), encoding="utf-8")
    return out


async def fetch_tools(command: list[str] | None, url: str | None) -> tuple[list[Json], str]:
    """``tools/list`` (every page) of a live server, and the server's name."""
    from mcp import ClientSession  # noqa: PLC0415 - the SDK only for live imports
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    transport: Any
    if command is not None:
        transport = stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    else:
        transport = streamable_http_client(str(url))
    tools: list[Json] = []
    async with transport as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
        init = await session.initialize()
        cursor: str | None = None
        while True:
            params = None
            if cursor:
                import mcp_types  # noqa: PLC0415

                params = mcp_types.PaginatedRequestParams(cursor=cursor)
            page = await session.list_tools(params=params)
            tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
    return tools, init.server_info.name


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
) -> ImportResult:
    """Import one server's tools (live over stdio or HTTP, or from a saved dump) as catalogue sources."""
    handler: Json | None
    if command is not None or url is not None:
        import anyio  # noqa: PLC0415

        argv = shlex.split(command) if command is not None else None
        if argv is not None and not argv:
            raise McpImportError("--command is empty")
        try:
            tools, server_name = anyio.run(fetch_tools, argv, url)
        except Exception as exc:
            leaf: BaseException = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            raise McpImportError(
                f"cannot read tools/list from {command or url}: {type(leaf).__name__}: {leaf}"
            ) from None
        handler = {"type": "mcp", "command": argv} if argv is not None else {"type": "mcp", "url": url}
        source_name = server_name
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
    else:
        raise McpImportError("give one of command, url or file")
    ns = segment(namespace) if namespace else namespace_for(source_name)
    converted, warnings = convert(tools, ns, handler)
    if not converted:
        raise McpImportError(f"{command or url or file}: no tools to import")
    if handler is None:
        warnings.append("no server given (--server-command/--server-url): the tools are listed but not executable")
    target = out if out is not None else src_root / ns
    write_sources(target, ns, source_name, converted)
    log.info("imported %d tools into %s", len(converted), target)
    return ImportResult(target, ns, len(converted), tuple(t["id"] for t in converted), tuple(warnings))

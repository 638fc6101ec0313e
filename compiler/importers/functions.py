"""``toolcat import functions``: OpenAI, Anthropic, Gemini or MCP function definitions as catalogue sources.

Each definition becomes one tool without a handler (the host runs it): id
``<namespace>.<name as an id segment>``, summary and description split back out of the
provider description (``toolcat export`` writes summary, description and "When to use: ..."
as paragraphs), and ``args_schema`` from the provider schema with the export's reversible
adaptations undone, so ``toolcat export`` followed by this import gives back the
catalogue's args_schema (docs/sources.md, "Importing", lists what cannot come back).
"""

from __future__ import annotations

import copy
import json
import logging
import re
from pathlib import Path
from typing import Any

from ..format.aliases import PROVIDERS
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
    node_file,
    read_json,
    read_overrides,
    segment,
    snake,
    summary_of,
    write_tree,
)

log = logging.getLogger(__name__)

FORMATS = (*PROVIDERS, "mcp")
WHEN_TO_USE = "When to use: "
_ALIAS = re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,62}")


def load_definitions(path: Path, fmt: str) -> list[tuple[str, Json]]:
    """``(JSON pointer, definition)`` for every function in a file of ``fmt`` definitions."""
    if fmt not in FORMATS:
        raise ImporterError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "mcp":  # one reader of MCP dumps, shared with `import mcp --file`
        from .mcp import read_dump  # noqa: PLC0415 - loaded on the one path that needs it

        return read_dump(path)
    if path.is_dir():
        raise ImporterError(f"{path}: a folder; only --format mcp reads a folder of per-tool JSON files")
    data = read_json(path)
    prefix = ""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):  # a JSON-RPC tools/list response
        data, prefix = data["result"], "/result"
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data, prefix = data["tools"], prefix + "/tools"
    if isinstance(data, dict) and ("functionDeclarations" in data or "name" in data):
        data = [data]
    if not isinstance(data, list):
        raise ImporterError(f'{path}: at {prefix or "/"}: expected a list of {fmt} definitions or {{"tools": [...]}}')
    out: list[tuple[str, Json]] = []
    for index, item in enumerate(data):
        where = f"{prefix}/{index}"
        if fmt == "gemini" and isinstance(item, dict) and isinstance(item.get("functionDeclarations"), list):
            out.extend((f"{where}/functionDeclarations/{i}", d) for i, d in enumerate(item["functionDeclarations"]))
        elif isinstance(item, dict) and fmt == "openai" and isinstance(item.get("function"), dict):
            out.append((f"{where}/function", {**item["function"], "_openai_tool": True}))
        else:
            out.append((where, item))
    return out


def _schema_of(fmt: str, item: Json) -> Any:
    key = {"openai": "parameters", "anthropic": "input_schema", "gemini": "parameters", "mcp": "inputSchema"}[fmt]
    return item.get(key)


def _without_null(node: Json) -> Json | None:
    """``node`` with the null an OpenAI strict export added for an optional property removed; None if it had none."""
    kind = node.get("type")
    out = dict(node)
    if isinstance(kind, list) and len(kind) > 1 and kind[-1] == "null":
        rest = kind[:-1]
        out["type"] = rest[0] if len(rest) == 1 else rest
        if isinstance(out.get("enum"), list) and out["enum"] and out["enum"][-1] is None:
            out["enum"] = out["enum"][:-1]
        return out
    branches = node.get("anyOf")
    if isinstance(branches, list) and branches and branches[-1] == {"type": "null"}:
        if len(node) == 1 and len(branches) == 2 and isinstance(branches[0], dict):  # a wrapped untyped schema
            return dict(branches[0])
        out["anyOf"] = branches[:-1]
        return out
    return None


def undo_openai_strict(node: Any) -> Any:
    """Undo ``strict: true`` for optional properties (strict lists all as required, adding null to the optional ones).

    ``additionalProperties: false`` stays: strict mode closes every object, so whether the
    source's object was closed cannot be told, and closed is what the model was held to.
    """
    if isinstance(node, list):
        return [undo_openai_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: (undo_openai_strict(v) if k not in ("enum", "const", "default", "examples") else v) for k, v in node.items()
    }
    properties = out.get("properties")
    if isinstance(properties, dict) and out.get("additionalProperties") is False:
        required = [r for r in out.get("required", []) if r in properties]
        for name, sub in properties.items():
            plain = _without_null(sub) if isinstance(sub, dict) else None
            if plain is not None:
                properties[name] = plain
                required = [r for r in required if r != name]
        if required:
            out["required"] = required
        else:
            out.pop("required", None)
    return out


def undo_gemini(node: Any) -> Any:
    """Gemini's OpenAPI subset back in JSON Schema: ``nullable`` and one-type ``anyOf`` s as type lists, ``examples``."""
    if isinstance(node, list):
        return [undo_gemini(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: Json = {}
    for key, value in node.items():
        if key == "nullable":
            continue
        if key == "example":
            out["examples"] = [value]
        elif key in ("enum", "default", "examples"):
            out[key] = value
        else:
            out[key] = undo_gemini(value)
    branches = out.get("anyOf")
    if (
        "type" not in out
        and isinstance(branches, list)
        and len(branches) > 1
        and all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in branches)
    ):
        out["type"] = [b["type"] for b in branches]  # the export writes a type list as one anyOf branch per type
        del out["anyOf"]
    if node.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, list):
            out["type"] = [*kind, "null"]
        elif isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out


def args_schema_of(fmt: str, item: Json, where: str, warnings: Warnings) -> Json:
    """The catalogue args_schema for one provider definition."""
    raw = _schema_of(fmt, item)
    if fmt == "mcp" and raw is None:
        raw = item.get("input_schema") or item.get("parameters")
        if raw is None and isinstance(item.get("arguments"), list):  # the Docker MCP registry's flattened form
            from .mcp import arguments_schema  # noqa: PLC0415 - loaded on the one path that needs it

            raw = arguments_schema(item["arguments"])
    if raw is None:
        return {"type": "object"} if fmt != "anthropic" else {"type": "object", "properties": {}}
    if not isinstance(raw, dict):
        raise ImporterError(f"at {where}: the schema must be an object, got {type(raw).__name__}")
    schema = copy.deepcopy(raw)
    if fmt == "openai" and item.get("strict") is True:
        schema = undo_openai_strict(schema)
    elif fmt == "gemini":
        schema = undo_gemini(schema)
        if str(schema.get("type", "object")).lower() != "object":
            warnings.add("a non-object parameters schema is wrapped", where)
    if "type" not in schema:
        schema["type"] = "object"
    if fmt in ("openai", "anthropic") and schema.get("properties") == {}:  # both exports add it to {type: object}
        del schema["properties"]
        if fmt == "openai" and item.get("strict") is True:  # strict's way of saying "no arguments"
            schema.pop("additionalProperties", None)
    return schema


def split_description(text: str, fallback: str) -> tuple[str, str, str]:
    """(summary, description, when_to_use) from an exported description's paragraphs."""
    when = ""
    parts = text.strip().split("\n\n")
    if parts and parts[-1].startswith(WHEN_TO_USE):
        when = parts.pop()[len(WHEN_TO_USE) :].strip()
    first = parts[0].strip() if parts else ""
    if first and "\n" not in first and len(first) <= 200:
        return first, "\n\n".join(parts[1:]).strip(), when
    body = "\n\n".join(parts).strip()
    return summary_of(body, fallback), body, when


def _hints(item: Json, fmt: str, where: str, warnings: Warnings) -> Json:
    """``kind`` (read only on an MCP readOnlyHint, with a warning) and the MCP annotations kept."""
    from .mcp import ANNOTATION_KEYS, kind_of  # noqa: PLC0415 - loaded on the one path that needs it

    annotations: Json = item["annotations"] if fmt == "mcp" and isinstance(item.get("annotations"), dict) else {}
    out: Json = {"kind": kind_of(annotations)}
    if out["kind"] == "read":
        warnings.add(
            "kind: read only because the definition says readOnlyHint (check it: a --read-only session runs it)", where
        )
    kept = {k: v for k, v in annotations.items() if k in ANNOTATION_KEYS}
    if kept:
        out["annotations"] = kept
    return out


def convert(definitions: list[tuple[str, Json]], fmt: str, namespace: str, warnings: Warnings) -> list[Json]:
    """Tool definitions for provider function definitions."""
    tools: list[Json] = []
    seen: dict[str, str] = {}
    for where, item in definitions:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"].strip():
            raise ImporterError(f"at {where}: a function definition needs a 'name'")
        name = item["name"]
        tool_id = f"{namespace}.{snake(name)}"
        if tool_id in seen:
            raise ImporterError(
                f"at {where}: {name!r} and {seen[tool_id]!r} both become the id {tool_id}; rename one of them"
            )
        seen[tool_id] = name
        summary, description, when = split_description(str(item.get("description") or ""), name.replace("_", " "))
        tool: Json = {"id": tool_id, "summary": summary}
        if description:
            tool["description"] = description
        if when:
            tool["when_to_use"] = when
        tool.update(_hints(item, fmt, where, warnings))
        tool["tags"] = [namespace, fmt]
        tool["args_schema"] = args_schema_of(fmt, item, where, warnings)
        if fmt == "mcp" and isinstance(item.get("outputSchema"), dict):
            tool["result_schema"] = item["outputSchema"]
        if _ALIAS.fullmatch(name):  # the name the model knew stays the name it is exported under
            tool["alias"] = name
        tools.append(tool)
    return tools


def import_functions(
    file: Path,
    *,
    fmt: str,
    namespace: str | None = None,
    out: Path | None = None,
    force: bool = False,
    src_root: Path = Path("catalog_src"),
) -> ImportResult:
    """Import every function definition in ``file`` as catalogue sources in ``out``."""
    definitions = load_definitions(file, fmt)
    if not definitions:
        raise ImporterError(f"{file}: no function definitions to import")
    ns = segment(namespace) if namespace else segment(file.stem)
    target = out if out is not None else src_root / ns
    claim_out(target, force=force)
    warnings = Warnings()
    try:
        tools = convert(definitions, fmt, ns, warnings)
    except ImporterError as exc:
        raise ImporterError(f"{file}: {exc}") from None
    nodes = {"": node_file(file.stem, f"Functions imported from {file.name} ({fmt} format).", [ns, fmt])}
    overrides, _ = read_overrides(target)
    apply_overrides({t["id"]: t for t in tools}, nodes, overrides, warnings)
    header = (
        f"# Generated by `toolcat import functions --format {fmt}` ({len(tools)} tools). A re-import replaces "
        "this file: put your own changes in _import/overrides.yaml.\n"
    )
    files = {
        "_node.yaml": dump_yaml(nodes[""]),
        "tools.yaml": header + dump_yaml({"tools": tools}),
        f"{STATE_DIR}/{STATE_FILE}": json.dumps(
            {"importer": "functions", "format": fmt, "source": str(file), "namespace": ns}, indent=1, sort_keys=True
        )
        + "\n",
    }
    write_tree(target, files, force=force)
    log.info("imported %d functions into %s", len(tools), target)
    return ImportResult(target, ns, len(tools), tuple(t["id"] for t in tools), tuple(warnings.lines()))

"""JSON Schema → table rows for the site: nested properties flattened, local ``$ref`` s followed, types labelled."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..format.schema_text import limit_rules, type_text

MAX_SCHEMA_DEPTH = 6


@dataclass(frozen=True, slots=True)
class SchemaRow:
    """One row of an arguments or result table: a (possibly nested) property."""

    name: str
    type: str
    required: bool
    default: str | None
    enum: tuple[str, ...]
    constraints: str
    description: str


def _resolve(schema: Any, root: dict[str, Any], depth: int) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``); anything else is shown as is."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < MAX_SCHEMA_DEPTH:
        pointer = schema["$ref"]
        if not pointer.startswith("#/"):
            return schema
        target: Any = root
        for part in pointer[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")  # noqa: PLW2901 - JSON Pointer unescaping
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return schema
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        depth += 1
    return schema if isinstance(schema, dict) else {}


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [v for v in schema[key] if isinstance(v, dict)]
    return []


def type_label(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> str:
    """The type as the agent reads it (:func:`toolcat.format.schema_text.type_text`), plus a const or a format."""
    node = _resolve(schema, root, depth)
    if "const" in node:
        return f"const {json.dumps(node['const'], ensure_ascii=False)}"
    label = type_text(schema, root, depth)
    if isinstance(node.get("format"), str):
        label += f" ({node['format']})"
    return label


def _constraints(schema: dict[str, Any]) -> str:
    """Bounds, format and pattern as tool_help and the prompts write them, and "no extra keys"."""
    parts = limit_rules(schema)
    if schema.get("additionalProperties") is False and "properties" in schema:
        parts.append("no extra keys")
    return " · ".join(parts)


def _json_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def schema_rows(schema: dict[str, Any] | None, root: dict[str, Any] | None = None) -> list[SchemaRow]:
    """Flatten a JSON Schema's properties into rows: nested objects as ``a.b``, arrays of objects as ``a[].b``."""
    if not isinstance(schema, dict):
        return []
    root = root if root is not None else schema
    rows: list[SchemaRow] = []

    def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
        node = _resolve(node, root, depth)
        for merged in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            if isinstance(merged, dict):
                walk(merged, prefix, depth + 1)
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        required = set(node.get("required", [])) if isinstance(node.get("required"), list) else set()
        for name, raw in properties.items():
            prop = _resolve(raw, root, depth)
            enum = prop.get("enum")
            if enum is None and isinstance(prop.get("items"), dict):
                enum = _resolve(prop["items"], root, depth).get("enum")
            rows.append(
                SchemaRow(
                    name=f"{prefix}{name}",
                    type=type_label(prop, root, depth),
                    required=name in required,
                    default=_json_value(prop["default"]) if "default" in prop else None,
                    enum=tuple(_json_value(v) for v in enum) if isinstance(enum, list) else (),
                    constraints=_constraints(prop),
                    description=str(prop.get("description", "") or prop.get("title", "")),
                )
            )
            if depth >= MAX_SCHEMA_DEPTH:
                continue
            if isinstance(prop.get("properties"), dict) or isinstance(prop.get("allOf"), list):
                walk(prop, f"{prefix}{name}.", depth + 1)
            items = prop.get("items")
            if isinstance(items, dict):
                walk(items, f"{prefix}{name}[].", depth + 1)
            for variant in _variants(prop):
                walk(variant, f"{prefix}{name}.", depth + 1)

    top = _resolve(schema, root, 0)
    if isinstance(top.get("items"), dict) and "properties" not in top:
        walk(top["items"], "[].", 1)
    else:
        walk(top, "", 0)
    return rows

"""JSON Schema as an agent reads it (format layer, stdlib only): the one notation every surface uses.

Prompt sections, ``tool_help`` and the site describe an argument the same way:

* types: ``string``, ``string | null`` (a type list or ``anyOf``/``oneOf``), ``array of string``,
  ``array of (string | null)``, ``object``, ``any``; a schema with only ``enum``/``const`` takes the
  JSON types of its values;
* :func:`schema_text` adds, in this order and separated by ``; ``: ``one of: "a", "b"``,
  ``default: 1``, bounds (``1 ≤ value ≤ 10``, ``length 1..64``, ``items ≤ 5``,
  ``multiple of 2``, ``unique items``), ``format: date-time`` and ``pattern: ^[a-z]+$``.

Local ``$ref`` (``#/$defs/X``, JSON Pointer escapes included) are followed, at most
:data:`MAX_DEPTH` levels deep; anything else is described as found.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 8
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)


def resolve(schema: Any, root: Any, depth: int = 0) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` replaced by its target (sibling keys kept); ``{}`` for a non-object."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < MAX_DEPTH:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            break
        target: Any = root
        for part in ref[2:].split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            target = target.get(key) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            break
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        depth += 1
    return schema if isinstance(schema, dict) else {}


def _value_type(value: Any) -> str:
    return next(name for kind, name in _JSON_TYPES if isinstance(value, kind))


def _union(parts: list[str]) -> str:
    return " | ".join(dict.fromkeys(parts)) or "any"


def type_text(schema: Any, root: Any = None, depth: int = 0) -> str:
    """The type of a value: ``string``, ``string | null``, ``array of string``, ``object``, ``any``."""
    root = schema if root is None else root
    node = resolve(schema, root, depth)
    if depth >= MAX_DEPTH:
        return "any"
    raw = node.get("type")
    if isinstance(raw, list):
        names = [str(t) for t in raw]
    elif isinstance(raw, str):
        names = [raw]
    else:
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return _union([type_text(b, root, depth + 1) for b in node[key] if isinstance(b, dict)])
        if isinstance(node.get("enum"), list):
            names = [_value_type(v) for v in node["enum"]]
        elif "const" in node:
            names = [_value_type(node["const"])]
        elif "properties" in node:
            names = ["object"]
        else:
            names = ["any"]
    if "array" in names:
        items = resolve(node.get("items"), root, depth + 1)
        if items:
            inner = type_text(items, root, depth + 1)
            names = [
                f"array of ({inner})" if n == "array" and " | " in inner else f"array of {inner}" if n == "array" else n
                for n in names
            ]
    return _union(names)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _range(low: Any, high: Any, what: str) -> str | None:
    if low is not None and high is not None:
        return f"{what} {low}..{high}"
    if low is not None:
        return f"{what} ≥ {low}"
    if high is not None:
        return f"{what} ≤ {high}"
    return None


def _bounds(node: dict[str, Any]) -> list[str]:
    out = []
    low = (
        f"{node['minimum']} ≤ "
        if "minimum" in node
        else f"{node['exclusiveMinimum']} < "
        if "exclusiveMinimum" in node
        else ""
    )
    high = (
        f" ≤ {node['maximum']}"
        if "maximum" in node
        else f" < {node['exclusiveMaximum']}"
        if "exclusiveMaximum" in node
        else ""
    )
    if low or high:
        out.append(f"{low}value{high}")
    for what, lo, hi in (
        ("length", "minLength", "maxLength"),
        ("items", "minItems", "maxItems"),
        ("keys", "minProperties", "maxProperties"),
    ):
        text = _range(node.get(lo), node.get(hi), what)
        if text:
            out.append(text)
    if "multipleOf" in node:
        out.append(f"multiple of {node['multipleOf']}")
    if node.get("uniqueItems") is True:
        out.append("unique items")
    return out


def schema_text(schema: Any, root: Any = None) -> str:
    """One line for an agent: ``string | null; one of: "a", "b"; default: "a"; length 1..64; format: email``."""
    root = schema if root is None else root
    node = resolve(schema, root)
    return "; ".join([type_text(node, root), *schema_rules(node, root)])


def schema_rules(schema: Any, root: Any = None) -> list[str]:
    """What :func:`schema_text` says after the type: values, default, bounds, format, pattern (each once)."""
    root = schema if root is None else root
    node = resolve(schema, root)
    parts: list[str] = []
    if isinstance(node.get("enum"), list):
        parts.append("one of: " + ", ".join(_value(v) for v in node["enum"]))
    elif "const" in node:
        parts.append(f"exactly {_value(node['const'])}")
    if "default" in node:
        parts.append(f"default: {_value(node['default'])}")
    parts.extend(limit_rules(node, root))
    return parts


def limit_rules(schema: Any, root: Any = None) -> list[str]:
    """The limits of a value, as every surface writes them: ``1 ≤ value ≤ 10``, ``length ≤ 64``, ``format: email``.

    The prompts, the docs site and tool_help all print a schema's bounds, format and pattern
    through this one function (values and defaults they lay out themselves).
    """
    root = schema if root is None else root
    node = resolve(schema, root)
    parts = _bounds(node)
    if isinstance(node.get("format"), str):
        parts.append(f"format: {node['format']}")
    if isinstance(node.get("pattern"), str):
        parts.append(f"pattern: {node['pattern']}")
    return parts


def examples_text(schema: Any) -> list[str]:
    """Every example value a property schema gives (``examples`` list and ``example``), as JSON text."""
    node = schema if isinstance(schema, dict) else {}
    values = list(node.get("examples") or []) if isinstance(node.get("examples"), list) else []
    if "example" in node:
        values.append(node["example"])
    return [_value(v) for v in values]

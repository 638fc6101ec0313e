"""The format described once per side: format/shapes.py agrees with format/schemas/*.json."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import REPO

from toolcat.format.shapes import NULLABLE, OPTIONAL_POINTER_FIELDS, POINTER_FIELDS, SHAPES, make_pointer

SCHEMAS = REPO / "compiler" / "format" / "schemas"
JSON_TYPES = {dict: "object", list: "array", str: "string", int: "integer"}


def _schema(kind: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{kind}.json").read_text(encoding="utf-8"))


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its local ``$ref`` followed (schemas only use ``#/$defs/...``)."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _types(node: dict[str, Any]) -> set[str]:
    """The JSON types a schema node allows (from ``type``, ``const``, ``enum`` or ``anyOf``/``oneOf``)."""
    if "type" in node:
        return {node["type"]} if isinstance(node["type"], str) else set(node["type"])
    values = [node["const"]] if "const" in node else node.get("enum")
    if values is not None:
        return {"null" if v is None else JSON_TYPES.get(type(v), type(v).__name__) for v in values}
    return set().union(*(_types(n) for n in node.get("anyOf", node.get("oneOf", []))))


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_each_shape_field_has_its_schema_type(kind: str):
    """Every field a shape checks is a property of its kind's schema, with the same type and element type."""
    root = _schema(kind)
    assert root["properties"]["artifact"].get("const", kind) == kind
    for field, (want, element) in SHAPES[kind].items():
        node = _resolve(root["properties"].get(field, {}), root)
        assert node, f"{kind}.json has no property {field!r}"
        types = _types(node)
        assert JSON_TYPES[want] in types, (kind, field, types)
        assert ("null" in types) == ((kind, field) in NULLABLE), (kind, field, "nullable differs")
        if element is None:
            continue
        inner = node.get("items") if want is list else node.get("additionalProperties")
        assert isinstance(inner, dict), (kind, field, "no element schema")
        assert JSON_TYPES[element] in _types(_resolve(inner, root)), (kind, field)


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_schema_required_fields_a_shape_reads_are_never_nullable(kind: str):
    """A field the schema requires and the shape checks is nullable in the shape only where the schema allows null."""
    root = _schema(kind)
    for field in set(root.get("required", [])) & set(SHAPES[kind]):
        node = _resolve(root["properties"][field], root)
        if (kind, field) not in NULLABLE:
            assert "null" not in _types(node), (kind, field)


def test_pointer_fields_are_the_pointer_schema():
    """POINTER_FIELDS lists exactly pointer.json's properties, and its required ones are the non-optional fields."""
    schema = _schema("pointer")
    assert set(POINTER_FIELDS) == set(schema["properties"])
    assert set(schema["required"]) == set(POINTER_FIELDS) - OPTIONAL_POINTER_FIELDS


def test_make_pointer_refuses_unknown_and_missing_fields():
    """make_pointer names an unknown field and a missing one instead of writing a pointer the schema refuses."""
    full = {f: [] if f == "capabilities" else f for f in POINTER_FIELDS}
    assert "capabilities" not in make_pointer(full)
    with pytest.raises(ValueError, match="unknown \\['extra'\\]"):
        make_pointer({**full, "extra": 1})
    with pytest.raises(ValueError, match="missing \\['spec'\\]"):
        make_pointer({k: v for k, v in full.items() if k != "spec"})

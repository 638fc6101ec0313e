"""The format layer's shared renderings: JSON Schema as text, jsonschema errors as field lists."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from toolcat.format.field_errors import field_errors, json_path
from toolcat.format.schema_text import schema_text, type_text


def test_type_text_notation():
    """Types read as `string | null`, `array of string`, `array of (string | null)`; enums take their values' types."""
    root = {"$defs": {"Name": {"type": "string"}}}
    assert type_text({"type": ["string", "null"]}) == "string | null"
    assert type_text({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "integer | null"
    assert type_text({"type": "array", "items": {"$ref": "#/$defs/Name"}}, root) == "array of string"
    assert type_text({"type": "array", "items": {"type": ["string", "null"]}}) == "array of (string | null)"
    assert type_text({"type": "array"}) == "array"
    assert type_text({"enum": ["a", "b"]}) == "string"
    assert type_text({"properties": {}}) == "object"
    assert type_text({}) == "any"


def test_type_text_survives_a_ref_loop():
    """A $ref that points to itself ends as a type, never a recursion error."""
    loop = {"$defs": {"A": {"type": "array", "items": {"$ref": "#/$defs/A"}}}, "$ref": "#/$defs/A"}
    assert type_text(loop).startswith("array of array of")


def test_schema_text_names_enums_defaults_bounds_formats():
    """One line: type; one of; default; bounds; format; pattern."""
    assert (
        schema_text({"type": "string", "enum": ["a", "b"], "default": "a"}) == 'string; one of: "a", "b"; default: "a"'
    )
    assert schema_text({"type": "integer", "minimum": 1, "maximum": 10}) == "integer; 1 ≤ value ≤ 10"
    assert schema_text({"type": "string", "minLength": 1, "format": "email"}) == "string; length ≥ 1; format: email"
    assert (
        schema_text({"type": "array", "items": {"type": "string"}, "maxItems": 5, "uniqueItems": True})
        == "array of string; items ≤ 5; unique items"
    )


def test_field_errors_one_entry_per_name():
    """Missing and unexpected names get one entry each, with what was expected; other errors say the keyword."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "n": {"type": "integer", "maximum": 3}},
        "required": ["a", "n"],
        "additionalProperties": False,
    }
    errors = field_errors(Draft202012Validator(schema).iter_errors({"n": 9, "x": 1, "y": 2}))
    assert errors == [
        {"field": "a", "message": "'a' is required", "expected": "present"},
        {"field": "x", "message": "unexpected property 'x'", "expected": "one of a, n"},
        {"field": "y", "message": "unexpected property 'y'", "expected": "one of a, n"},
        {"field": "n", "message": "got 9", "expected": "maximum 3"},
    ]
    assert json_path(["a", 0, "b"]) == "$.a[0].b"

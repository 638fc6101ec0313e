"""Author mistakes in args_schema that are valid JSON Schema: warnings, and errors under `validate --strict`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support import write_tree

from toolcat.build.sources.tool_schemas import schema_lints
from toolcat.cli import main

HEAD = "tools:\n  - id: file.read\n    summary: Read a file.\n    args_schema:\n      type: object\n"
TREE = {"_node.yaml": {"title": "Lint", "summary": "Schema lint."}}

#: case → (the rest of the schema, as indented YAML lines; line:column, JSON path, code, fragment of the hint)
CASES = {
    "requried_typo": (
        "      properties:\n        path: {type: string}\n      requried: [path]\n",
        "8:7",
        "$.tools[0].args_schema.requried",
        "unknown_keyword",
        "Did you mean 'required'?",
    ),
    "property_one_level_too_far_left": (
        "      properties:\n        path: {type: string}\n      mode: {type: string, enum: [text, bytes]}\n",
        "8:7",
        "$.tools[0].args_schema.mode",
        "unknown_keyword",
        "indent it under 'properties'",
    ),
    "required_but_forbidden": (
        (
            "      properties:\n        path: {type: string}\n      additionalProperties: false\n"
            "      required: [path, encoding]\n"
        ),
        "9:24",
        "$.tools[0].args_schema.required[1]",
        "required_forbidden",
        "add 'encoding' to properties",
    ),
}


def run_validate(src: Path, *strict: str) -> tuple[int, str]:
    """Exit code and output of `toolcat validate SRC [--strict]`."""
    result = CliRunner().invoke(main, ["validate", str(src), *strict])
    return result.exit_code, result.output


@pytest.mark.parametrize("case", list(CASES))
def test_a_schema_mistake_is_a_located_warning_and_fails_validate_strict(tmp_path: Path, case: str) -> None:
    """The mistake is a warning naming its line, JSON path and fix; `validate --strict` exits 1 on it."""
    rest, place, json_path, code, hint = CASES[case]
    src = write_tree(tmp_path / "src", {**TREE, "files/tools.yaml": HEAD + rest})
    exit_code, output = run_validate(src)
    assert exit_code == 0, output
    assert f"files/tools.yaml:{place}: warning: {json_path}: " in output
    assert hint in output
    exit_code, output = run_validate(src, "--strict")
    assert exit_code == 1
    assert f"files/tools.yaml:{place}: warning: {json_path}: " in output
    schema = yaml.safe_load(HEAD + rest)["tools"][0]["args_schema"]
    assert [lint.code for lint in schema_lints(schema, "$")] == [code]


def test_an_unquoted_comma_in_a_flow_mapping_is_an_error_even_without_strict(tmp_path: Path) -> None:
    """`{type: string, description: Path, relative or absolute}` is refused: the comma made a key of the rest."""
    rest = "      properties:\n        path: {type: string, description: Path, relative or absolute}\n"
    src = write_tree(tmp_path / "src", {**TREE, "files/tools.yaml": HEAD + rest})
    exit_code, output = run_validate(src)
    assert exit_code == 1
    assert 'files/tools.yaml:7:49: error: $.tools[0].args_schema.properties.path["relative or absolute"]' in output
    assert "quote a value" in output


def test_vendor_extensions_annotations_and_nested_schemas_are_known(tmp_path: Path) -> None:
    """x- keys, annotations and every draft's keywords pass; unknown keywords are found in nested schemas too."""
    schema = {
        "type": "object",
        "$comment": "c",
        "x-internal": True,
        "properties": {
            "a": {"type": "array", "items": {"type": "string", "minLenght": 1}, "examples": [["x"]]},
            "b": {"anyOf": [{"type": "null"}, {"type": "integer", "exclusiveMinimum": 0}], "deprecated": True},
        },
        "if": {"required": ["a"]},
        "then": {"required": ["b"]},
        "$defs": {"d": {"type": "string", "format": "date"}},
    }
    lints = schema_lints(schema, "$.args_schema")
    assert [(lint.path, lint.hint) for lint in lints] == [
        ("$.args_schema.properties.a.items.minLenght", "Did you mean 'minLength'?")
    ]


def test_required_names_allowed_by_pattern_properties_are_not_flagged() -> None:
    """additionalProperties: false with patternProperties may allow a required name: no contradiction is claimed."""
    schema = {
        "type": "object",
        "patternProperties": {"^x_": {"type": "string"}},
        "additionalProperties": False,
        "required": ["x_a"],
    }
    assert schema_lints(schema, "$") == []


def test_three_schema_mistakes_show_in_one_run_with_did_you_mean(tmp_path: Path) -> None:
    """A schema with three invalid spots reports all three (located) in one validate, with the type slips named."""
    rest = (
        "      properties:\n"
        "        name: {type: str}\n"
        "        count: {type: int, minimum: '1'}\n"
        "        tags: {type: [string, list]}\n"
        "      required: [name]\n"
    )
    src = write_tree(tmp_path / "src", {**TREE, "tools/t.yaml": HEAD + rest})
    code, output = run_validate(src)
    assert code == 1
    assert "4 error(s)" in output
    assert "t.yaml:7:" in output
    assert "$.tools[0].args_schema.properties.name.type" in output
    assert "Did you mean 'string'?" in output
    assert "Did you mean 'integer'?" in output
    assert "$.tools[0].args_schema.properties.count.minimum" in output
    assert "$.tools[0].args_schema.properties.tags.type[1]" in output
    assert "Did you mean 'array'?" in output


def test_a_flood_of_schema_errors_is_capped_and_counted(tmp_path: Path) -> None:
    """More than MAX_SCHEMA_ERRORS metaschema errors: that many are shown and the last says how many more."""
    from toolcat.build.sources.tool_schemas import MAX_SCHEMA_ERRORS  # noqa: PLC0415

    props = "".join(f"        p{i}: {{type: int}}\n" for i in range(MAX_SCHEMA_ERRORS + 5))
    src = write_tree(tmp_path / "src", {**TREE, "tools/t.yaml": HEAD + "      properties:\n" + props})
    code, output = run_validate(src)
    assert code == 1
    assert output.count("is not a JSON Schema type") == MAX_SCHEMA_ERRORS
    assert "(5 more error(s) in this schema after this one)" in output

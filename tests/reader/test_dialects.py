"""The dialect definitions: valid schemas, aligned with the reader's methods, stdlib only."""

from __future__ import annotations

import inspect

import pytest
from jsonschema.validators import Draft202012Validator
from support import REPO

from toolcat.format.dialects import DIALECT_NAMES, DISCOVERY_TOOLS, canonical_name, dialect_tools, discovery_tool
from toolcat.reader import Catalog

READER = REPO / "compiler" / "reader"
ALL_TOOLS = [tool for name in DIALECT_NAMES for tool in DISCOVERY_TOOLS[name]]


def test_dialects_have_the_designed_tools():
    """Each dialect exposes exactly the operations the design names, in order."""
    assert [t.name for t in dialect_tools("spec")] == [
        "list",
        "search_nodes",
        "search_tool_by_category",
        "expand_tool",
        "call_tool",
    ]
    assert [t.name for t in dialect_tools("gateway")] == ["tool_help", "tool_exec", "tool_batch"]
    assert [t.name for t in dialect_tools("namespaced")] == ["tool_list", "tool_describe", "find_tool"]
    with pytest.raises(ValueError, match="expected one of spec, gateway, namespaced"):
        dialect_tools("rest")


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_schemas_are_valid_json_schema(tool):
    """Input and output schemas of every discovery tool are valid Draft 2020-12 schemas with an object root."""
    Draft202012Validator.check_schema(tool.input_schema)
    Draft202012Validator.check_schema(tool.output_schema)
    assert tool.input_schema["type"] == "object"
    assert set(tool.input_schema["required"]) <= set(tool.input_schema["properties"])


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_input_schema_matches_reader_method(tool):
    """Every property is a keyword of the reader method it maps to, and every argument without a default is required."""
    method = getattr(Catalog, tool.method)
    params = {n: p for n, p in inspect.signature(method).parameters.items() if n != "self"}
    properties = set(tool.input_schema["properties"])
    assert properties <= set(params), f"{tool.name}: {properties - set(params)} are not parameters of {tool.method}"
    no_default = {n for n, p in params.items() if p.default is inspect.Parameter.empty}
    assert no_default <= set(tool.input_schema["required"])


def test_read_only_annotations():
    """Help, list, search, describe and expand are read-only; exec, call and batch may change the world."""
    read_only = {t.name for t in ALL_TOOLS if t.read_only}
    assert read_only == {
        "list",
        "search_nodes",
        "search_tool_by_category",
        "expand_tool",
        "tool_help",
        "tool_list",
        "tool_describe",
        "find_tool",
    }
    assert all(t.annotations["destructiveHint"] for t in ALL_TOOLS if not t.read_only)


def test_as_mcp_and_lookup():
    """The MCP form carries inputSchema, outputSchema and annotations; names resolve with or without a dialect."""
    entry = discovery_tool("tool_exec").as_mcp()
    assert entry["name"] == "tool_exec"
    assert entry["inputSchema"]["required"] == ["op", "args"]
    assert entry["annotations"]["readOnlyHint"] is False
    assert discovery_tool("tool_exec", "spec") is None
    assert discovery_tool("nope") is None


def test_canonical_name_maps_aliases_back():
    """An alias maps to its id, an id stays itself, anything else is None."""
    to_id = {"file_read": "file.read"}
    assert canonical_name("file_read", to_id) == "file.read"
    assert canonical_name("file.read", to_id) == "file.read"
    assert canonical_name("file_write", to_id) is None


REAL_CALLS: dict[str, list[tuple[object, ...]]] = {
    "tool_help": [("root",), ("onto",), ("onto.task",), ("onto.task.update",)],
    "tool_list": [(), ("file",)],
    "search_tool_by_category": [("upload a file", "storage")],
    "list": [(), ("storage",)],
    "search_nodes": [("calendar",)],
    "find_tool": [("send an email",)],
    "tool_describe": [("file.read",), ("task.code_review",)],
    "expand_tool": [("refactor.rename_symbol",)],
    "tool_exec": [("util.math.eval", {"expression": "1+2"}), ("util.math.eval", {"expression": 3})],
    "call_tool": [("util.math.eval", {"expression": "2*3"})],
    "tool_batch": [([{"op": "util.math.eval", "args": {"expression": "1"}}],)],
}


@pytest.mark.parametrize("dialect", ["spec", "gateway", "namespaced"])
def test_output_schemas_describe_real_answers(example_build, dialect):
    """Each discovery tool's declared outputSchema validates what the reader really answers (MCP clients enforce it)."""
    catalog = Catalog.open(example_build)
    for tool in dialect_tools(dialect):
        for args in REAL_CALLS[tool.method]:
            answer = getattr(catalog, tool.method)(*args)
            errors = [e.message for e in Draft202012Validator(tool.output_schema).iter_errors(answer)]
            assert errors == [], (tool.name, args, errors[:3])

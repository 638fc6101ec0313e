"""Null means absent: an optional argument sent as null is the argument left out, in every dialect and operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from toolcat.format.dialects import DIALECT_NAMES, dialect_tools
from toolcat.mcp.discovery import call_tool
from toolcat.reader import Catalog

#: A value for each required argument of a discovery tool, so the rest can be sent as null.
REQUIRED_SAMPLES: dict[str, Any] = {
    "query": "rename a symbol",
    "category_path": ["Coding", "Refactoring"],
    "tool_id": "util.math.eval",
    "args": {"expression": "1+2"},
    "op": "util.math.eval",
    "ops": [{"op": "util.math.eval", "args": {"expression": "2*3"}, "dry_run": None, "idempotency_key": None}],
    "name": "util.math.eval",
    "purpose": "evaluate an arithmetic expression",
}


def _without_meta(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without its per-call trace and timing (two runs of one call differ only there)."""
    return {k: v for k, v in answer.items() if k != "meta"}


@pytest.fixture(scope="module")
def catalog(example_build: Path) -> Catalog:
    """The example catalogue, opened once for these tests."""
    return Catalog.open(example_build)


def test_000_request_with_cursor_null_is_answered(catalog: Catalog):
    """000's own search_tool_by_category request, "cursor": null included, answers as without the cursor."""
    request = {
        "query": "rename a symbol across the codebase",
        "category_path": ["Coding", "Refactoring"],
        "limit": 5,
        "cursor": None,
    }
    answer = catalog.search_tool_by_category(**request)
    assert answer["ok"] is True
    assert answer["results"][0]["tool_id"] == "refactor.rename_symbol"
    assert answer == catalog.search_tool_by_category(request["query"], request["category_path"], 5)


def test_spec_dialect_null_optionals_are_absent(catalog: Catalog):
    """list, search_nodes and search_tool_by_category answer a null optional exactly as its absence."""
    assert catalog.list(path=None, tags=None, query=None, limit=None, cursor=None, capability=None) == catalog.list()
    assert catalog.search_nodes("refactoring", limit=None) == catalog.search_nodes("refactoring")
    assert catalog.search_tool_by_category("rename", category_path=None, limit=None, cursor=None) == (
        catalog.search_tool_by_category("rename", category_path="")
    )


def test_gateway_dialect_null_optionals_are_absent(catalog: Catalog):
    """tool_help, tool_exec and tool_batch (and each batch item) take null as the default."""
    nulls = {"format": None, "include_examples": None, "include_schemas": None, "query": None, "limit": None}
    assert catalog.tool_help(path=None, **nulls) == catalog.tool_help()
    assert catalog.tool_help(path="util.math.eval", **nulls) == catalog.tool_help("util.math.eval")
    ran = catalog.tool_exec("util.math.eval", {"expression": "1+2"}, idempotency_key=None, dry_run=None)
    assert ran["ok"] is True
    assert ran["result"]["result"] == 3
    batch = catalog.tool_batch(
        [
            {"op": "util.math.eval", "args": {"expression": "1+1"}, "dry_run": None, "idempotency_key": None},
            {"type": "help", "path": "util.math.eval", "format": None, "include_examples": None},
        ],
        mode=None,
    )
    assert batch["ok"] is True
    assert batch["all_ok"] is True, batch
    assert batch["mode"] == "sequential"


def test_namespaced_dialect_null_optionals_are_absent(catalog: Catalog):
    """tool_list and find_tool answer a null optional exactly as its absence."""
    assert catalog.tool_list(namespace=None, tags=None, capability=None) == catalog.tool_list()
    assert catalog.find_tool("evaluate arithmetic", limit=None) == catalog.find_tool("evaluate arithmetic")


def test_tool_exec_drops_nulls_of_optional_properties(catalog: Catalog):
    """A real tool's null for a property it does not require is dropped before defaults and validation."""
    plain = catalog.tool_exec("onto.task.list", {})
    nulls = catalog.tool_exec("onto.task.list", {"assignee": None, "limit": None, "project_id": None, "sort": None})
    assert nulls["ok"] is True, nulls
    assert _without_meta(nulls) == _without_meta(plain)


def test_tool_exec_null_for_a_required_property_is_still_invalid(catalog: Catalog):
    """Null stays a value for a required property: the call is VALIDATION_ERROR naming the field."""
    answer = catalog.tool_exec("util.math.eval", {"expression": None})
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in answer["error"]["details"]["field_errors"]] == ["expression"]


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_every_discovery_tool_accepts_null_for_each_optional_over_mcp(catalog: Catalog, dialect: str):
    """Each discovery tool's input schema accepts null optionals, and the MCP call path answers them (strict mode)."""
    for tool in dialect_tools(dialect):
        schema = tool.input_schema
        required = set(schema["required"])
        arguments = {k: (REQUIRED_SAMPLES[k] if k in required else None) for k in schema["properties"]}
        assert list(Draft202012Validator(schema).iter_errors(arguments)) == [], tool.name
        answer = anyio.run(call_tool, catalog, tool, arguments)
        assert answer["ok"] is True, (tool.name, answer)


def test_which_schemas_allow_null() -> None:
    """allows_null reads type, enum, const, anyOf/oneOf/allOf and local $refs; a schema silent about null refuses it."""
    from toolcat.format.schema_nulls import allows_null  # noqa: PLC0415

    root = {"$defs": {"maybe": {"type": ["string", "null"]}, "never": {"type": "string"}}}
    allowed = [
        {"type": ["string", "null"]},
        {"type": "null"},
        {"enum": ["a", None]},
        {"const": None},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"$ref": "#/$defs/maybe"},
        {"allOf": [{"type": ["integer", "null"]}, {"type": ["null", "string"]}]},
    ]
    refused = [
        {"type": "string"},
        {"enum": ["a", "b"]},
        {"type": ["string", "null"], "enum": ["a"]},
        {"$ref": "#/$defs/never"},
        {"$ref": "#/$defs/missing"},
        {"description": "anything"},
        {},
        None,
    ]
    assert [allows_null(root, s) for s in allowed] == [True] * len(allowed)
    assert [allows_null(root, s) for s in refused] == [False] * len(refused)
    loop: dict[str, Any] = {"$defs": {"a": {"$ref": "#/$defs/a"}}}
    assert allows_null(loop, {"$ref": "#/$defs/a"}) is False  # bounded, not a RecursionError


def test_a_null_the_schema_allows_reaches_the_handler(catalog: Catalog) -> None:
    """onto.task.update's own "Unassign" example: the nulls stay, the handler clears both fields."""
    from toolcat.examples.onto_store import reset_store  # noqa: PLC0415

    reset_store(seed=True)
    try:
        answer = catalog.tool_exec("onto.task.update", {"task_id": "T-0001", "assignee": None, "due_date": None})
        assert answer["ok"] is True, answer
        assert answer["result"]["assignee"] is None
        assert answer["result"]["due_date"] is None
    finally:
        reset_store(seed=True)

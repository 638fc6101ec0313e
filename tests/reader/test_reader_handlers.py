"""Handlers plug into the reader: ``Catalog.open(handlers=...)``, register_handler, and ``toolcat.handlers`` entry points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import write_tree

from toolcat.build import build
from toolcat.reader import Catalog
from toolcat.reader.execution import handlers

UP = {"type": "mcp", "command": ["python", "/nonexistent/up.py"], "tool": "add"}


@pytest.fixture(scope="module")
def up_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalogue with one tool on an upstream MCP server (never started by these tests) and one search index."""
    root = tmp_path_factory.mktemp("handlers")
    tools = [
        {
            "id": "up.math.add",
            "summary": "Add two integers on an upstream server.",
            "kind": "read",
            "args_schema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
            "handler": UP,
        }
    ]
    tools += [
        {
            "id": f"up.bulk.item{i}",
            "summary": f"Bulk item number {i} for paging.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {}},
        }
        for i in range(12)
    ]
    tree = {
        "_node.yaml": {"title": "Up", "summary": "Handler tests."},
        "up/_node.yaml": {"title": "Up tools", "summary": "Tools for the handler tests."},
        "up/tools.yaml": {"tools": tools},
    }
    out = root / "build"
    build(write_tree(root / "src", tree), out)
    return out


def test_catalogue_handlers_run_before_the_installed_ones(up_build):
    """handlers={'mcp': fn} runs that catalogue's mcp tools through fn, with the validated args."""
    seen: list[Any] = []

    def fake(ctx: Any) -> dict[str, int]:
        seen.append(ctx.tool_id)
        return {"sum": ctx.args["a"] + ctx.args["b"]}

    catalog = Catalog.open(up_build, handlers={"mcp": fake})
    out = catalog.tool_exec("up.math.add", {"a": 2, "b": 3})
    assert out["ok"] is True, out
    assert out["result"] == {"sum": 5}
    assert seen == ["up.math.add"]
    assert catalog.tool_describe("up.math.add")["executable"] is True


def test_the_trust_policy_gates_catalogue_handlers(up_build):
    """A handler passed to open() still needs the host's allow_handlers: refused, it never runs."""
    seen: list[Any] = []
    catalog = Catalog.open(up_build, handlers={"mcp": seen.append}, allow_handlers={"mcp": []})
    out = catalog.tool_exec("up.math.add", {"a": 1, "b": 1})
    assert out["error"]["code"] == "NOT_AUTHORIZED"
    assert seen == []


def test_bad_handlers_option_is_bad_request(up_build):
    """handlers= that is not a mapping of type names to functions: open() raises BAD_REQUEST."""
    from toolcat.reader import ReaderError  # noqa: PLC0415

    for bad in ({"mcp": "not callable"}, ["mcp"], {1: print}):
        with pytest.raises(ReaderError) as info:
            Catalog.open(up_build, handlers=bad)
        assert info.value.code == "BAD_REQUEST"


def test_mcp_is_found_through_its_entry_point():
    """The mcp type resolves to toolcat.mcp.upstream.run_mcp through the toolcat.handlers entry point."""
    from toolcat.mcp.upstream import run_mcp  # noqa: PLC0415

    assert handlers.find_handler("mcp", "x.y") is run_mcp
    assert handlers.available("mcp")


def test_unknown_handler_type_is_not_executable_naming_it():
    """A type neither registered nor installed is NOT_EXECUTABLE naming the type and the entry point group."""
    with pytest.raises(handlers.ReaderError) as info:
        handlers.find_handler("nosuchkind", "x.y")
    assert info.value.code == "NOT_EXECUTABLE"
    assert "'nosuchkind'" in info.value.message
    assert "toolcat.handlers" in info.value.hints[0]
    assert not handlers.available("nosuchkind")


def test_mcp_without_its_package_names_the_extra(up_build, monkeypatch):
    """When the module the mcp handler needs is missing, tool_exec says to pip install 'toolcat[mcp]'."""
    monkeypatch.setattr(handlers, "EXTRAS", {"mcp": ("toolcat_no_such_module", "toolcat[mcp]")})
    monkeypatch.setattr(handlers, "_DISCOVERED", {})
    out = Catalog.open(up_build).tool_exec("up.math.add", {"a": 1, "b": 2})
    assert out["error"]["code"] == "NOT_EXECUTABLE"
    assert "'mcp'" in out["error"]["message"]
    assert "pip install 'toolcat[mcp]'" in out["error"]["hints"][0]


def test_one_cursor_format_and_one_limit_check(up_build):
    """list pages with 'o:<offset>' cursors; limit 0 is BAD_REQUEST and a large limit is capped, as in search."""
    catalog = Catalog.open(up_build)
    first = catalog.list("up", limit=5)
    assert first["next_cursor"] == "o:5"
    assert catalog.list("up", limit=5, cursor=first["next_cursor"])["ok"] is True
    assert catalog.list("up", cursor="o:5:deadbeef")["error"]["code"] == "BAD_REQUEST"
    assert catalog.list("up", limit=0)["error"]["code"] == "BAD_REQUEST"
    assert catalog.find_tool("bulk item", limit=0)["error"]["code"] == "BAD_REQUEST"
    assert catalog.list("up", limit=10_000)["ok"] is True
    page = catalog.search_tool_by_category("bulk item", "up", limit=2)
    assert page["next_cursor"].startswith("o:2:")
    assert catalog.search_tool_by_category("bulk item", "up", limit=2, cursor="o:2")["error"]["code"] == "BAD_REQUEST"

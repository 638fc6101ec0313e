"""``toolcat import mcp``: saved and live tools/list results become catalogue sources that compile."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support import TESTS

from toolcat.build import build
from toolcat.cli import main
from toolcat.importers.common import segment, summary_of
from toolcat.importers.mcp import McpImportError, convert, import_mcp, load_dump, namespace_for
from toolcat.reader import Catalog

UPSTREAM = TESTS / "mcp" / "upstream_server.py"


def test_ids_summaries_and_namespaces() -> None:
    """Names become valid id segments; the summary is the first sentence; server names lose their mcp noise."""
    assert segment("Create Issue!") == "create_issue"
    assert segment("2fa-check") == "t_2fa_check"
    assert namespace_for("github-mcp-server") == "github"
    assert namespace_for("mcp-postgres") == "postgres"
    assert summary_of("Create a new issue. Use it when asked.", "x") == "Create a new issue."
    assert summary_of("", "fallback title") == "fallback title"
    assert len(summary_of("word " * 100, "x")) <= 165


def test_convert_maps_fields_kinds_and_handler() -> None:
    """inputSchema, annotations, kind from readOnlyHint, a default schema and the mcp handler are all carried."""
    tools = [
        {
            "name": "get_thing",
            "description": "Get a thing.\nMore.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "annotations": {"readOnlyHint": True, "title": "Get", "icons": []},
        },
        {"name": "Delete Thing", "description": "Delete it."},
        {"name": "delete_thing", "description": "Another tool whose id collides."},
        {"description": "no name"},
    ]
    converted, warnings = convert(tools, "demo", {"type": "mcp", "command": ["srv"]})
    by_id = {t["id"]: t for t in converted}
    assert list(by_id) == ["demo.get_thing", "demo.delete_thing", "demo.delete_thing_2"]
    assert by_id["demo.get_thing"]["kind"] == "read"
    assert by_id["demo.get_thing"]["annotations"] == {"readOnlyHint": True, "title": "Get"}
    assert by_id["demo.get_thing"]["summary"] == "Get a thing."
    assert by_id["demo.delete_thing"]["kind"] == "write"
    assert by_id["demo.delete_thing"]["args_schema"] == {"type": "object"}
    assert by_id["demo.delete_thing"]["handler"] == {"type": "mcp", "command": ["srv"], "tool": "Delete Thing"}
    assert len(warnings) == 3
    assert "readOnlyHint: demo.get_thing" in warnings[-1]  # the server's word is named, not silently trusted


def test_load_dump_shapes(tmp_path: Path) -> None:
    """A JSON list, a {tools: [...]} object and a JSON-RPC response all load; other JSON is refused clearly."""
    tool = {"name": "a", "description": "A."}
    (tmp_path / "list.json").write_text(json.dumps([tool]))
    (tmp_path / "obj.json").write_text(json.dumps({"tools": [tool]}))
    (tmp_path / "rpc.json").write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}))
    (tmp_path / "bad.json").write_text(json.dumps({"nothing": 1}))
    for name in ("list", "obj", "rpc"):
        assert load_dump(tmp_path / f"{name}.json") == [tool]
    with pytest.raises(McpImportError, match="expected a JSON list"):
        load_dump(tmp_path / "bad.json")


@pytest.mark.corpus
@pytest.mark.slow
def test_github_toolsnaps_compile_and_search(corpus: Path, tmp_path: Path) -> None:
    """The GitHub MCP server's 117 saved tools import, compile, and find_tool finds issue creation."""
    snaps = corpus / "tools" / "mcp" / "github-mcp-server" / "toolsnaps"
    result = CliRunner().invoke(
        main,
        [
            "import",
            "mcp",
            "--file",
            str(snaps),
            "--out",
            str(tmp_path / "src" / "github"),
            "--server-url",
            "http://127.0.0.1:9/mcp",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "namespace github" in result.output
    written = yaml.safe_load((tmp_path / "src" / "github" / "tools.yaml").read_text())["tools"]
    assert len(written) == len(list(snaps.glob("*.json")))
    build(tmp_path / "src", tmp_path / "build")
    catalog = Catalog.open(tmp_path / "build")
    found = catalog.find_tool("open a new issue in a repository", 3)
    assert "github.create_issue" in [m["name"] for m in found["matches"]]
    spec = catalog.tool_describe("github.create_issue")
    assert spec["kind"] == "write"
    assert spec["args_schema"]["required"] == ["owner", "repo", "title"]
    dry = catalog.tool_exec("github.create_issue", {"owner": "o", "repo": "r", "title": "t"}, dry_run=True)
    assert dry["would_run"] == {
        "handler": "mcp",
        "args": {"owner": "o", "repo": "r", "title": "t"},
        "server": "http://127.0.0.1:9/mcp",
        "tool": "create_issue",
        "allowed": True,
    }
    assert catalog.tool_describe("github.get_me")["kind"] == "read"


@pytest.mark.slow
def test_live_import_over_stdio_then_run_through_toolcat(tmp_path: Path) -> None:
    """Importing a live server over stdio writes runnable sources: the compiled tool calls the server back."""
    command = f"{sys.executable} {UPSTREAM}"
    result = import_mcp(command=command, out=tmp_path / "src" / "upstream")
    assert result.namespace == "upstream_test"
    assert set(result.tool_ids) == {
        "upstream_test.add",
        "upstream_test.shout",
        "upstream_test.fail",
        "upstream_test.pid",
    }
    build(tmp_path / "src", tmp_path / "build")
    catalog = Catalog.open(tmp_path / "build")
    assert catalog.tool_describe("upstream_test.add")["args_schema"]["required"] == ["a", "b"]
    ran = catalog.tool_exec("upstream_test.add", {"a": 20, "b": 22})
    assert ran["ok"] is True, ran
    assert ran["result"] == {"sum": 42}


def test_import_cli_needs_exactly_one_source(tmp_path: Path) -> None:
    """Without --command/--url/--file (or with two) the command is a usage error."""
    result = CliRunner().invoke(main, ["import", "mcp"])
    assert result.exit_code == 2
    assert "exactly one of" in result.output


def test_docker_flattened_arguments_become_a_schema():
    """A Docker registry entry with `arguments: [{name, type, desc, optional}]` keeps its arguments when imported."""
    tools, _ = convert(
        [
            {
                "name": "list_tables",
                "description": "List tables.",
                "arguments": [
                    {"name": "db", "type": "string", "desc": "Database"},
                    {"name": "limit", "type": "integer", "desc": "Max rows", "optional": True},
                ],
            }
        ],
        "dk",
        None,
    )
    assert tools[0]["args_schema"] == {
        "type": "object",
        "properties": {
            "db": {"type": "string", "description": "Database"},
            "limit": {"type": "integer", "description": "Max rows"},
        },
        "required": ["db"],
    }

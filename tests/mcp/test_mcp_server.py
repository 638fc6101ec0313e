"""The MCP server, driven by the official SDK client over stdio and streamable HTTP (127.0.0.1 only)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from support import REPO, TESTS, free_port, write_tree

from toolcat.build import build
from toolcat.format.dialects import dialect_tools
from toolcat.mcp.discovery import portable_schema
from toolcat.mcp.resources import SKILL_SCHEME, parse_skill_uri, skill_uri

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
UPSTREAM = str(TESTS / "mcp" / "upstream_server.py")
MATH_EVAL = "toolcat.examples.util:util_math_eval"


def _mini_tree(extra_tool: bool = False) -> dict[str, Any]:
    """A small catalogue: a python tool, an upstream-MCP tool and a skill with one resource."""
    tools: list[dict[str, Any]] = [
        {
            "id": "mini.math.eval",
            "summary": "Evaluate an arithmetic expression exactly.",
            "kind": "read",
            "args_schema": {
                "type": "object",
                "properties": {"expression": {"type": "string", "minLength": 1}},
                "required": ["expression"],
                "additionalProperties": False,
            },
            "handler": MATH_EVAL,
        },
        {
            "id": "mini.up.add",
            "summary": "Add two integers on the upstream MCP server.",
            "kind": "read",
            "args_schema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
            "handler": {"type": "mcp", "command": ["python", UPSTREAM], "tool": "add"},
        },
        {
            "id": "mini.up.fail",
            "summary": "A tool the upstream server always refuses.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
            "handler": {"type": "mcp", "command": ["python", UPSTREAM], "tool": "fail"},
        },
    ]
    if extra_tool:
        tools.append(
            {
                "id": "mini.math.double",
                "summary": "Double a number (added by the rebuild).",
                "kind": "read",
                "args_schema": {"type": "object", "properties": {"x": {"type": "number"}}},
            }
        )
    return {
        "_node.yaml": {"title": "Mini", "summary": "A small catalogue for the MCP tests."},
        "mini/_node.yaml": {"title": "Mini tools", "summary": "Arithmetic and an upstream server."},
        "mini/tools.yaml": {"tools": tools},
        "skills/demo-skill/SKILL.md": "---\nname: demo-skill\ndescription: Demonstrates skills as MCP resources. "
        "Use when testing.\n---\n# Demo\n\nRead references/guide.md when asked.\n",
        "skills/demo-skill/references/guide.md": "# Guide\n\nThe level 3 text.\n",
    }


def _write(root: Path, tree: dict[str, Any]) -> Path:

    return write_tree(root, tree)


@pytest.fixture(scope="module")
def mini_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small catalogue compiled once for this module (served read-only)."""
    root = tmp_path_factory.mktemp("mini")
    out = root / "build"
    build(_write(root / "src", _mini_tree()), out)
    return out


@contextlib.asynccontextmanager
async def stdio_session(build_dir: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """A client session on ``toolcat serve --transport stdio`` started as a subprocess."""
    params = StdioServerParameters(
        command=TOOLCAT, args=["serve", "--build", str(build_dir), "--transport", "stdio", *extra], cwd=str(REPO)
    )
    with open(os.devnull, "w") as devnull:  # noqa: PTH123, ASYNC230 - the server's stderr is not under test
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


@contextlib.contextmanager
def http_server(build_dir: Path, *extra: str) -> Iterator[str]:
    """``toolcat serve --transport http`` on a free 127.0.0.1 port; yields the endpoint URL."""
    port = free_port()
    process = subprocess.Popen(
        [TOOLCAT, "serve", "--build", str(build_dir), "--transport", "http", "--port", str(port), *extra],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "listening on" in line, line
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def _data(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content, checked equal to the JSON text content."""
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


async def gateway_flow(session: ClientSession) -> dict[str, Any]:
    """help → group → op → exec with a bad argument → help(help_path) → retry → dry run; returns what it saw."""
    listed = await session.list_tools()
    seen: dict[str, Any] = {"tools": [t.name for t in listed.tools]}
    root = _data(await session.call_tool("tool_help", {"path": "root"}))
    seen["groups"] = [g["name"] for g in root["groups"]]
    group = _data(await session.call_tool("tool_help", {"path": "util.math"}))
    seen["group_ops"] = [o["op"] for o in group["operations"]]
    bad = await session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": 42}})
    seen["bad_is_error"] = bad.is_error
    seen["bad"] = _data(bad)
    help_path = seen["bad"]["error"]["help_path"]
    helped = _data(await session.call_tool("tool_help", {"path": help_path, "format": "full"}))
    seen["help_args"] = [a["name"] for a in helped["args"]]
    good = await session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": "(2 + 3) * 7"}})
    seen["good_is_error"] = good.is_error
    seen["good"] = _data(good)
    dry = await session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": "1/0"}, "dry_run": True})
    seen["dry"] = _data(dry)
    return seen


def _check_gateway_flow(seen: dict[str, Any]) -> None:
    # exactly the discovery tools (001: at most 3); the pinned file_read only with --pinned (tests/mcp/test_contract_mcp.py)
    assert seen["tools"] == ["tool_help", "tool_exec", "tool_batch"]
    assert "util" in seen["groups"]
    assert "util.math.eval" in seen["group_ops"]
    assert seen["bad_is_error"] is True
    assert seen["bad"]["ok"] is False
    assert seen["bad"]["error"]["code"] == "VALIDATION_ERROR"
    assert seen["bad"]["error"]["help_path"] == "util.math.eval"
    assert seen["bad"]["error"]["details"]["field_errors"][0]["field"] == "expression"
    assert "expression" in seen["help_args"]
    assert seen["good_is_error"] is False
    assert seen["good"]["result"]["result"] == 35
    assert seen["dry"]["dry_run"] is True
    assert seen["dry"]["result"] is None
    assert seen["dry"]["would_run"]["target"] == MATH_EVAL


def test_stdio_gateway_discovery_flow(example_build: Path) -> None:
    """Over stdio a real client browses, gets an isError envelope with help_path, retries and dry-runs."""

    async def main() -> dict[str, Any]:
        async with stdio_session(example_build) as session:
            return await gateway_flow(session)

    _check_gateway_flow(anyio.run(main))


def test_http_gateway_discovery_flow(example_build: Path) -> None:
    """Over streamable HTTP on 127.0.0.1 the same flow gives the same answers."""
    with http_server(example_build) as url:

        async def main() -> dict[str, Any]:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await gateway_flow(session)

        _check_gateway_flow(anyio.run(main))


def test_tools_list_follows_the_dialect_definitions(mini_build: Path) -> None:
    """tools/list is the dialect's tools in its order, with schemas and read-only hints from dialects.py."""

    async def main() -> dict[str, list[types.Tool]]:
        out = {}
        for dialect in ("spec", "gateway", "namespaced"):
            async with stdio_session(mini_build, "--dialect", dialect) as session:
                out[dialect] = (await session.list_tools()).tools
        return out

    listed = anyio.run(main)
    for dialect, tools in listed.items():
        expected = dialect_tools(dialect)
        assert [t.name for t in tools] == [t.name for t in expected]
        for tool, definition in zip(tools, expected, strict=True):
            assert tool.input_schema == portable_schema(definition.input_schema)  # same meaning, no type arrays
            assert tool.description == definition.description
            assert tool.output_schema is not None
            assert tool.output_schema["type"] == "object"
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is definition.read_only
    assert {t.name for t in listed["spec"] if t.annotations and t.annotations.read_only_hint} == {
        "list",
        "search_nodes",
        "search_tool_by_category",
        "expand_tool",
    }


def test_spec_dialect_flow_matches_output_schemas(example_build: Path) -> None:
    """list → search_nodes → search_tool_by_category → expand_tool → call_tool all validate against outputSchema."""

    async def main() -> dict[str, Any]:
        async with stdio_session(example_build, "--dialect", "spec") as session:
            # the SDK client itself raises when structuredContent breaks the declared outputSchema
            root = _data(await session.call_tool("list", {"path": ""}))
            nodes = _data(await session.call_tool("search_nodes", {"query": "calculate arithmetic"}))
            category = "/".join(nodes["results"][0]["path"])
            found = _data(
                await session.call_tool(
                    "search_tool_by_category", {"query": "evaluate an arithmetic expression", "category_path": category}
                )
            )
            expanded = _data(await session.call_tool("expand_tool", {"tool_id": "util_math_eval"}))
            called = _data(
                await session.call_tool("call_tool", {"tool_id": "util.math.eval", "args": {"expression": "6*7"}})
            )
            return {"root": root, "nodes": nodes, "found": found, "expanded": expanded, "called": called}

    seen = anyio.run(main)
    assert seen["root"]["nodes"]
    hits = seen["found"].get("tools") or seen["found"].get("results")  # the reader answers "results"
    assert "util.math.eval" in [t["tool_id"] for t in hits]
    assert seen["expanded"]["args_schema"]["required"] == ["expression"]
    assert seen["called"]["result"]["result"] == 42


def test_namespaced_dialect_and_errors(mini_build: Path) -> None:
    """tool_list/find_tool/tool_describe answer; bad input is isError; an unknown tool is a -32602 protocol error."""

    async def main() -> dict[str, Any]:
        async with stdio_session(mini_build, "--dialect", "namespaced") as session:
            listed = _data(await session.call_tool("tool_list", {"namespace": "mini"}))
            found = _data(await session.call_tool("find_tool", {"purpose": "evaluate arithmetic"}))
            described = _data(await session.call_tool("tool_describe", {"name": "mini_math_eval"}))
            missing = await session.call_tool("tool_describe", {"name": "mini.nope"})
            malformed = await session.call_tool("find_tool", {"purpose": "x", "limit": "many", "extra": 1})
            with pytest.raises(MCPError) as unknown:
                await session.call_tool("tool_exec", {"op": "mini.math.eval", "args": {}})
            return {
                "listed": listed,
                "found": found,
                "described": described,
                "missing": missing,
                "malformed": malformed,
                "unknown": unknown.value,
            }

    seen = anyio.run(main)
    assert {t["name"] for t in seen["listed"]["tools"]} == {"mini.math.eval", "mini.up.add", "mini.up.fail"}
    assert seen["found"]["matches"][0]["name"] == "mini.math.eval"
    assert seen["described"]["tool_id"] == "mini.math.eval"
    assert seen["missing"].is_error is True
    assert _data(seen["missing"])["error"]["code"] == "TOOL_NOT_FOUND"
    assert seen["malformed"].is_error is True
    fields = {e["field"] for e in _data(seen["malformed"])["error"]["details"]["field_errors"]}
    assert fields == {"limit", "extra"}
    assert seen["unknown"].code == types.INVALID_PARAMS
    assert "tool_exec" in seen["unknown"].message


def test_prompt_and_skill_resources(mini_build: Path) -> None:
    """The system prompt is an MCP prompt; a skill is level 2 and level 3 resources, read on demand."""

    async def main() -> dict[str, Any]:
        async with stdio_session(mini_build) as session:
            prompts = await session.list_prompts()
            system = await session.get_prompt("system_prompt")
            resources = await session.list_resources()
            level2 = await session.read_resource(skill_uri("demo-skill"))
            level3 = await session.read_resource(skill_uri("demo-skill", "references/guide.md"))
            with pytest.raises(MCPError) as missing:
                await session.read_resource(skill_uri("demo-skill", "references/nope.md"))
            return {
                "prompts": prompts,
                "system": system,
                "resources": resources,
                "level2": level2,
                "level3": level3,
                "missing": missing.value,
            }

    seen = anyio.run(main)
    assert [p.name for p in seen["prompts"].prompts] == ["system_prompt", "tools_prompt"]
    text = seen["system"].messages[0].content
    assert isinstance(text, types.TextContent)
    assert "tool_help" in text.text
    uris = [str(r.uri) for r in seen["resources"].resources]
    assert uris == [
        "skill://demo-skill/SKILL.md",  # the Skills extension's form first, then toolcat's own
        SKILL_SCHEME + "demo-skill",
        SKILL_SCHEME + "demo-skill/references/guide.md",
    ]
    body = seen["level2"].contents[0]
    assert isinstance(body, types.TextResourceContents)
    assert "Read references/guide.md" in body.text
    guide = seen["level3"].contents[0]
    assert isinstance(guide, types.TextResourceContents)
    assert guide.text == "# Guide\n\nThe level 3 text.\n"
    assert "references/guide.md" in json.dumps(seen["missing"].data)


def test_skill_uris_round_trip() -> None:
    """Skill URIs quote their parts and parse back; other URIs are not ours."""
    uri = skill_uri("demo-skill", "references/a b.md")
    assert uri == "toolcat://skills/demo-skill/references/a%20b.md"
    assert parse_skill_uri(uri) == ("demo-skill", "references/a b.md")
    assert parse_skill_uri(skill_uri("demo-skill")) == ("demo-skill", None)
    assert parse_skill_uri("file:///etc/passwd") is None


def test_upstream_mcp_server_through_the_mcp_handler(mini_build: Path) -> None:
    """tool_exec of a tool with an mcp handler reaches the upstream SDK server; its isError becomes an envelope."""

    async def main() -> tuple[dict[str, Any], types.CallToolResult]:
        async with stdio_session(mini_build) as session:
            added = _data(await session.call_tool("tool_exec", {"op": "mini.up.add", "args": {"a": 2, "b": 40}}))
            failed = await session.call_tool("tool_exec", {"op": "mini.up.fail", "args": {"reason": "testing"}})
            return added, failed

    added, failed = anyio.run(main)
    assert added["result"] == {"sum": 42}
    assert failed.is_error is True
    error = _data(failed)["error"]
    assert error["code"] == "UPSTREAM_ERROR"
    assert "refused: testing" in error["message"]
    assert error["help_path"] == "mini.up.fail"


def test_reader_loads_the_mcp_handler_lazily(mini_build: Path) -> None:
    """A plain Catalog runs an mcp-handled tool without the caller importing toolcat.mcp."""
    code = (
        "import sys, json\n"
        "from toolcat.reader import Catalog\n"
        "assert 'toolcat.mcp.upstream' not in sys.modules\n"
        f"c = Catalog.open({str(mini_build)!r})\n"
        "print(json.dumps(c.tool_exec('mini.up.add', {'a': 1, 'b': 2})['result']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"sum": 3}


@pytest.mark.slow
def test_rebuild_sends_list_changed_over_http_and_stdio(tmp_path: Path) -> None:
    """Rebuilding the served folder swaps the catalogue in and notifies HTTP and stdio clients."""
    out = tmp_path / "build"
    build(_write(tmp_path / "src", _mini_tree()), out)
    notes: list[str] = []

    async def on_message(message: Any) -> None:
        notes.append(str(getattr(message, "method", "")))

    with http_server(out, "--poll", "0.2") as url:

        async def main() -> tuple[str, str, list[str]]:
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                await session.initialize()
                params = StdioServerParameters(command=TOOLCAT, args=["serve", "--build", str(out), "--poll", "0.2"])
                with open(os.devnull, "w") as devnull:  # noqa: PTH123, ASYNC230
                    stdio_notes: list[str] = []

                    async def on_stdio(message: Any) -> None:
                        stdio_notes.append(str(getattr(message, "method", "")))

                    async with (
                        stdio_client(params, errlog=devnull) as (r2, w2),
                        ClientSession(r2, w2, message_handler=on_stdio) as other,
                    ):
                        await other.initialize()
                        before = _data(await session.call_tool("tool_help", {"path": "root", "format": "full"}))[
                            "registry_version"
                        ]
                        await anyio.to_thread.run_sync(
                            lambda: build(_write(tmp_path / "src", _mini_tree(extra_tool=True)), out)
                        )
                        with anyio.fail_after(20):
                            while (  # noqa: ASYNC110 - callbacks fill the lists
                                "notifications/tools/list_changed" not in notes
                                or "notifications/tools/list_changed" not in stdio_notes
                            ):
                                await anyio.sleep(0.1)
                        after = _data(await session.call_tool("tool_help", {"path": "root", "format": "full"}))[
                            "registry_version"
                        ]
                        ops = _data(await other.call_tool("tool_help", {"path": "mini.math"}))["operations"]
                        return before, after, [o["op"] for o in ops]

        before, after, ops = anyio.run(main)
    assert before != after
    assert "mini.math.double" in ops
    assert "notifications/resources/list_changed" in notes


def test_serve_refuses_a_folder_that_is_not_a_build(tmp_path: Path) -> None:
    """``toolcat serve`` on a folder without catalog.json exits 1 with a message, not a traceback."""
    started = time.perf_counter()
    done = subprocess.run(
        [TOOLCAT, "serve", "--build", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert "cannot serve" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.perf_counter() - started < 60

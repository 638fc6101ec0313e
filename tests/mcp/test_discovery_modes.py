"""Issue 25's serving modes through a real MCP SDK client.

The gateway's 3 tools with pinned ones counted apart, ``--dialect direct`` (seed 001's legacy mode) and the namespaced dialect's ``discover_<domain>_tools`` (seed 002).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from support import EXAMPLE_SRC
from test_mcp_clients import TOOLCAT, call, connect, http_serving

from toolcat.build import build
from toolcat.mcp.discovery import PINNED_META_KEY
from toolcat.reader import Catalog


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sandbox holding one text file for file.read."""
    root = tmp_path_factory.mktemp("workspace")
    (root / "config.yaml").write_text("name: demo\n")
    return root


@pytest.fixture(scope="module")
def domain_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with ``discovery: {per_domain: [file]}``."""
    src = tmp_path_factory.mktemp("domains") / "catalog_src"
    shutil.copytree(EXAMPLE_SRC, src)
    (src / "toolcat.yaml").write_text("search: {embedder: none}\ndiscovery: {per_domain: [file]}\n")
    build(src, src.parent / "build")
    return src.parent / "build"


def _stdio(build_dir: Path, dialect: str, sandbox: Path, *extra: str) -> StdioServerParameters:
    args = ["serve", "--build", str(build_dir), "--dialect", dialect, "--sandbox", str(sandbox), *extra]
    return StdioServerParameters(command=TOOLCAT, args=args)


def test_gateway_lists_three_discovery_tools_and_pinned_ones_apart(example_build: Path, workspace: Path) -> None:
    """With --pinned, tools/list of the gateway holds tool_help, tool_exec, tool_batch and the N pinned tools, marked."""
    pinned = {t["alias"] for t in Catalog.open(example_build).always_loaded()}

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", workspace, "--pinned"), "auto") as client:
            tools = (await client.list_tools()).tools
            marked = {t.name for t in tools if (t.meta or {}).get(PINNED_META_KEY)}
            discovery = [t.name for t in tools if t.name not in marked]
            assert discovery == ["tool_help", "tool_exec", "tool_batch"]
            assert marked == pinned
            assert len(tools) == 3 + len(pinned)

    anyio.run(run)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_direct_serves_every_allowed_tool_and_runs_it(example_build: Path, workspace: Path, mode: str) -> None:
    """--dialect direct lists each allowed tool by alias with its schema; a call runs through the reader."""
    expected = Catalog.open(example_build, read_only=True).direct_tools()

    async def run() -> None:
        async with connect(_stdio(example_build, "direct", workspace, "--read-only"), mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {t["alias"] for t in expected["tools"]}
            assert "file_write" not in tools
            assert "tool_help" not in tools
            assert "path" in tools["file_read"].input_schema["properties"]
            read = await call(client, "file_read", {"path": "config.yaml"})
            assert read["ok"] is True
            assert "name: demo" in str(read["result"])
            bad = await call(client, "file_read", {"max_lines": 0})
            assert bad["error"]["code"] == "VALIDATION_ERROR"
            assert bad["error"]["next_action"] is None

    anyio.run(run)


def test_direct_refuses_require_expand(example_build: Path) -> None:
    """serve --dialect direct --require-expand exits 2 saying why (every tool is listed with its schema)."""
    done = subprocess.run(
        [TOOLCAT, "serve", "--build", str(example_build), "--dialect", "direct", "--require-expand"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--require-expand has no meaning with --dialect direct" in done.stderr


async def _discover_flow(client) -> None:
    """002's flow: discover_file_tools() → discover_file_tools(tool="read_file") → file_read(...)."""
    names = [t.name for t in (await client.list_tools()).tools]
    assert names[:4] == ["tool_list", "tool_describe", "find_tool", "discover_file_tools"]
    listed = await call(client, "discover_file_tools", {})
    assert listed["ok"]
    assert "file.read" in [t["name"] for t in listed["tools"]]
    detail = await call(client, "discover_file_tools", {"tool": "read_file"})
    assert detail["parameters"][0] == "path"
    assert detail["usage"] == "file_read(path=<path>)"  # file.read is pinned: listed by its alias in both eras
    assert detail["next_action"]["op"] in [t.name for t in (await client.list_tools()).tools]
    read = await call(client, detail["next_action"]["op"], {"path": "config.yaml"})
    assert read["ok"] is True
    if "tool_call" in names:  # no session (2026-07-28): a tool not listed is described, then run through tool_call
        other = await call(client, "discover_file_tools", {"tool": "file.dir"})
        assert other["next_action"]["op"] == "tool_call", other
        assert other["usage"].startswith('tool_call(name="file_dir", arguments={')
        listed = await call(client, "tool_call", {"name": "file_dir", "arguments": {"path": "."}})
        assert listed["ok"] is True, listed
    wrong = await call(client, "discover_file_tools", {"tool": 3})
    assert wrong["error"]["code"] == "VALIDATION_ERROR"


def test_per_domain_discovery_over_stdio(domain_build: Path, workspace: Path) -> None:
    """Over stdio (handshake era) the namespaced dialect serves discover_file_tools and 002's flow completes."""

    async def run() -> None:
        async with connect(_stdio(domain_build, "namespaced", workspace), "legacy") as client:
            await _discover_flow(client)

    anyio.run(run)


def test_per_domain_discovery_over_http(domain_build: Path, workspace: Path) -> None:
    """Over streamable HTTP (2026-07-28, stateless) the same flow completes."""
    with http_serving(domain_build, "--dialect", "namespaced", "--pinned", "--sandbox", str(workspace)) as url:

        async def run() -> None:
            async with connect(url, "auto") as client:
                await _discover_flow(client)

        anyio.run(run)

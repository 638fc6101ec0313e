"""Agent frameworks' MCP clients against ``toolcat serve`` over streamable HTTP: each lists and calls a tool per dialect.

openai-agents, pydantic-ai (its MCPToolset) and fastmcp's Client are installed from the [dev] extra beside
toolcat[mcp]; a framework that is absent is skipped with the reason. langchain-mcp-adapters is not among
them: its releases for mcp 2.x fail at import (0.3.1) and the next ones require mcp<2 (docs/mcp.md), so it runs
in its own environment against the same servers in tests/mcp/test_langchain_adapter.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp_clients import DIALECTS, http_serving

#: Per dialect: a discovery call, then the catalogue tool util.math.eval through that dialect.
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "spec": [("list", {}), ("call_tool", {"tool_id": "util.math.eval", "args": {"expression": "6*7"}})],
    "gateway": [("tool_help", {}), ("tool_exec", {"op": "util.math.eval", "args": {"expression": "6*7"}})],
    "namespaced": [("tool_list", {}), ("util_math_eval", {"expression": "6*7"})],
}


@pytest.fixture(scope="module", params=DIALECTS)
def served(request: pytest.FixtureRequest, example_build: Path) -> Iterator[tuple[str, str]]:
    """(dialect, URL) of the example catalogue served over HTTP in each dialect."""
    with http_serving(example_build, "--dialect", request.param) as url:
        yield request.param, url


def _answer(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    return data


def _check(dialect: str, names: list[str], answers: list[dict[str, Any]]) -> None:
    assert CALLS[dialect][0][0] in names
    assert all(answer.get("ok", True) is not False for answer in answers), answers
    assert answers[1]["result"]["result"] == 42, answers[1]


def test_openai_agents_lists_and_calls(served: tuple[str, str]) -> None:
    """openai-agents' MCPServerStreamableHttp lists the dialect's tools and runs util.math.eval through it."""
    mcp_module = pytest.importorskip("agents.mcp", reason="openai-agents is not installed")
    dialect, url = served

    async def run() -> None:
        async with mcp_module.MCPServerStreamableHttp(params={"url": url}, client_session_timeout_seconds=60) as server:
            names = [tool.name for tool in await server.list_tools()]
            answers = []
            for name, args in CALLS[dialect]:
                result = await server.call_tool(name, args)
                answers.append(_answer(result.content[0].text))
            _check(dialect, names, answers)

    anyio.run(run)


def test_pydantic_ai_lists_and_calls(served: tuple[str, str]) -> None:
    """pydantic-ai's MCPToolset lists the dialect's tools and runs util.math.eval through it."""
    mcp_module = pytest.importorskip("pydantic_ai.mcp", reason="pydantic-ai-slim[mcp] is not installed")
    dialect, url = served

    async def run() -> None:
        toolset = mcp_module.MCPToolset(url)
        async with toolset:
            names = [tool.name for tool in await toolset.list_tools()]
            answers = []
            for name, args in CALLS[dialect]:
                value = await toolset.direct_call_tool(name, args)
                answers.append(value if isinstance(value, dict) else _answer(str(value)))
            _check(dialect, names, answers)

    anyio.run(run)


def test_fastmcp_client_lists_and_calls(served: tuple[str, str]) -> None:
    """fastmcp's Client lists the dialect's tools and runs util.math.eval through it."""
    fastmcp = pytest.importorskip("fastmcp", reason="fastmcp is not installed")
    dialect, url = served

    async def run() -> None:
        async with fastmcp.Client(url) as client:
            names = [tool.name for tool in await client.list_tools()]
            answers = []
            for name, args in CALLS[dialect]:
                result = await client.call_tool(name, args)
                answers.append(_answer(result.content[0].text))
            _check(dialect, names, answers)

    anyio.run(run)

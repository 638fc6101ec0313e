"""LangChain's MCP adapter as a user runs it, against ``toolcat serve``: run by .venv-langchain's python, not pytest's.

langchain-mcp-adapters needs mcp<2 and toolcat[mcp] needs mcp>=2, so this script runs in its own environment
(``make langchain``) and talks to the server only over the protocol. Usage::

    langchain_client.py CONNECTION PLAN

CONNECTION is the adapter's connection config as JSON (``{"transport": "stdio", "command": ..., "args": [...]}`` or
``{"transport": "streamable_http", "url": ...}``); PLAN is a JSON list of ``[tool_name, args]`` steps. The script
uses the adapter's default client (``MultiServerMCPClient.get_tools()``: every tool call opens a new session), calls
each step's tool with ``ainvoke`` and prints one JSON object: ``tools`` (the names listed), ``answers`` (each step's
answer, parsed from its text), ``unlisted`` (steps whose tool was not listed) and ``versions``.

A step whose tool is not listed is the namespaced dialect's alias of a described tool: the script builds its LangChain
tool with the adapter's ``convert_mcp_tool_to_langchain_tool`` from the describe answer (``alias``, ``args_schema``),
bound to the connection, not to a session, as ``get_tools()`` binds its own.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.types import Tool

SERVER = "toolcat"


def _parse(content: Any) -> Any:
    """The JSON the model reads: the tool message's single text block (or string), parsed."""
    if isinstance(content, list):
        texts = [block["text"] for block in content if isinstance(block, dict) and block.get("type") == "text"]
        content = "".join(texts)
    return json.loads(content)


def _described_tool(name: str, answers: list[Any], connection: dict[str, Any]) -> Any:
    """A LangChain tool for ``name`` from the describe answer that named it as its alias."""
    for answer in reversed(answers):
        if isinstance(answer, dict) and answer.get("alias") == name:
            mcp_tool = Tool(name=name, description=answer.get("summary", ""), inputSchema=answer["args_schema"])
            return convert_mcp_tool_to_langchain_tool(None, mcp_tool, connection=connection, server_name=SERVER)
    sys.exit(f"{name} is neither listed nor named by an earlier describe answer")


async def main(connection: dict[str, Any], plan: list[list[Any]]) -> dict[str, Any]:
    client = MultiServerMCPClient({SERVER: connection})
    tools = {tool.name: tool for tool in await client.get_tools()}
    answers: list[Any] = []
    unlisted: list[str] = []
    for name, args in plan:
        tool = tools.get(name)
        if tool is None:
            unlisted.append(name)
            tool = _described_tool(name, answers, connection)
        answers.append(_parse(await tool.ainvoke(args)))
    versions = {dist: version(dist) for dist in ("langchain-mcp-adapters", "langchain-core", "mcp")}
    return {"tools": sorted(tools), "answers": answers, "unlisted": unlisted, "versions": versions}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))))

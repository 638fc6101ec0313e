"""An upstream MCP server that misbehaves, for tests/mcp/test_mcp_load.py (the official SDK's MCPServer).

Run ``python tests/mcp/hostile_upstream_server.py`` (stdio) or ``... http PORT``. Tools: ``sleep`` (slow),
``flood`` (a result of n content blocks), ``noisy`` (writes to stderr) and ``pid``.
"""

from __future__ import annotations

import os
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile-upstream-test")


@server.tool(description="The process id of this server.")
def pid() -> dict[str, int]:
    """The process id."""
    return {"pid": os.getpid()}


@server.tool(description="Wait, then answer {slept}.")
async def sleep(seconds: float) -> dict[str, float]:
    """Answer after ``seconds`` (a slow upstream)."""
    await anyio.sleep(seconds)
    return {"slept": seconds}


@server.tool(description="Answer with n text blocks.")
def flood(n: int) -> list[types.TextContent]:
    """A result of ``n`` content blocks (an upstream that answers too much)."""
    return [types.TextContent(text="x") for _ in range(n)]


@server.tool(description="Write a line to stderr, then answer.")
def noisy() -> dict[str, bool]:
    """Print to stderr (which must reach the log, not the CLI's output)."""
    print("UPSTREAM-NOISE-LINE", file=sys.stderr, flush=True)
    return {"ok": True}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")

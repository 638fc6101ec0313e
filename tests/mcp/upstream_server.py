"""A small upstream MCP server for the tests, written with the official SDK (MCPServer, formerly FastMCP).

Run ``python tests/mcp_upstream_server.py`` (stdio) or ``... http PORT`` (streamable HTTP on 127.0.0.1).
Tools: ``add`` (structured result), ``shout`` (text result), ``fail`` (an isError result) and ``pid``
(the server's process id, to tell a reused session from a new one).
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("upstream-test")


@server.tool(description="Add two integers. Returns {sum}.")
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@server.tool(description="Upper-case a text.")
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool(description="Always fails, with a message.")
def fail(reason: str) -> str:
    """Raise, so the client sees an isError result."""
    raise ToolError(f"refused: {reason}")


@server.tool(description="The process id of this server.")
def pid() -> dict[str, int]:
    """The process id, so a client can tell whether it talks to the same server as before."""
    return {"pid": os.getpid()}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")

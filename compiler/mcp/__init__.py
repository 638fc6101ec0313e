"""toolcat over the Model Context Protocol: the server, the ``mcp`` handler kind and the importer.

* :mod:`toolcat.mcp.server` serves a published catalogue to MCP clients through one
  dialect's 2-5 discovery tools (``toolcat serve``);
* :mod:`toolcat.mcp.upstream` runs catalogue tools whose handler is ``{type: mcp}`` on an
  upstream MCP server;
* :mod:`toolcat.importers.mcp` turns a server's ``tools/list`` into catalogue sources
  (``toolcat import mcp``).

Nothing is imported here: the ``mcp`` SDK loads only when one of those modules is used.
"""

from __future__ import annotations

"""Native in-process integrations: each dialect's tools as LangChain tools, openai-agents tools, a pydantic-ai toolset.

For hosts that want no MCP hop, or cannot install ``mcp`` 2.x beside their framework. Built on
:class:`toolcat.reader.Catalog` (the reader-only install, stdlib) and never importing ``mcp``:

* :class:`~toolcat.integrations.toolbox.Toolbox`: one dialect's tools and the per-step gating of seed 004;
* :mod:`toolcat.integrations.langchain` (``pip install 'toolcat[langchain]'``): ``langchain_tools(toolbox)``;
* :mod:`toolcat.integrations.openai_agents` (``toolcat[openai-agents]``): ``function_tools(toolbox)``;
* :mod:`toolcat.integrations.pydantic_ai` (``toolcat[pydantic-ai]``): ``ToolcatToolset(toolbox)``.

Each framework module imports its framework when it is imported, not before (docs/reader.md, "Integrations").
"""

from __future__ import annotations

from .toolbox import WORKING_SET_SIZE, HostTool, Toolbox

__all__ = ["WORKING_SET_SIZE", "HostTool", "Toolbox"]

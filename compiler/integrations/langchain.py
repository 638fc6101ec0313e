"""A dialect's tools as LangChain tools (langchain-core ``StructuredTool``), one list per step of the host's loop.

``langchain_tools(toolbox)`` gives the tools of the *next* step: bind them each step (``model.bind_tools(...)``)
and run each tool call through the tool of that name. In the namespaced dialect a tool the model described is in
the list from the next call on (seed 004's per-step gating, kept by the :class:`~toolcat.integrations.Toolbox`).
Each tool answers the reader's JSON (a result or an error envelope), which LangChain puts in the ToolMessage.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from langchain_core.tools import StructuredTool

from ..format.types import Json
from .toolbox import HostTool, Toolbox

__all__ = ["langchain_tools"]


def _tool(toolbox: Toolbox, tool: HostTool) -> StructuredTool:
    def run(**arguments: Any) -> Json:
        return toolbox.call(tool.name, arguments)

    async def arun(**arguments: Any) -> Json:
        return await asyncio.to_thread(functools.partial(toolbox.call, tool.name, arguments))

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.parameters,  # a JSON Schema: LangChain passes the model's arguments through as they are
        func=run,
        coroutine=arun,
    )


def langchain_tools(toolbox: Toolbox) -> list[StructuredTool]:
    """The toolbox's tools for the next step, as LangChain tools (ask again each step: described tools join)."""
    return [_tool(toolbox, tool) for tool in toolbox.tools()]

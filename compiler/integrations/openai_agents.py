"""A dialect's tools as openai-agents ``FunctionTool``s, in a list that follows the model's discoveries.

``Agent(tools=function_tools(toolbox))``: the list is the Agent's own (it keeps the list object it is given and
reads it at the start of every turn), and the toolbox updates it in place when the tool list changes. So in the
namespaced dialect a tool the model described is offered from the next turn on (seed 004's per-step gating)
and the model can call it by its alias, which openai-agents only allows for listed tools. Pass the list itself,
not a copy, and use one toolbox (and one Agent) per conversation: openai-agents refuses a tool list that changes
while several runs share the Agent.
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

from agents import FunctionTool, RunContextWrapper

from ..format.envelope import error_envelope
from ..format.types import Json
from .toolbox import HostTool, Toolbox

__all__ = ["function_tools"]


def _arguments(text: str) -> Any:
    """The model's argument JSON; None (no arguments) when empty."""
    return json.loads(text) if text and text.strip() else None


def _tool(toolbox: Toolbox, tool: HostTool) -> FunctionTool:
    async def invoke(_ctx: RunContextWrapper[Any], arguments: str) -> str:
        try:
            parsed = _arguments(arguments)
        except ValueError as exc:
            answer: Json = error_envelope(
                "BAD_REQUEST",
                f"the arguments of {tool.name} are not JSON: {exc}",
                hints=["Send the arguments as one JSON object."],
            )
        else:
            answer = await asyncio.to_thread(functools.partial(toolbox.call, tool.name, parsed))
        return json.dumps(answer, ensure_ascii=False, default=str)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,  # the schemas are the catalogue's: strict mode would rewrite them
    )


def function_tools(toolbox: Toolbox) -> list[Any]:
    """The toolbox's tools as a live list of FunctionTools: give it to ``Agent(tools=...)`` as it is."""
    tools: list[Any] = []
    made: dict[str, tuple[HostTool, FunctionTool]] = {}  # by name: a tool keeps its FunctionTool while unchanged

    def sync() -> None:
        current = toolbox.tools()
        for tool in current:
            if tool.name not in made or made[tool.name][0] != tool:
                made[tool.name] = (tool, _tool(toolbox, tool))
        for gone in set(made) - {t.name for t in current}:
            del made[gone]
        tools[:] = [made[t.name][1] for t in current]  # in place: the Agent holds this very list

    sync()
    toolbox.on_change(sync)
    return tools

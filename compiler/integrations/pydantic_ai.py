"""A dialect's tools as a pydantic-ai toolset whose tools can change at every run step.

``Agent(model, toolsets=[ToolcatToolset(toolbox)])``: pydantic-ai asks a toolset for its tools at the start of
each run step (``get_tools``), so in the namespaced dialect a tool the model described is offered from the next
step on (seed 004's per-step gating) and the model can call it by its alias. Each call answers the reader's
JSON, a result or an error envelope the model reads and can act on (no exception, no retry prompt).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from .toolbox import Toolbox

__all__ = ["ToolcatToolset"]

#: Arguments are an object of JSON values; the reader checks them against the tool's schema and answers errors.
_ARGUMENTS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class ToolcatToolset(AbstractToolset[Any]):
    """The tools of a :class:`~toolcat.integrations.Toolbox`, listed afresh at every run step."""

    def __init__(self, toolbox: Toolbox, *, id: str | None = None) -> None:  # noqa: A002 - pydantic-ai's name
        self.toolbox = toolbox
        self._id = id

    @property
    def id(self) -> str | None:
        """The id given at construction (pydantic-ai's durable execution needs one)."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:  # noqa: ARG002 - the API's
        """The toolbox's tools now: the discovery and pinned tools, and (namespaced) the ones described so far."""
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=tool.name, description=tool.description, parameters_json_schema=tool.parameters
                ),
                max_retries=1,
                args_validator=_ARGUMENTS,
            )
            for tool in self.toolbox.tools()
        }

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[Any],  # noqa: ARG002 - the API's
        tool: ToolsetTool[Any],  # noqa: ARG002 - the API's
    ) -> Any:
        """The reader's answer to the call (a result or an error envelope)."""
        return await asyncio.to_thread(functools.partial(self.toolbox.call, name, tool_args))

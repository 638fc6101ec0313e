"""Issue 34 over a real MCP client (both protocol eras): allowed nulls reach handlers, pinned tools, weak searches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from test_mcp_clients import TOOLCAT, call, connect


def _params(build_dir: Path, dialect: str, sandbox: Path, *extra: str) -> StdioServerParameters:
    args = ["serve", "--build", str(build_dir), "--dialect", dialect, "--sandbox", str(sandbox), "--poll", "0", *extra]
    return StdioServerParameters(command=TOOLCAT, args=list(args))


# -- over MCP: the unassign example, in both protocol eras, gateway and namespaced ----------------------------
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("dialect", ["gateway", "namespaced"])
def test_an_allowed_null_unassigns_a_task_over_mcp(example_build: Path, tmp_path: Path, mode: str, dialect: str):
    """The model's "assignee": null and "due_date": null reach the handler over a real MCP client: the task is unassigned."""
    params = _params(example_build, dialect, tmp_path)
    args = {"task_id": "T-0001", "assignee": None, "due_date": None}

    async def run() -> dict[str, Any]:
        async with connect(params, mode) as client:
            if dialect == "gateway":
                return await call(client, "tool_exec", {"op": "onto.task.update", "args": args})
            described = await call(client, "tool_describe", {"name": "onto.task.update"})
            return await call(client, described["alias"], args)

    answer = anyio.run(run)
    assert answer["ok"] is True, answer
    assert answer["result"]["assignee"] is None
    assert answer["result"]["due_date"] is None

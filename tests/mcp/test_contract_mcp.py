"""Issue 34 over a real MCP client (both protocol eras): allowed nulls reach handlers, pinned tools, weak searches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from test_mcp_clients import TOOLCAT, call, connect

from toolcat.reader import Catalog, ReaderError


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


# -- 001: the gateway lists exactly its discovery tools unless the host (or the catalogue) asks for pinned ones -----
def _names(tools: list[Any]) -> list[str]:
    return [t.name for t in tools]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_gateway_lists_exactly_three_tools_unless_pinned_is_asked(example_build: Path, tmp_path: Path, mode: str):
    """001: without --pinned, tools/list is tool_help, tool_exec, tool_batch; --pinned adds the runnable pinned tools."""
    pinned = {t["alias"] for t in Catalog.open(example_build).always_loaded()}
    assert pinned  # the example pins file.read

    async def run() -> tuple[list[str], list[str], list[str]]:
        async with connect(_params(example_build, "gateway", tmp_path), mode) as client:
            plain = _names((await client.list_tools()).tools)
            with_pinned_off = await call(client, "tool_help", {"path": "root"})
            assert with_pinned_off["ok"] is True
        async with connect(_params(example_build, "gateway", tmp_path, "--pinned"), mode) as client:
            asked = _names((await client.list_tools()).tools)
            read = await call(client, "file_read", {"path": "notes.txt"})
            assert read["error"]["code"] == "NOT_FOUND", read  # listed and callable (the file is absent)
        no_python = ("--pinned", "--allow-python", "nothing.allowed.")
        async with connect(_params(example_build, "gateway", tmp_path, *no_python), mode) as client:
            refused = _names((await client.list_tools()).tools)
        return plain, asked, refused

    plain, asked, refused = anyio.run(run)
    assert plain == ["tool_help", "tool_exec", "tool_batch"]
    assert asked[:3] == plain
    assert set(asked[3:]) == pinned
    assert refused == plain  # a pinned tool this session cannot run (python handlers refused) is not listed


def test_pinned_python_api_and_catalogue_setting(example_src_copy: Path, tmp_path: Path) -> None:
    """Catalog.open(pinned=) decides; without it the catalogue's discovery.pinned does (off by default)."""
    from toolcat.build import build  # noqa: PLC0415

    plain = tmp_path / "plain"
    build(example_src_copy, plain)
    assert Catalog.open(plain).pins_tools is False
    assert Catalog.open(plain).pinned_tools() == []
    assert [t["tool_id"] for t in Catalog.open(plain, pinned=True).pinned_tools()] == ["file.read"]
    assert Catalog.open(plain, pinned=True, allow_handlers={"python": []}).pinned_tools() == []
    (example_src_copy / "toolcat.yaml").write_text("search: {embedder: none}\ndiscovery: {pinned: true}\n")
    setting = tmp_path / "setting"
    build(example_src_copy, setting)
    assert Catalog.open(setting).pins_tools is True
    assert Catalog.open(setting, pinned=False).pinned_tools() == []
    with pytest.raises(ReaderError) as caught:
        Catalog.open(setting, pinned="yes")  # type: ignore[arg-type]
    assert caught.value.code == "BAD_REQUEST"


# -- 002: the per-domain system prompt names the discover_<domain>_tools it offers -------------------------------
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_per_domain_system_prompt_names_its_discover_tools(example_src_copy: Path, tmp_path: Path, mode: str):
    """With discovery.per_domain, prompts/get system_prompt names each discover_<domain>_tools that tools/list shows."""
    from toolcat.build import build  # noqa: PLC0415

    (example_src_copy / "toolcat.yaml").write_text("search: {embedder: none}\ndiscovery: {per_domain: [file, onto]}\n")
    out = tmp_path / "build"
    build(example_src_copy, out)

    async def run() -> tuple[list[str], str]:
        async with connect(_params(out, "namespaced", tmp_path), mode) as client:
            names = _names((await client.list_tools()).tools)
            prompt = await client.get_prompt("system_prompt")
            return names, prompt.messages[0].content.text

    names, text = anyio.run(run)
    offered = [n for n in names if n.startswith("discover_")]
    assert offered == ["discover_file_tools", "discover_onto_tools"]
    for name in offered:
        assert name in text, text


# -- no hint loops over MCP: the next_action walk (tests/walk_support.py) in both eras, gateway and namespaced ------
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("dialect", ["gateway", "namespaced"])
def test_next_action_walk_over_mcp(example_build: Path, tmp_path: Path, mode: str, dialect: str) -> None:
    """From every error of every example tool (and the weak searches), 5 followed next_actions never revisit a call.

    http handlers are refused here (--allow-http names only an unused loopback port), so no request leaves the
    machine; the Python API walk (tests/test_next_action_walk.py) runs them through a stand-in.
    """
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415
    from walk_support import Walk, exposed_tools, starting_calls, weak_searches  # noqa: PLC0415

    cat = Catalog.open(example_build)
    calls = starting_calls(cat, dialect) + weak_searches(dialect)
    aliases = {row["alias"] for row in cat.tool_list()["tools"]}
    params = _params(example_build, dialect, tmp_path, "--allow-http", "127.0.0.1:9")

    async def run() -> Walk:
        async with connect(params, mode) as client:

            async def execute(op: str, args: dict[str, Any]) -> dict[str, Any]:
                try:
                    return await call(client, op, args)
                except MCPError as exc:  # an alias the server does not know: a protocol error, not a loop
                    return {"ok": False, "error": {"code": "PROTOCOL", "message": str(exc), "next_action": None}}

            listed = {t.name for t in (await client.list_tools()).tools}  # tool_call too, where the era has no session
            walk = Walk(dialect, execute, exposed_tools(dialect, []) | listed, aliases)
            for op, args in calls:
                await walk.walk(op, args)
            return walk

    walk = anyio.run(run)
    assert not walk.problems, "\n".join(walk.problems)
    assert "PROTOCOL" not in walk.codes
    assert {"VALIDATION_ERROR", "TOOL_NOT_FOUND"} <= walk.codes
    assert walk.steps >= len(calls)


# -- 004 over MCP: describe -> the alias call describe offers -> task.code_review(target="src/") -----------------
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_004_describe_then_alias_call_over_mcp(example_build: Path, tmp_path: Path, mode: str) -> None:
    """tool_describe(task.code_review) offers a call that runs; task_code_review(target="src/") runs as 004 writes it."""

    async def run() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with connect(_params(example_build, "namespaced", tmp_path), mode) as client:
            described = await call(client, "tool_describe", {"name": "task.code_review"})
            action = described["next_action"]
            offered = await call(client, action["op"], action["args"])
            verbatim = await call(client, "task_code_review", {"target": "src/"})
            return described, offered, verbatim

    described, offered, verbatim = anyio.run(run)
    action = described["next_action"]
    if action["op"] == "tool_call":  # the sessionless era calls a described tool through tool_call (f-mcp)
        assert action["args"]["name"] == "task_code_review"
        assert action["args"]["arguments"], action  # the required target, not {}
    else:
        assert action["op"] == "task_code_review"
        assert action["args"], action  # the required target, not {}
    assert offered["ok"] is True, offered
    assert verbatim["ok"] is True, verbatim
    assert verbatim["result"]["arguments"]["target"] == "src/"

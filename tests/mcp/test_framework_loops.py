"""Agent frameworks' own loops against ``toolcat serve``, each driven by a scripted model (no network).

openai-agents' ``Runner.run`` (a custom ``Model``), pydantic-ai's ``Agent.run`` (``FunctionModel``) and a loop over
fastmcp 4's ``Client`` run one script per dialect: find a tool (whose hit carries its one-line summary) → read its
help/description → a failing call → the fix its answer points to → success; the gateway adds a ``tool_batch``
whose typed results carry each item's result. The model may only call the tools the framework lists to it at
that step (as a real model: the frameworks refuse any other name), so 004's namespaced gating is tested as a
model meets it: described tools join the list in the handshake era, ``tool_call`` runs them without a session.

Eras: fastmcp and pydantic-ai in both (``mode="legacy"`` for the 2025-11-25 handshake); openai-agents 0.24
negotiates 2026-07-28 only (its MCP client is built with ``mode="auto"``, not configurable). Transports: one
HTTP server per dialect for the module, and a stdio server per case for every dialect (the way a desktop client
starts it). The frameworks are installed from the [dev] extra; one that is absent is skipped.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp_clients import http_serving

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
ALL_DIALECTS = ("spec", "gateway", "namespaced", "direct")
PURPOSE = "evaluate a math expression"
TOOL = "util.math.eval"
TIMEOUT_S = 120  # a busy 2-CPU machine: server start-up and first search load take seconds there

#: A script yields (tool name, arguments) and is sent each answer (the JSON the model reads); it returns at the end.
Script = Generator[tuple[str, dict[str, Any]], dict[str, Any], None]


def _summary(hit: dict[str, Any]) -> None:
    """A search hit carries its one-line summary, capped."""
    assert isinstance(hit.get("summary"), str), hit
    assert 0 < len(hit["summary"]) <= 120, hit


def _refused(answer: dict[str, Any], code: str | None = "VALIDATION_ERROR") -> None:
    """An error envelope (with ``code`` when given)."""
    assert answer["ok"] is False, answer
    assert code is None or answer["error"]["code"] == code, answer


def _gave_42(answer: dict[str, Any]) -> None:
    """util.math.eval's answer to 6*7."""
    assert answer["ok"] is True, answer
    assert answer["result"]["result"] == 42, answer


def _via(action: dict[str, Any], args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A call of the tool a next_action names, with other arguments (through tool_call when it says so)."""
    if action["op"] == "tool_call":
        return "tool_call", {"name": action["args"]["name"], "arguments": args}
    return action["op"], args


def script_namespaced() -> Script:
    """004: find_tool → tool_describe → the call its next_action names (bad args) → the fix → 42."""
    found = yield "find_tool", {"purpose": PURPOSE}
    hit = found["matches"][0]
    assert hit["name"] == TOOL, found
    _summary(hit)
    described = yield "tool_describe", {"name": hit["name"]}
    assert "expression" in described["args_schema"]["properties"], described
    action = described["next_action"]
    bad = yield _via(action, {"expr": "6*7"})
    _refused(bad)
    fixed = yield _via(action, {"expression": "6*7"})
    _gave_42(fixed)


def script_gateway() -> Script:
    """001: tool_help(query) → tool_help(op) → a failing tool_exec → tool_help at its help_path → the fix → a batch."""
    found = yield "tool_help", {"query": PURPOSE}
    hit = found["operations"][0]
    assert hit["op"] == TOOL, found
    _summary(hit)
    helped = yield "tool_help", {"path": hit["op"]}
    assert helped["op"] == TOOL, helped
    bad = yield "tool_exec", {"op": TOOL, "args": {"expr": "6*7"}}
    _refused(bad)
    again = yield "tool_help", {"path": bad["error"]["help_path"]}
    assert again["ok"] is True, again
    fixed = yield "tool_exec", {"op": TOOL, "args": {"expression": "6*7"}}
    _gave_42(fixed)
    items = [{"type": "exec", "op": TOOL, "args": {"expression": e}} for e in ("6*7", "2+3")]
    batch = yield "tool_batch", {"ops": items}
    assert [r["result"]["result"] for r in batch["results"]] == [42, 5], batch


def script_spec() -> Script:
    """000: search_tool_by_category → expand_tool → a failing call_tool → the fix."""
    found = yield "search_tool_by_category", {"query": PURPOSE, "category_path": ""}
    hit = found["results"][0]
    assert hit["tool_id"] == TOOL, found
    _summary(hit)
    expanded = yield "expand_tool", {"tool_id": TOOL}
    assert "expression" in expanded["args_schema"]["properties"], expanded
    bad = yield "call_tool", {"tool_id": TOOL, "args": {"expr": "6*7"}}
    _refused(bad)
    fixed = yield "call_tool", {"tool_id": TOOL, "args": {"expression": "6*7"}}
    _gave_42(fixed)


def script_direct() -> Script:
    """001's legacy mode: the tool is listed itself; an expression it refuses → the fix."""
    bad = yield "util_math_eval", {"expression": "6*/7"}
    _refused(bad, None)
    fixed = yield "util_math_eval", {"expression": "6*7"}
    _gave_42(fixed)


SCRIPTS: dict[str, Callable[[], Script]] = {
    "spec": script_spec,
    "gateway": script_gateway,
    "namespaced": script_namespaced,
    "direct": script_direct,
}


class ScriptedModel:
    """A model that follows one script: each step it sees the tools listed to it and the last answer."""

    def __init__(self, dialect: str) -> None:
        self.script = SCRIPTS[dialect]()
        self.calls: list[str] = []
        self.answers: list[dict[str, Any]] = []
        self.done = False

    def step(self, listed: list[str], answer: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
        """The next call (name, args), or None when the script is over; a call of an unlisted tool fails the test."""
        try:
            if answer is None:
                name, args = next(self.script)
            else:
                self.answers.append(answer)
                error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
                action = answer.get("next_action") or error.get("next_action")
                # every next_action names a tool this model is listed now, in this era (the protocol's promise)
                assert action is None or action["op"] in listed, (action, listed)
                name, args = self.script.send(answer)
        except StopIteration:
            self.done = True
            return None
        assert name in listed, f"the model is not listed {name!r} at this step: {listed}"
        self.calls.append(name)
        return name, args


def check_era(model: ScriptedModel, dialect: str, mode: str) -> None:
    """The flow ended; in the namespaced dialect the described tool ran as the era allows (alias or tool_call)."""
    assert model.done, model.calls
    if dialect == "namespaced":
        expected = "util_math_eval" if mode == "legacy" else "tool_call"
        assert model.calls[-2:] == [expected, expected], model.calls


def answer_of(text: str) -> dict[str, Any]:
    """The reader's answer inside a framework's tool output (its JSON text, maybe wrapped as MCP content)."""
    start, end = text.find("{"), text.rfind("}")
    assert 0 <= start < end, text
    value: Any = json.loads(text[start : end + 1])  # an isError result may come with the framework's words around it
    if isinstance(value, dict) and value.get("type") == "text" and isinstance(value.get("text"), str):
        return answer_of(value["text"])
    assert isinstance(value, dict), text
    return value


# -- servers ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def urls(example_build: Path) -> Iterator[dict[str, str]]:
    """One HTTP server per dialect for the whole module (started on first use)."""
    with contextlib.ExitStack() as stack:
        started: dict[str, str] = {}

        class Lazy(dict[str, str]):
            def __missing__(self, dialect: str) -> str:
                started[dialect] = stack.enter_context(http_serving(example_build, "--dialect", dialect))
                self[dialect] = started[dialect]
                return started[dialect]

        yield Lazy()


def _stdio(example_build: Path, dialect: str) -> tuple[str, list[str]]:
    return TOOLCAT, ["serve", "--build", str(example_build), "--dialect", dialect]


CASES = [(d, transport) for d in ALL_DIALECTS for transport in ("http", "stdio")]


# -- fastmcp: a loop over its Client --------------------------------------------------------------
async def _fastmcp_loop(client: Any, model: ScriptedModel) -> None:
    answer: dict[str, Any] | None = None
    while True:
        listed = [tool.name for tool in await client.list_tools()]  # re-listed every step, as a host does
        step = model.step(listed, answer)
        if step is None:
            return
        name, args = step
        result = await client.call_tool(name, args, raise_on_error=False)
        answer = answer_of(result.content[0].text)
        if name == "tool_batch":  # the typed result (fastmcp builds it from the outputSchema) keeps each item's result
            assert [item.result["result"] for item in result.data.results] == [42, 5], result.data


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(("dialect", "transport"), CASES)
def test_fastmcp_client_loop(
    urls: dict[str, str], example_build: Path, dialect: str, transport: str, mode: str
) -> None:
    """fastmcp 4's Client, in both eras: the scripted model completes its dialect's flow calling only listed tools."""
    fastmcp = pytest.importorskip("fastmcp", reason="fastmcp is not installed")
    from fastmcp.client.transports import StdioTransport  # noqa: PLC0415 - fastmcp is optional

    target: Any = urls[dialect] if transport == "http" else StdioTransport(*_stdio(example_build, dialect))
    model = ScriptedModel(dialect)

    async def run() -> None:
        async with fastmcp.Client(target, mode=mode, timeout=TIMEOUT_S, init_timeout=TIMEOUT_S) as client:
            await _fastmcp_loop(client, model)

    anyio.run(run)
    check_era(model, dialect, mode)


# -- pydantic-ai: Agent.run with a FunctionModel ----------------------------------------------------
def _pydantic_model(model: ScriptedModel) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: PLC0415
    from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: PLC0415

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        answer = None
        returned = [p for p in getattr(last, "parts", []) if isinstance(p, ToolReturnPart)]
        retried = [p for p in getattr(last, "parts", []) if type(p).__name__ == "RetryPromptPart"]
        if returned:
            content = returned[-1].content
            answer = content if isinstance(content, dict) else answer_of(str(content))
        elif retried:  # an isError result comes back as a retry prompt carrying the tool's text
            answer = answer_of(str(retried[-1].content))
        step = model.step([tool.name for tool in info.function_tools], answer)
        if step is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(step[0], step[1])])

    return FunctionModel(respond)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(("dialect", "transport"), CASES)
def test_pydantic_ai_agent_loop(
    urls: dict[str, str], example_build: Path, dialect: str, transport: str, mode: str
) -> None:
    """pydantic-ai's Agent.run over its MCPToolset, in both eras: the scripted model completes its dialect's flow."""
    pytest.importorskip("pydantic_ai.mcp", reason="pydantic-ai-slim[mcp] is not installed")
    import fastmcp  # noqa: PLC0415 - pydantic-ai's MCP client is fastmcp's
    from fastmcp.client.transports import StdioTransport  # noqa: PLC0415
    from pydantic_ai import Agent  # noqa: PLC0415
    from pydantic_ai.mcp import MCPToolset  # noqa: PLC0415

    target: Any = urls[dialect] if transport == "http" else StdioTransport(*_stdio(example_build, dialect))
    if mode == "auto":  # the default: MCPToolset builds its own client (2026-07-28)
        toolset = MCPToolset(target, read_timeout=TIMEOUT_S, init_timeout=TIMEOUT_S)
    else:  # the handshake era needs a client built with mode="legacy"; its list changes then need cache_tools=False
        client = fastmcp.Client(target, mode="legacy", timeout=TIMEOUT_S, init_timeout=TIMEOUT_S)
        toolset = MCPToolset(client, cache_tools=False)
    model = ScriptedModel(dialect)
    agent = Agent(_pydantic_model(model), toolsets=[toolset], retries=3)

    async def run() -> None:
        async with agent:
            await agent.run("Compute 6*7 with the catalogue's calculator.")

    anyio.run(run)
    check_era(model, dialect, mode)


# -- openai-agents: Runner.run with a custom Model ----------------------------------------------------
def _openai_model(model: ScriptedModel) -> Any:
    from agents.items import ModelResponse  # noqa: PLC0415
    from agents.models.interface import Model  # noqa: PLC0415
    from agents.usage import Usage  # noqa: PLC0415
    from openai.types.responses import (  # noqa: PLC0415
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class Scripted(Model):
        async def get_response(self, *args: Any, **kw: Any) -> Any:
            """The script's next step; openai-agents passes (system_instructions, input, settings, tools, ...)."""
            given = kw.get("input", args[1] if len(args) > 1 else [])
            tools = kw.get("tools", args[3] if len(args) > 3 else [])
            items = given if isinstance(given, list) else []
            outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
            answer = _output_answer(outputs[-1]["output"]) if outputs else None
            step = model.step([tool.name for tool in tools], answer)
            n = len(model.calls)
            if step is None:
                text = ResponseOutputText(text="done", type="output_text", annotations=[])
                message = ResponseOutputMessage(
                    id="msg", content=[text], role="assistant", status="completed", type="message"
                )
                return ModelResponse(output=[message], usage=Usage(), response_id=None)
            call = ResponseFunctionToolCall(
                arguments=json.dumps(step[1]), call_id=f"call_{n}", name=step[0], type="function_call", id=f"fc_{n}"
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

        def stream_response(self, *_a: Any, **_kw: Any) -> Any:
            raise NotImplementedError

    return Scripted()


def _output_answer(output: Any) -> dict[str, Any]:
    """The reader's answer in an openai-agents function_call_output (a string, or input_text content items)."""
    if isinstance(output, list):
        output = output[0]
    if isinstance(output, dict):
        output = output.get("text", json.dumps(output))
    return answer_of(str(output))


@pytest.mark.parametrize(("dialect", "transport"), CASES)
def test_openai_agents_runner_loop(urls: dict[str, str], example_build: Path, dialect: str, transport: str) -> None:
    """openai-agents' Runner.run over its MCP server classes (2026-07-28): the scripted model completes its flow."""
    mcp_module = pytest.importorskip("agents.mcp", reason="openai-agents is not installed")
    from agents import Agent, RunConfig, Runner  # noqa: PLC0415

    model = ScriptedModel(dialect)

    async def run() -> None:
        if transport == "http":
            server: Any = mcp_module.MCPServerStreamableHttp(
                params={"url": urls[dialect], "timeout": TIMEOUT_S}, client_session_timeout_seconds=TIMEOUT_S
            )
        else:
            command, args = _stdio(example_build, dialect)
            server = mcp_module.MCPServerStdio(
                params={"command": command, "args": args}, client_session_timeout_seconds=TIMEOUT_S
            )
        async with server:
            agent = Agent(name="assistant", model=_openai_model(model), mcp_servers=[server])
            await Runner.run(agent, "Compute 6*7.", max_turns=12, run_config=RunConfig(tracing_disabled=True))

    anyio.run(run)
    check_era(model, dialect, "auto")

"""The native integrations through each framework's own loop, driven by a scripted model, in every dialect.

openai-agents' ``Runner.run`` with a custom ``Model``, pydantic-ai's ``Agent.run`` with a ``FunctionModel``, and
LangChain's ``bind_tools`` loop through a scripted chat model each run the same flow: find the tool, describe it,
call it with a required argument missing (a VALIDATION_ERROR the model reads), then with the fix (success). The
scripted model only ever calls a tool the framework offered it in that step, and sees each answer as the framework
hands it over: in the namespaced dialect the described tool must appear in the step after the describe, not before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolcat.format.dialects import DIALECT_NAMES
from toolcat.integrations import Toolbox
from toolcat.reader import Catalog

TOOL_ID = "util.time.convert"
ALIAS = "util_time_convert"
QUERY = "convert a time between time zones"
BAD = {"time": "2026-11-24T15:30:00", "from_timezone": "Europe/Berlin"}  # to_timezone is required
GOOD = {**BAD, "to_timezone": "America/New_York"}

#: Each dialect's flow: find, describe, the failing call, the fix. Direct has no discovery: the tool is offered.
FLOWS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "spec": [
        ("search_tool_by_category", {"query": QUERY, "category_path": ""}),
        ("expand_tool", {"tool_id": TOOL_ID}),
        ("call_tool", {"tool_id": TOOL_ID, "args": BAD}),
        ("call_tool", {"tool_id": TOOL_ID, "args": GOOD}),
    ],
    "gateway": [
        ("tool_help", {"query": QUERY}),
        ("tool_help", {"path": TOOL_ID}),
        ("tool_exec", {"op": TOOL_ID, "args": BAD}),
        ("tool_exec", {"op": TOOL_ID, "args": GOOD}),
    ],
    "namespaced": [
        ("find_tool", {"purpose": QUERY}),
        ("tool_describe", {"name": TOOL_ID}),
        (ALIAS, BAD),
        (ALIAS, GOOD),
    ],
    "direct": [(ALIAS, BAD), (ALIAS, GOOD)],
}


class Script:
    """A scripted model: the next tool call of its dialect's flow, given the tools offered and the last answer."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.offered: list[list[str]] = []
        self.answers: list[dict[str, Any]] = []

    def next_call(self, offered: list[str], answer: Any) -> tuple[str, dict[str, Any]] | None:
        """The call to make now (None: the flow is done); refuses to call a tool this step did not offer."""
        self.offered.append(sorted(offered))
        if answer is not None:
            self.answers.append(answer if isinstance(answer, dict) else json.loads(answer))
        flow = FLOWS[self.dialect]
        if len(self.answers) >= len(flow):
            return None
        name, args = flow[len(self.answers)]
        assert name in offered, (name, offered)  # a model can only call what this step lists
        return name, args

    def check(self) -> None:
        """Every answer is what the flow expects, and (namespaced) the described tool joined the next step."""
        flow = FLOWS[self.dialect]
        assert len(self.answers) == len(flow), self.answers
        *discovery, failed, fixed = self.answers
        if discovery:
            assert TOOL_ID in json.dumps(discovery[0]), discovery[0]  # found
            assert discovery[1]["ok"] is True
            assert "to_timezone" in json.dumps(discovery[1])  # described: the model sees the argument it needs
        assert failed["ok"] is False
        assert failed["error"]["code"] == "VALIDATION_ERROR"
        assert [e["field"] for e in failed["error"]["details"]["field_errors"]] == ["to_timezone"]
        assert fixed["ok"] is True, fixed
        assert fixed["result"]["timezone"] == "America/New_York"
        assert fixed["result"]["iso8601"].startswith("2026-11-24T09:30:00")
        if self.dialect == "namespaced":
            assert ALIAS not in self.offered[0]
            assert ALIAS not in self.offered[1]  # not yet: the describe is this step's call
            assert ALIAS in self.offered[2]  # the step after the describe offers it
        else:
            assert (ALIAS in self.offered[0]) is (self.dialect == "direct")


@pytest.fixture(scope="module")
def catalog(example_build: Path) -> Catalog:
    """The example catalogue (lexical search, as the suite builds it), its pinned tools asked for."""
    return Catalog.open(example_build, pinned=True)


# -- openai-agents ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_openai_agents_runner_runs_the_flow(catalog: Catalog, dialect: str) -> None:
    """Runner.run with a scripted Model finds, describes, fails, fixes and succeeds through the FunctionTools."""
    agents = pytest.importorskip("agents", reason="openai-agents is not installed (toolcat[openai-agents])")
    from agents.items import ModelResponse  # noqa: PLC0415
    from agents.models.interface import Model  # noqa: PLC0415
    from agents.usage import Usage  # noqa: PLC0415
    from openai.types.responses import (  # noqa: PLC0415
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from toolcat.integrations.openai_agents import function_tools  # noqa: PLC0415

    script = Script(dialect)

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            items = kwargs["input"] if "input" in kwargs else args[1]
            tools = kwargs["tools"] if "tools" in kwargs else args[3]
            outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
            call = script.next_call([t.name for t in tools], outputs[-1]["output"] if outputs else None)
            if call is None:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                done = ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
                return ModelResponse(output=[done], usage=Usage(), response_id=None)
            name, args = call
            item = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"c{len(outputs)}",
                name=name,
                arguments=json.dumps(args),
                status="completed",
            )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    toolbox = Toolbox(catalog, dialect)
    agent = agents.Agent(name="assistant", model=Scripted(), tools=function_tools(toolbox))
    config = agents.RunConfig(tracing_disabled=True)
    result = anyio.run(
        lambda: agents.Runner.run(agent, "What is 15:30 in Berlin in New York?", run_config=config, max_turns=10)
    )
    assert result.final_output == "done"
    script.check()


# -- pydantic-ai ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_pydantic_ai_agent_runs_the_flow(catalog: Catalog, dialect: str) -> None:
    """Agent.run with a FunctionModel finds, describes, fails, fixes and succeeds through the ToolcatToolset."""
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (toolcat[pydantic-ai])")
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: PLC0415
    from pydantic_ai.models.function import FunctionModel  # noqa: PLC0415

    from toolcat.integrations.pydantic_ai import ToolcatToolset  # noqa: PLC0415

    script = Script(dialect)

    def model(messages: list[Any], info: Any) -> Any:
        returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        call = script.next_call([t.name for t in info.function_tools], returned[-1].content if returned else None)
        if call is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(call[0], call[1], tool_call_id=f"c{len(script.answers)}")])

    agent = pydantic_ai.Agent(FunctionModel(model), toolsets=[ToolcatToolset(Toolbox(catalog, dialect))])
    result = anyio.run(lambda: agent.run("What is 15:30 in Berlin in New York?"))
    assert result.output == "done"
    script.check()


# -- LangChain -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_langchain_bind_tools_loop_runs_the_flow(catalog: Catalog, dialect: str) -> None:
    """A bind_tools loop over a scripted chat model rebinds langchain_tools(toolbox) each step and completes the flow."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed (toolcat[langchain])")
    from langchain_core.language_models import BaseChatModel  # noqa: PLC0415
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: PLC0415
    from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: PLC0415
    from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: PLC0415

    from toolcat.integrations.langchain import langchain_tools  # noqa: PLC0415

    script = Script(dialect)

    class ScriptedChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:  # noqa: ARG002
            offered = [t["function"]["name"] for t in kwargs.get("tools", [])]
            last = messages[-1].content if isinstance(messages[-1], ToolMessage) else None
            call = script.next_call(offered, last)
            if call is None:
                message = AIMessage(content="done")
            else:
                message = AIMessage(
                    content="", tool_calls=[{"name": call[0], "args": call[1], "id": f"c{len(script.answers)}"}]
                )
            return ChatResult(generations=[ChatGeneration(message=message)])

    model = ScriptedChat()
    toolbox = Toolbox(catalog, dialect)
    messages: list[Any] = [HumanMessage("What is 15:30 in Berlin in New York?")]
    for _ in range(10):
        tools = langchain_tools(toolbox)  # this step's tools: a described tool joins the next step
        reply = model.bind_tools(tools).invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        by_name = {tool.name: tool for tool in tools}
        messages.extend(by_name[call["name"]].invoke(call) for call in reply.tool_calls)
    assert messages[-1].content == "done"
    script.check()


# -- the toolbox itself ------------------------------------------------------------------------------


def test_namespaced_working_set_keeps_the_most_recently_used(catalog: Catalog) -> None:
    """At most working_set described tools are offered; the least recently used leaves first, and listeners hear it."""
    toolbox = Toolbox(catalog, "namespaced", working_set=2)
    changes: list[list[str]] = []
    toolbox.on_change(lambda: changes.append(toolbox.described()))
    for name in ("util.time.convert", "util.math.eval"):
        assert toolbox.call("tool_describe", {"name": name})["ok"] is True
    assert toolbox.call("util_time_convert", GOOD)["ok"] is True  # used: now the most recent
    assert toolbox.call("tool_describe", {"name": "util.time.now"})["ok"] is True
    assert toolbox.described() == ["util_time_convert", "util_time_now"]
    assert changes[-1] == ["util_time_convert", "util_time_now"]
    assert len(changes) == 3
    gone = toolbox.call("util_math_eval", {"expression": "1+1"})
    assert gone["error"]["code"] == "TOOL_NOT_FOUND"
    assert "util_time_now" in gone["error"]["details"]["tools"]


def test_bad_calls_answer_envelopes_never_raise(catalog: Catalog) -> None:
    """Unknown arguments, a missing required one, non-object arguments and unknown tools are envelopes."""
    toolbox = Toolbox(catalog, "gateway")
    unknown = toolbox.call("tool_help", {"path": "root", "nope": 1})
    assert unknown["error"]["code"] == "VALIDATION_ERROR"
    assert unknown["error"]["next_action"] == {"op": "tool_help", "args": {"path": "root"}}
    missing = toolbox.call("tool_exec", {"args": {}})
    assert [e["field"] for e in missing["error"]["details"]["field_errors"]] == ["op"]
    assert toolbox.call("tool_help", ["root"])["error"]["code"] == "BAD_REQUEST"
    assert toolbox.call("util_time_convert", GOOD)["error"]["code"] == "TOOL_NOT_FOUND"  # not offered in gateway
    assert toolbox.call("file_read", {"path": "x"})["ok"] is False  # pinned: offered, runs, refuses (no sandbox)
    with pytest.raises(ValueError, match="unknown dialect"):
        Toolbox(catalog, "nope")


def test_every_dialect_offers_its_discovery_tools_and_the_pinned_one(catalog: Catalog) -> None:
    """Each dialect's first step lists its discovery tools and file_read (pinned); direct lists every tool instead."""
    pinned = {spec["alias"] for spec in catalog.always_loaded()}
    assert pinned == {"file_read"}
    for dialect in DIALECT_NAMES:
        tools = Toolbox(catalog, dialect).tools()
        names = [t.name for t in tools]
        assert len(names) == len(set(names)), dialect
        assert pinned <= set(names), dialect
        assert all(t.parameters.get("type") == "object" for t in tools), dialect
    direct = Toolbox(catalog, "direct").tools()
    assert len(direct) == catalog.direct_tools()["count"]
    unasked = Catalog.open(catalog.source.location)  # 001: without pinned=True the gateway offers its three tools
    assert [t.name for t in Toolbox(unasked, "gateway").tools()] == ["tool_help", "tool_exec", "tool_batch"]


def test_integrations_import_no_mcp_and_no_compiler(example_build: Path) -> None:
    """The toolbox and the adapters run with the reader alone: no toolcat.mcp/build, no YAML; mcp only via openai-agents."""
    code = (
        "import sys\n"
        "from toolcat.integrations import Toolbox\n"
        "from toolcat.reader import Catalog\n"
        f"box = Toolbox(Catalog.open({str(example_build)!r}), 'namespaced')\n"
        "assert box.call('find_tool', {'purpose': 'convert a time'})['ok']\n"
        "import toolcat.integrations.langchain, toolcat.integrations.pydantic_ai\n"
        "assert 'mcp' not in sys.modules\n"
        "import toolcat.integrations.openai_agents\n"  # openai-agents imports mcp itself (its own dependency)
        "own = sorted(m for m in sys.modules if m.startswith('toolcat.'))\n"
        "bad = [m for m in own if m.split('.')[1] not in ('format', 'reader', 'integrations')]\n"
        "assert not bad, bad\n"
        "assert 'yaml' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def test_toolbox_imports_only_the_stdlib_and_the_reader() -> None:
    """toolbox.py and the package's __init__ import the standard library and toolcat's format/reader, nothing else."""
    import ast  # noqa: PLC0415

    from support import REPO  # noqa: PLC0415

    for name in ("__init__.py", "toolbox.py"):
        tree = ast.parse((REPO / "compiler" / "integrations" / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert (node.module or "").split(".")[0] in {"", "toolbox", "format", "reader"}, (name, node.module)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert all(m.split(".")[0] in {*sys.stdlib_module_names, "__future__"} for m in modules), (
                    name,
                    modules,
                )


def test_a_per_domain_discover_offers_the_tool_next_step(tmp_path: Path) -> None:
    """discover_util_tools(tool=...) (seed 002, a declared domain) makes the tool a tool of the next step, as describe does."""
    import shutil  # noqa: PLC0415

    from support import EXAMPLE_SRC  # noqa: PLC0415

    from toolcat.build import build  # noqa: PLC0415

    src = tmp_path / "catalog_src"
    shutil.copytree(EXAMPLE_SRC, src)
    (src / "toolcat.yaml").write_text("search: {embedder: none}\ndiscovery:\n  per_domain: [util]\n")
    build(src, tmp_path / "build")
    toolbox = Toolbox(Catalog.open(tmp_path / "build"), "namespaced")
    names = [t.name for t in toolbox.tools()]
    assert "discover_util_tools" in names
    assert ALIAS not in names
    listed = toolbox.call("discover_util_tools", {})
    assert listed["ok"] is True
    assert ALIAS not in [t.name for t in toolbox.tools()]  # a listing describes nothing
    assert toolbox.call("discover_util_tools", {"tool": ALIAS})["ok"] is True
    offered = {t.name: t for t in toolbox.tools()}
    assert offered[ALIAS].parameters["required"] == ["time", "to_timezone"]
    assert toolbox.call(ALIAS, GOOD)["ok"] is True


def test_langchain_tools_answer_the_same_when_awaited(catalog: Catalog) -> None:
    """A LangChain tool's ainvoke (its coroutine, run in a thread) answers what invoke does."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed (toolcat[langchain])")
    from toolcat.integrations.langchain import langchain_tools  # noqa: PLC0415

    toolbox = Toolbox(catalog, "gateway")
    tool = {t.name: t for t in langchain_tools(toolbox)}["tool_exec"]
    call = {"name": "tool_exec", "args": {"op": TOOL_ID, "args": GOOD}, "id": "c1", "type": "tool_call"}
    awaited = anyio.run(tool.ainvoke, call)
    answered = tool.invoke(call)
    assert json.loads(awaited.content)["result"] == json.loads(answered.content)["result"]
    assert json.loads(awaited.content)["ok"] is True

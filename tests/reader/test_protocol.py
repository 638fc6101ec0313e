"""The agent protocol of each dialect, over a real MCP client: every next_action names a listed tool with valid args.

One ``toolcat serve`` process per dialect (module-scoped) serves a small catalogue built to produce every
error code; each answer's ``next_action`` is followed (called with its args) and each hint's tool names are
checked against ``tools/list``. The namespaced dialect's described tools become real MCP tools.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from support import REPO, write_tree

from toolcat.build import build
from toolcat.format.dialects import dialect_tools
from toolcat.reader import Catalog
from toolcat.reader.dialects import DIALECTS, PROTOCOL
from toolcat.reader.dialects.protocol import hint_tools, render_action

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
MATH_EVAL = "toolcat.examples.util:util_math_eval"
HANDLERS = """
from toolcat.format.envelope import ReaderError

def update(args):
    return {"updated": args["task_id"], "fields": sorted(args)}

def fail(args):
    mode = args["mode"]
    if mode == "perm":
        raise PermissionError("outside the sandbox")
    if mode == "missing":
        raise LookupError("no task T-9999")
    if mode == "value":
        raise ValueError("cannot honour that")
    if mode == "exists":
        raise FileExistsError("already there")
    if mode == "slow":
        raise TimeoutError("the service took too long")
    if mode == "upstream":
        raise ReaderError("UPSTREAM_ERROR", "the upstream server refused")
    raise RuntimeError("kaboom")

def ping(args):
    return {"pong": args.get("note", "")}
"""
OBJ: dict[str, Any] = {"type": "object"}


def _source() -> dict[str, Any]:
    task_schema = {
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "pattern": "^T-[0-9]{4,}$", "examples": ["T-1234", "T-5678"]},
            "status": {"type": "string", "enum": ["todo", "in_progress", "done"], "description": "New status."},
            "due_date": {"type": ["string", "null"], "format": "date", "description": "Due date or null."},
        },
        "required": ["task_id"],
        "additionalProperties": False,
    }
    return {
        "_node.yaml": {"title": "Protocol", "summary": "A catalogue that produces every answer and error."},
        "coding/_node.yaml": {"title": "Coding", "summary": "Work on source code."},
        "coding/refactoring/_node.yaml": {"title": "Refactoring", "summary": "Behaviour-preserving code changes."},
        "coding/refactoring/tools.yaml": {
            "tools": [
                {
                    "id": "refactor.rename_symbol",
                    "summary": "Rename a symbol across a project.",
                    "kind": "read",
                    "args_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}},
                }
            ]
        },
        "work/_node.yaml": {"title": "Work tracking", "summary": "Tasks and their status."},
        "work/tools.yaml": {
            "tools": [
                {
                    "id": "proto.task.update",
                    "summary": "Change the status or due date of a task.",
                    "kind": "read",
                    "handler": "proto_handlers:update",
                    "args_schema": task_schema,
                    "examples": [
                        {"description": "finish", "args": {"task_id": "T-1234", "status": "done"}},
                        {"description": "clear the date", "args": {"task_id": "T-1234", "due_date": None}},
                    ],
                },
                {
                    "id": "proto.fail",
                    "summary": "Fail in a chosen way, for the error tests.",
                    "kind": "read",
                    "handler": "proto_handlers:fail",
                    "args_schema": {"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"]},
                },
                {
                    "id": "proto.host_only",
                    "summary": "A tool the host runs itself.",
                    "kind": "read",
                    "args_schema": OBJ,
                },
                {
                    "id": "proto.uninstalled",
                    "summary": "A tool whose handler module is not installed.",
                    "kind": "read",
                    "handler": "no_such_module_xyz:run",
                    "args_schema": OBJ,
                },
                {
                    "id": "proto.math.eval",
                    "summary": "Evaluate an arithmetic expression exactly.",
                    "kind": "read",
                    "handler": MATH_EVAL,
                    "args_schema": {
                        "type": "object",
                        "properties": {"expression": {"type": "string", "minLength": 1}},
                        "required": ["expression"],
                    },
                    "examples": [{"description": "product", "args": {"expression": "6*7"}}],
                },
                {
                    "id": "proto.core.ping",
                    "summary": "Answer pong; always loaded beside the discovery tools.",
                    "kind": "read",
                    "handler": "proto_handlers:ping",
                    "args_schema": {"type": "object", "properties": {"note": {"type": "string"}}},
                },
            ]
        },
        "vault/_node.yaml": {"title": "Vault", "summary": "A tool whose spec file is tampered with."},
        "vault/tools.yaml": {
            "tools": [{"id": "zz.vault.open", "summary": "Open the vault.", "kind": "read", "args_schema": OBJ}]
        },
        "skills/_node.yaml": {"title": "Skills", "summary": "Agent skills."},
        "skills/demo-skill/SKILL.md": "---\nname: demo-skill\ndescription: Demonstrates skill resources. "
        "Use when testing.\n---\n# Demo\n\nRead references/guide.md when asked.\n",
        "skills/demo-skill/references/guide.md": "# Guide\n\nThe level 3 text.\n",
    }


def _ref(root: Path, rel: str) -> dict[str, Any]:
    data = (root / rel).read_bytes()
    return {"bytes": len(data), "path": rel, "sha256": hashlib.sha256(data).hexdigest()}


@pytest.fixture(scope="module")
def proto_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The catalogue built once: (build folder, handler module folder); zz.vault.open's spec is tampered with."""
    root = tmp_path_factory.mktemp("protocol")
    (root / "mods").mkdir()
    (root / "mods" / "proto_handlers.py").write_text(HANDLERS)
    tree = _source()
    flagged = json.loads(json.dumps(tree))
    flagged["work/tools.yaml"]["tools"][-1]["always_load"] = True
    out = root / "build"
    build(write_tree(root / "src", flagged), out)
    lookup_ref = json.loads((out / json.loads((out / "catalog.json").read_text())["manifest"]["path"]).read_text())
    entries = json.loads((out / lookup_ref["lookup"]["refs"][0]["path"]).read_text())["entries"]
    spec = out / entries["zz.vault.open"]["spec"]["path"]
    spec.write_text(spec.read_text().replace("Open the vault.", "Open the vault!"))
    return out, root / "mods"


@contextlib.asynccontextmanager
async def session_for(build_dir: Path, mods: Path, dialect: str, notes: list[str]) -> AsyncIterator[ClientSession]:
    """A client on ``toolcat serve --dialect DIALECT --pinned`` over stdio; server notifications go to ``notes``."""
    params = StdioServerParameters(
        command=TOOLCAT,
        args=["serve", "--build", str(build_dir), "--dialect", dialect, "--poll", "0", "--pinned"],
        cwd=str(REPO),
        env={"PYTHONPATH": str(mods)},
    )

    async def on_message(message: Any) -> None:
        notes.append(str(getattr(getattr(message, "root", message), "method", "")))

    with open(os.devnull, "w") as devnull:  # noqa: PTH123, ASYNC230 - the server's stderr is not under test
        async with (
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            await session.initialize()
            yield session


class Walker:
    """Calls tools, and follows every answer's next_action and hints against what tools/list shows."""

    def __init__(self, session: ClientSession, dialect: str) -> None:
        self.session = session
        self.dialect = dialect
        self.codes: set[str] = set()
        self.followed: list[tuple[str, str, str]] = []
        self.answers: list[dict[str, Any]] = []

    async def listed(self) -> dict[str, types.Tool]:
        """What tools/list shows this client now, by name."""
        return {t.name: t for t in (await self.session.list_tools()).tools}

    async def raw(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """The structured answer of one call (isError exactly when the envelope says ok: false)."""
        result = await self.session.call_tool(name, args)
        data = result.structured_content
        assert isinstance(data, dict), (name, args, result)
        assert result.is_error is (data.get("ok") is False), (name, data)
        return data

    async def call(self, name: str, args: dict[str, Any], *, follow: bool = True) -> dict[str, Any]:
        """Call a tool; record its error code; check its hints; follow its next_action (one level)."""
        data = await self.raw(name, args)
        self.answers.append(data)
        holder = data["error"] if isinstance(data.get("error"), dict) else data
        for item in [data, *[r for r in data.get("results", []) if isinstance(r, dict)]]:
            if isinstance(item.get("error"), dict):
                self.codes.add(item["error"]["code"])
        tools = await self.listed()
        for hint in [*holder.get("hints", []), *data.get("hints", [])]:
            assert hint_tools(hint) <= set(tools), (self.dialect, name, hint)
        if follow:
            for item in [data, *[r for r in data.get("results", []) if isinstance(r, dict) and "status" in r]]:
                inner = item["error"] if isinstance(item.get("error"), dict) else item
                if inner.get("next_action"):
                    await self.follow(name, inner["next_action"], tools)
        return data

    async def follow(self, source: str, action: dict[str, Any], tools: dict[str, types.Tool]) -> None:
        """Call a next_action: a listed tool, args valid for its inputSchema, no protocol error, no BAD_REQUEST."""
        op, args = action["op"], action["args"]
        assert op in tools, f"{self.dialect}: {source} points to {op!r}, not a listed tool ({sorted(tools)})"
        errors = [e.message for e in Draft202012Validator(tools[op].input_schema).iter_errors(args)]
        assert not errors, (self.dialect, source, action, errors)
        try:
            data = await self.raw(op, args)
        except MCPError as exc:  # "Unknown tool" and friends
            pytest.fail(f"{self.dialect}: following {action} from {source} is a protocol error: {exc}")
        code = data["error"]["code"] if isinstance(data.get("error"), dict) else "ok"
        assert code != "BAD_REQUEST", (self.dialect, source, action, data)
        self.followed.append((source, op, code))


EXEC_ERRORS = {  # proto.fail's mode → the code it answers
    "perm": "NOT_AUTHORIZED",
    "missing": "NOT_FOUND",
    "value": "VALIDATION_ERROR",
    "exists": "CONFLICT",
    "slow": "UNAVAILABLE",
    "upstream": "UPSTREAM_ERROR",
    "boom": "INTERNAL",
}
ALL_CODES = {
    "UNKNOWN_PATH",
    "TOOL_NOT_FOUND",
    "NOT_AUTHORIZED",
    "VALIDATION_ERROR",
    "CONFLICT",
    "INTERNAL",
    "INTEGRITY",
    "NOT_EXECUTABLE",
    "UNAVAILABLE",
    "BAD_REQUEST",
    "NOT_FOUND",
    "UPSTREAM_ERROR",
}


async def _walk_spec(w: Walker) -> None:
    root = await w.call("list", {"path": ""})
    assert {n["name"] for n in root["nodes"]} >= {"coding", "work"}
    verbatim = await w.call("list", {"path": ["Coding", "Refactoring"]})  # 000's payload, verbatim
    assert verbatim["path"] == ["coding", "refactoring"]
    assert (await w.call("list", {"path": "WORK"}))["path"] == ["work"]
    await w.call("list", {"path": "work", "query": "status of a task"})
    await w.call("list", {"path": "", "tags": ["nothing-has-this"]})
    await w.call("list", {"path": "", "capability": "code-analysis"})
    unknown = await w.call("list", {"path": "wrk"})
    assert unknown["error"]["next_action"] == {"op": "list", "args": {"path": "work"}}  # the best suggestion
    await w.call("list", {"path": "work", "cursor": "zzz"})  # BAD_REQUEST
    await w.call("search_nodes", {"query": "task status"})
    empty = await w.call("search_nodes", {"query": "qqqzzzxxy"})
    assert empty["results"] == []
    assert empty["hints"]
    await w.call("search_tool_by_category", {"query": "change task status", "category_path": ["Work"]})
    no_match = await w.call("search_tool_by_category", {"query": "arithmetic expression", "category_path": "coding"})
    assert no_match["error"]["code"] == "NO_MATCH_IN_CATEGORY"
    await w.call("search_tool_by_category", {"query": "rename", "category_path": "nowhere"})
    await w.call("expand_tool", {"tool_id": "proto.task.update"})
    await w.call("expand_tool", {"tool_id": "proto.task.updte"})
    await w.call("expand_tool", {"tool_id": "zz.vault.open"})  # INTEGRITY
    await w.call("expand_tool", {"tool_id": "demo-skill"})
    await w.call("call_tool", {"tool_id": "proto.task.update", "args": {"task_id": "T-1234", "status": "finished"}})
    await w.call("call_tool", {"tool_id": "proto.task.update", "args": {"task_id": "T-1234", "status": "done"}})
    await w.call("call_tool", {"tool_id": "proto.host_only", "args": {}})
    await w.call("call_tool", {"tool_id": "task.demo_skill", "args": {"resource": "references/guid.md"}})
    for mode in EXEC_ERRORS:
        await w.call("call_tool", {"tool_id": "proto.fail", "args": {"mode": mode}})
    await w.call("list", {"path": 3})  # breaks the input schema: a VALIDATION_ERROR envelope


async def _walk_gateway(w: Walker) -> None:
    root = await w.call("tool_help", {"path": "root"})
    assert "find_tool" not in json.dumps(root)
    assert all(g.get("summary") for g in root["groups"]), root["groups"]
    await w.call("tool_help", {"path": "proto"})
    await w.call("tool_help", {"path": "proto.task"})
    await w.call("tool_help", {"path": "proto.taks"})
    await w.call("tool_help", {"path": "nothing.here"})
    await w.call("tool_help", {"query": "change the status of a task"})
    await w.call("tool_help", {"query": "qqqzzzxxy"})
    # 001's flow, verbatim: a bad enum value → VALIDATION_ERROR listing the enum → help shows it
    bad = await w.call("tool_exec", {"op": "proto.task.update", "args": {"task_id": "T-1234", "status": "finished"}})
    status = [e for e in bad["error"]["details"]["field_errors"] if e["field"] == "status"]
    assert len(status) == 1
    assert '"done"' in status[0]["expected"]
    assert '"done"' not in status[0]["message"]  # said once
    helped = await w.call("tool_help", {"path": bad["error"]["help_path"]})
    args = {a["name"]: a for a in helped["args"]}
    assert args["status"]["rules"] == 'one of: "todo", "in_progress", "done"'
    assert args["due_date"]["type"] == "string | null"
    assert args["task_id"]["examples"] == ['"T-1234"', '"T-5678"']
    assert len(helped["examples"]) == 2  # every example
    await w.call("tool_exec", {"op": "proto.nope", "args": {}})
    await w.call("tool_exec", {"op": " ", "args": {}})  # BAD_REQUEST
    await w.call("tool_exec", {"op": "proto.host_only", "args": {}})
    await w.call("tool_exec", {"op": "zz.vault.open", "args": {}})
    for mode in EXEC_ERRORS:
        await w.call("tool_exec", {"op": "proto.fail", "args": {"mode": mode}})
    await w.call("tool_exec", {"op": "proto.math.eval", "args": {"expression": "1+1"}, "idempotency_key": "k1"})
    await w.call("tool_exec", {"op": "proto.math.eval", "args": {"expression": "2+2"}, "idempotency_key": "k1"})
    payload = {  # 001's tool_batch payload, verbatim in shape
        "ops": [
            {"type": "help", "path": "proto.task.update", "format": "short"},
            {"type": "exec", "op": "proto.task.update", "args": {"task_id": "..."}},
            {"type": "exec", "op": "proto.math.eval", "args": {"expression": "1"}},
        ],
        "mode": "sequential",
    }
    batch = await w.call("tool_batch", payload)
    assert [r["status"] for r in batch["results"]] == ["ok", "failed", "not_run"]
    parallel = await w.call("tool_batch", {**payload, "mode": "parallel"})
    assert [r["status"] for r in parallel["results"]] == ["ok", "failed", "ok"]
    await w.call("tool_batch", {"ops": [{"args": {}}]})  # an exec item without op: BAD_REQUEST for that item


async def _walk_namespaced(w: Walker, notes: list[str]) -> None:
    await w.call("tool_list", {})
    await w.call("tool_list", {"namespace": "proto"})
    await w.call("tool_list", {"namespace": "prot"})
    await w.call("tool_list", {"tags": ["nothing-has-this"]})
    await w.call("find_tool", {"purpose": "change the status of a task"})
    await w.call("tool_describe", {"name": "proto.task.updte"})
    await w.call("tool_describe", {"name": " "})  # BAD_REQUEST
    await w.call("tool_describe", {"name": "zz.vault.open"})
    assert "proto_fail" not in await w.listed()
    described = await w.call("tool_describe", {"name": "proto.fail"}, follow=False)
    assert described["alias"] == "proto_fail"
    with anyio.fail_after(10):
        while "notifications/tools/list_changed" not in notes:  # noqa: ASYNC110 - the callback fills the list
            await anyio.sleep(0.02)
    assert "proto_fail" in await w.listed()
    for mode in EXEC_ERRORS:
        await w.call("proto_fail", {"mode": mode})
    await w.call("tool_describe", {"name": "proto.task.update"})
    await w.call("proto_task_update", {"task_id": "T-1234", "status": "finished"})
    await w.call("tool_describe", {"name": "proto.host_only"})
    await w.call("tool_describe", {"name": "proto.uninstalled"}, follow=False)
    await w.call("proto_uninstalled", {})  # NOT_EXECUTABLE
    await w.call("tool_describe", {"name": "demo-skill"})
    await w.call("task_demo_skill", {"resource": "references/guid.md"})
    early = await w.call("proto_math_eval", {"expression": "1"}, follow=False)  # an existing alias runs undescribed
    assert early["ok"] is True, early  # (issue 24: stateless clients never see described tools listed)
    await w.call("tool_describe", {"name": "proto.math.eval"})  # 004's describe -> call, followed


def _run(build_dir: Path, mods: Path, dialect: str) -> tuple[Walker, list[str]]:
    notes: list[str] = []

    async def main() -> Walker:
        async with session_for(build_dir, mods, dialect, notes) as session:
            walker = Walker(session, dialect)
            listed = await walker.listed()
            assert "proto_core_ping" in listed  # always loaded, in every dialect
            pong = await walker.call("proto_core_ping", {"note": "hi"})
            assert pong["result"] == {"pong": "hi"}
            if dialect == "spec":
                await _walk_spec(walker)
            elif dialect == "gateway":
                await _walk_gateway(walker)
            else:
                await _walk_namespaced(walker, notes)
            return walker

    return anyio.run(main), notes


@pytest.mark.parametrize("dialect", ["spec", "gateway", "namespaced"])
def test_every_next_action_is_a_listed_tool_that_accepts_its_args(proto_build: tuple[Path, Path], dialect: str) -> None:
    """In each dialect, every error code and success answer's next_action is callable as given, and hints name its tools."""
    walker, _ = _run(*proto_build, dialect)
    expected = ALL_CODES | ({"NO_MATCH_IN_CATEGORY"} if dialect == "spec" else set())
    assert walker.codes >= expected, sorted(expected - walker.codes)
    assert len(walker.followed) >= 12
    for answer in walker.answers:
        if answer.get("ok") is True:  # lean: no null or empty fields, no alias lists or token counts
            assert not {"aliases", "tokens"} & set(answer)
            assert all(v is not None for k, v in answer.items() if k != "next_cursor")


def test_protocol_table_covers_every_abstract_op_in_every_dialect(proto_build: tuple[Path, Path]) -> None:
    """Each abstract op renders to one of the dialect's tools (or, namespaced, a described tool's alias)."""
    catalog = Catalog.open(proto_build[0])
    tools = {
        "spec": {"list", "search_nodes", "search_tool_by_category", "expand_tool", "call_tool"},
        "gateway": {"tool_help", "tool_exec", "tool_batch"},
        "namespaced": {"tool_list", "tool_describe", "find_tool", "proto_task_update"},
    }
    actions = [
        {"op": "list", "args": {"path": ["Work"]}},
        {"op": "list", "args": {"path": "coding/refactoring"}},
        {"op": "search", "args": {"query": "status"}},
        {"op": "search_nodes", "args": {"query": "status"}},
        {"op": "search_in", "args": {"query": "status", "path": ["work"]}},
        {"op": "describe", "args": {"tool_id": "proto.task.update"}},
        {"op": "call", "args": {"tool_id": "proto.task.update", "args": {"task_id": "T-1234"}}},
        {"op": "help", "args": {"path": "proto.task"}},
        {"op": "help", "args": {"path": "root"}},
        {"op": "read_resource", "args": {"tool_id": "demo-skill", "path": "references/guide.md"}},
        {"op": "search_tool_by_category", "args": {"query": "x", "category_path": ["work"]}},  # a legacy spelling
    ]
    for dialect, names in tools.items():
        assert set(PROTOCOL[dialect]) == {
            "list",
            "search",
            "search_nodes",
            "search_in",
            "describe",
            "call",
            "help",
            "read_resource",
        }
        for action in actions:
            rendered = render_action(action, DIALECTS[dialect], catalog.store)
            assert rendered is not None
            assert rendered["op"] in names | {"task_demo_skill"}, (dialect, action, rendered)
            assert all(not isinstance(v, list) for v in rendered["args"].values()), rendered


def test_python_api_runs_the_seed_payloads_verbatim(example_build: Path) -> None:
    """000's list path list, 001's enum flow and typed batch, and 004's tool.list/describe/find work as written."""
    cat = Catalog.open(example_build)
    assert cat.list(path=["Coding", "Refactoring"])["path"] == ["coding", "refactoring"]
    found = cat.search_tool_by_category(query="rename symbol", category_path=["Coding", "Refactoring"])
    assert found["results"][0]["tool_id"] == "refactor.rename_symbol"
    bad = cat.tool_exec(op="onto.task.update", args={"task_id": "T-1234", "status": "finished"})
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    assert bad["error"]["next_action"] == {"op": "tool_help", "args": {"path": "onto.task.update"}}
    helped = cat.tool_help(bad["error"]["help_path"])
    assert '"done"' in next(a for a in helped["args"] if a["name"] == "status")["rules"]
    batch = cat.tool_batch(
        ops=[
            {"type": "help", "path": "onto.task.update", "format": "short"},
            {"type": "exec", "op": "onto.task.list", "args": {"project_id": "..."}},
        ],
        mode="sequential",
    )
    assert batch["results"][0]["type"] == "help"
    assert batch["results"][0]["status"] == "ok"
    assert cat.tool_list(namespace="file")["count"] > 0
    described = cat.tool_describe(name="file.read")
    assert described["tool_id"] == "file.read"
    assert not {"aliases", "tokens", "result_schema"} & {k for k, v in described.items() if v in (None, [], {})}
    assert cat.find_tool(purpose="read a file")["matches"][0]["name"] == "file.read"


def test_working_set_is_bounded_and_least_recently_used_leaves_first() -> None:
    """A client's described tools are at most WORKING_SET_SIZE; a call keeps a tool, the oldest unused one leaves."""
    from toolcat.mcp.discovery import WORKING_SET_SIZE, WorkingSet, catalog_tool  # noqa: PLC0415

    assert WORKING_SET_SIZE == 32
    working = WorkingSet(size=2)
    made = [catalog_tool({"tool_id": f"a.t{i}", "alias": f"a_t{i}", "summary": "s"}) for i in range(3)]
    tools = [t for t in made if t is not None]
    assert len(tools) == 3
    assert working.add(tools[0])
    assert working.add(tools[1])
    assert not working.add(tools[1])  # already there: no list change
    assert working.get("a_t0") is not None  # used: now the most recent
    assert working.add(tools[2])
    assert [t.name for t in working.tools()] == ["a_t0", "a_t2"]


def test_always_loaded_tools_in_the_python_api(proto_build: tuple[Path, Path]) -> None:
    """Catalog.always_loaded() gives the marked tools as lean specs: alias and args schema, no token counts."""
    (ping,) = Catalog.open(proto_build[0]).always_loaded()
    assert ping["tool_id"] == "proto.core.ping"
    assert ping["alias"] == "proto_core_ping"
    assert ping["args_schema"]["properties"] == {"note": {"type": "string"}}
    assert "tokens" not in ping


#: 004's task calls as the design writes them (``task.code_review(target="src/")`` …), with the result they must give.
SEED_004_TASKS = [
    ("task.code_review", {"target": "src/"}),
    ("task.explore", {"query": "find API routes"}),
    ("task.plan", {"feature": "OAuth implementation"}),
]


def _seed_call(cat: Catalog, dialect: str, tool_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool_id`` the way ``dialect`` calls an operation: by id (spec, gateway) or by its alias (namespaced, direct)."""
    if dialect == "spec":
        return cat.call_tool(tool_id, args)
    if dialect == "gateway":
        return cat.tool_exec(op=tool_id, args=args)
    return cat.tool_exec(tool_id.replace(".", "_"), args, dialect=dialect)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_seed_payloads_run_verbatim_in_every_registered_dialect(example_build: Path, dialect: str) -> None:
    """004's task calls, 001's failing-validation loop and a plain call answer as the designs write them, in each dialect.

    The direct dialect (001's legacy mode) has no discovery tools, so its way forward is the corrected call itself.
    """
    cat = Catalog.open(example_build)
    for tool_id, args in SEED_004_TASKS:
        answer = _seed_call(cat, dialect, tool_id, args)
        assert answer["ok"] is True, (dialect, tool_id, answer)
        result = answer["result"]
        assert args.items() <= result["arguments"].items(), result  # the task's arguments as sent (defaults beside)
        assert result["instructions"].strip()  # with the instructions that carry it out
    extra = _seed_call(cat, dialect, "task.explore", {"query": "find API routes", "repo": "acme/api"})
    assert extra["ok"] is True, extra
    assert extra["result"]["context"] == {"repo": "acme/api"}, extra  # unknown arguments reach the task as context
    bad = _seed_call(cat, dialect, "onto.task.update", {"task_id": "T-1234", "status": "finished"})
    assert bad["ok"] is False, bad
    assert bad["error"]["code"] == "VALIDATION_ERROR", bad
    assert [e["field"] for e in bad["error"]["details"]["field_errors"]] == ["status"], bad
    assert '"done"' in bad["error"]["details"]["field_errors"][0]["expected"]  # 001: the enum, to retry with
    action = bad["error"].get("next_action")
    if dialect == "direct":
        assert action is None  # nothing to discover: the hint names the tool's own schema
    else:
        assert action is not None, bad
        assert action["op"] in {tool.name for tool in dialect_tools(dialect)}, action
    fixed = _seed_call(cat, dialect, "util.math.eval", {"expression": "6*7"})
    assert fixed["ok"] is True, fixed
    assert fixed["result"]["result"] == 42, fixed

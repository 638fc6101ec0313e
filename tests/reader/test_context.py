"""001's host context: ``Catalog.open(context=...)`` fills declared context arguments, in every dialect.

The host's value wins over the model's, is named (never shown) in ``meta.context_filled``, is left out of
the schema the model reads, and reaches only the tools that declare it; exec audit lines carry the tool's
entity, action and context names, never a context value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat.build import build
from toolcat.cli import main
from toolcat.format.envelope import ReaderError
from toolcat.mcp.server import ServeOptions, open_catalog
from toolcat.reader import Catalog
from toolcat.reader.audit import read_audit, tool_labels

#: An upstream MCP handler never started: the tests give the catalogue its own ``mcp`` function.
UP = {"type": "mcp", "command": ["python", "/nonexistent/up.py"], "tool": "x"}
HOST = {"project_id": "P-42", "user_token": "tok-secret-123"}
PROJECT_TASK = {
    "type": "object",
    "properties": {"project_id": {"type": "string", "pattern": "^P-"}, "task_id": {"type": "string"}},
    "required": ["project_id", "task_id"],
    "additionalProperties": False,
}


def echo(ctx: Any) -> dict[str, Any]:
    """The handler of every test tool: the arguments it received."""
    return dict(ctx.args)


@pytest.fixture(scope="module")
def context_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalogue whose onto.task.update declares project_id as context, beside tools that declare none."""
    root = tmp_path_factory.mktemp("context")
    tools = [
        {
            "id": "onto.task.update",
            "summary": "Update a task of the current project.",
            "kind": "write",
            "contexts": ["project_id"],
            "args_schema": PROJECT_TASK,
            "examples": [{"description": "close T-1", "args": {"project_id": "P-1", "task_id": "T-1"}}],
            "handler": UP,
        },
        {
            "id": "onto.task.list",
            "summary": "List the tasks of a project.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"project_id": {"type": "string"}}},
            "handler": UP,
        },
        {
            "id": "util.echo",
            "summary": "Echo whatever it is given.",
            "kind": "read",
            "entity": "debug.echo",
            "action": "run",
            "args_schema": {"type": "object", "additionalProperties": True},
            "handler": UP,
        },
    ]
    tree = {
        "_node.yaml": {"title": "Context", "summary": "Host context tests."},
        "onto/_node.yaml": {"title": "Ontology", "summary": "Tasks."},
        "onto/tools.yaml": {"tools": tools[:2]},
        "util/_node.yaml": {"title": "Utilities", "summary": "Helpers."},
        "util/tools.yaml": {"tools": tools[2:]},
    }
    out = root / "build"
    build(write_tree(root / "src", tree), out, embedder="none")
    return out


def opened(build_dir: Path, **options: Any) -> Catalog:
    """The context catalogue with the echo handler and the host's context."""
    return Catalog.open(build_dir, handlers={"mcp": echo}, context=HOST, **options)


#: One call of onto.task.update per dialect: (dialect name, how the model calls it).
CALLS = {
    "gateway": lambda c, args: c.tool_exec("onto.task.update", args),
    "spec": lambda c, args: c.call_tool("onto.task.update", args),
    "namespaced": lambda c, args: c.tool_exec("onto_task_update", args, dialect="namespaced"),
}


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_host_context_fills_an_omitted_required_argument(context_build: Path, dialect: str):
    """A required context argument the model left out is the host's value, not a VALIDATION_ERROR."""
    answer = CALLS[dialect](opened(context_build), {"task_id": "T-1"})
    assert answer["ok"] is True, answer
    assert answer["result"] == {"project_id": "P-42", "task_id": "T-1"}
    assert answer["meta"]["context_filled"] == ["project_id"]


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_host_value_wins_over_the_models(context_build: Path, dialect: str):
    """A context argument the model sent runs with the host's value, and a warning says it was replaced."""
    answer = CALLS[dialect](opened(context_build), {"task_id": "T-1", "project_id": "P-other"})
    assert answer["ok"] is True, answer
    assert answer["result"]["project_id"] == "P-42"
    assert any("project_id" in w and "host" in w for w in answer["meta"]["warnings"])
    assert "P-42" not in json.dumps(answer["meta"])


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_without_host_context_the_model_must_send_it(context_build: Path, dialect: str):
    """A host context without project_id leaves it an ordinary required argument the model sends."""
    catalog = Catalog.open(context_build, handlers={"mcp": echo}, context={"user_token": "t"})
    missing = CALLS[dialect](catalog, {"task_id": "T-1"})
    assert missing["error"]["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in missing["error"]["details"]["field_errors"]] == ["project_id"]
    sent = CALLS[dialect](catalog, {"task_id": "T-1", "project_id": "P-7"})
    assert sent["result"]["project_id"] == "P-7"
    assert "context_filled" not in sent["meta"]


def test_tools_never_receive_context_they_did_not_declare(context_build: Path):
    """util.echo and onto.task.list declare no context: they get only what the model sent, no host values."""
    catalog = opened(context_build)
    echoed = catalog.tool_exec("util.echo", {"a": 1})
    assert echoed["result"] == {"a": 1}
    assert "context_filled" not in echoed["meta"]
    listed = catalog.tool_exec("onto_task_list", {}, dialect="namespaced")
    assert listed["result"] == {}
    assert "tok-secret-123" not in json.dumps([echoed, listed])


def test_described_schema_leaves_out_host_filled_arguments(context_build: Path):
    """expand_tool, tool_describe and tool_help show onto.task.update without project_id (the host owns it)."""
    catalog = opened(context_build)
    spec, named = catalog.expand_tool("onto.task.update"), catalog.tool_describe("onto_task_update")
    for described in (spec, named):
        schema = described["args_schema"]
        assert list(schema["properties"]) == ["task_id"]
        assert schema["required"] == ["task_id"]
        assert described["examples"][0]["args"] == {"task_id": "T-1"}
    assert spec["next_action"]["args"]["args"] == {"task_id": "T-1"}
    assert named["next_action"] == {"op": "onto_task_update", "args": {"task_id": "T-1"}}
    helped = catalog.tool_help("onto.task.update", include_schemas=True)
    assert [a["name"] for a in helped["args"]] == ["task_id"]
    assert "project_id" not in helped["usage"]
    assert "project_id" not in helped["args_schema"]["properties"]


def test_without_context_the_schema_is_shown_whole(context_build: Path):
    """A session whose context has no project_id shows it as a required argument."""
    catalog = Catalog.open(context_build, context={"user_token": "t"})
    assert catalog.expand_tool("onto.task.update")["args_schema"]["required"] == ["project_id", "task_id"]
    helped = catalog.tool_help("onto.task.update")
    assert [a["name"] for a in helped["args"]] == ["project_id", "task_id"]


def test_a_bad_host_value_is_said_as_the_hosts_without_showing_it(context_build: Path):
    """A host value the schema refuses is a field error marked 'host context' whose message hides the value."""
    catalog = Catalog.open(context_build, handlers={"mcp": echo}, context={"project_id": "Q-secret-9"})
    answer = catalog.tool_exec("onto.task.update", {"task_id": "T-1"})
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    (error,) = answer["error"]["details"]["field_errors"]
    assert error["source"] == "host context"
    assert "Q-secret-9" not in json.dumps(answer)


def test_exec_audit_lines_carry_entity_action_and_context_names(context_build: Path, tmp_path: Path):
    """Each exec record names tool_id, entity, action, contexts and context_filled, and no context value."""
    log = tmp_path / "audit.jsonl"
    catalog = opened(context_build, audit=log)
    catalog.tool_exec("onto.task.update", {"task_id": "T-1", "project_id": "P-model"})
    catalog.call_tool("util.echo", {"b": 2})
    catalog.tool_exec("onto_task_list", {"project_id": "P-1"}, dialect="namespaced")
    calls = [r for r in read_audit(log) if r["op"] == "exec"]
    labels = [{k: r[k] for k in ("tool_id", "entity", "action", "contexts", "context_filled")} for r in calls]
    assert labels == [
        {
            "tool_id": "onto.task.update",
            "entity": "task",
            "action": "update",
            "contexts": ["project_id"],
            "context_filled": ["project_id"],
        },
        {"tool_id": "util.echo", "entity": "debug.echo", "action": "run", "contexts": [], "context_filled": []},
        {"tool_id": "onto.task.list", "entity": "task", "action": "list", "contexts": [], "context_filled": []},
    ]
    text = log.read_text(encoding="utf-8")
    assert "P-42" not in text
    assert "tok-secret-123" not in text


def test_audit_sink_receives_labels_for_ui_events(context_build: Path):
    """A host's sink (audit=object) gets each call's entity and action: what 001's UI operation events need."""
    events: list[dict[str, Any]] = []

    class Sink:
        def record(self, **fields: Any) -> None:
            events.append({"op": fields["op"], "outcome": fields["outcome"], **(fields.get("extra") or {})})

    catalog = opened(context_build, audit=Sink())
    catalog.tool_batch([{"type": "exec", "op": "onto.task.update", "args": {"task_id": "T-9"}}])
    exec_events = [e for e in events if e["op"] == "exec"]
    assert [(e["entity"], e["action"], e["outcome"]) for e in exec_events] == [("task", "update", "ok")]


def test_labels_derive_from_the_id_for_specs_without_them():
    """A spec from an older build (no entity/action fields) is audited with the id's entity and action."""
    assert tool_labels("onto.task.update", {}, []) == {
        "tool_id": "onto.task.update",
        "entity": "task",
        "action": "update",
        "contexts": [],
        "context_filled": [],
    }


@pytest.mark.parametrize(
    "context",
    [["project_id"], {"": "x"}, {"project_id": object()}, {"k": float("nan")}, {f"k{i}": i for i in range(65)}],
)
def test_bad_context_is_a_bad_request_naming_no_values(context_build: Path, context: Any):
    """context must be a small mapping of names to JSON values; anything else is BAD_REQUEST at open."""
    with pytest.raises(ReaderError) as caught:
        Catalog.open(context_build, context=context)
    assert caught.value.code == "BAD_REQUEST"


def test_context_value_is_copied_at_open(context_build: Path):
    """The host changing its dict after open does not change what the session fills."""
    host = {"project_id": "P-1"}
    catalog = Catalog.open(context_build, handlers={"mcp": echo}, context=host)
    host["project_id"] = "P-2"
    assert catalog.tool_exec("onto.task.update", {"task_id": "T"})["result"]["project_id"] == "P-1"


def test_cli_exec_context_flag_fills_the_argument(context_build: Path):
    """toolcat exec --context project_id=P-42 fills it (seen in a dry run) and names it in meta.context_filled."""
    result = CliRunner().invoke(
        main,
        [
            *("exec", "onto.task.update", "--args", '{"task_id": "T-1"}', "--dry-run", "--json"),
            *("--build", str(context_build), "--context", "project_id=P-42"),
        ],
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["would_run"]["args"] == {"project_id": "P-42", "task_id": "T-1"}
    assert answer["meta"]["context_filled"] == ["project_id"]
    bad = CliRunner().invoke(main, ["exec", "onto.task.update", "--build", str(context_build), "--context", "x"])
    assert bad.exit_code == 2
    assert "KEY=VALUE" in bad.output


def test_serve_options_pass_the_context_to_the_catalogue(context_build: Path):
    """toolcat serve --context reaches Catalog.open: the served catalogue hides and fills project_id."""
    catalog = open_catalog(ServeOptions(location=str(context_build), context={"project_id": "P-42"}))
    assert catalog.context == {"project_id": "P-42"}
    assert "project_id" not in catalog.tool_describe("onto_task_update")["args_schema"]["properties"]

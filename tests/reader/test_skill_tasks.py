"""Skills and agents as tasks (design 004, issue 25): 004's calls verbatim in every dialect, context, task.list."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog


@pytest.fixture
def catalog(example_build: Path) -> Catalog:
    """A fresh session of the example catalogue."""
    return Catalog.open(example_build)


#: 004's calls, verbatim: task.code_review(target="src/"), task.explore(query=...), task.plan(feature=...).
SEED_CALLS = [
    ("task.code_review", {"target": "src/"}, "skill", "code-reviewer"),
    ("task.explore", {"query": "find API routes"}, "agent", "code-explorer"),
    ("task.plan", {"feature": "OAuth implementation"}, "agent", "planner"),
]


@pytest.mark.parametrize(("task", "args", "kind", "name"), SEED_CALLS)
def test_seed_004_task_calls_run_in_the_gateway_dialect(catalog: Catalog, task, args, kind, name):
    """tool_exec(004's task, its argument) answers the instructions with the argument as the task to carry out."""
    answer = catalog.tool_exec(task, args)
    assert answer["ok"], answer
    result = answer["result"]
    assert (result["task"], result["type"], result["name"]) == (task, kind, name)
    assert result["instructions"].strip()
    assert {k: result["arguments"][k] for k in args} == args
    assert "context" not in result


@pytest.mark.parametrize(("task", "args", "kind", "name"), SEED_CALLS)
def test_seed_004_task_calls_run_in_the_spec_dialect(catalog: Catalog, task, args, kind, name):
    """call_tool(004's task, its argument) runs it as the spec dialect's call."""
    answer = catalog.call_tool(task, args)
    assert answer["ok"], answer
    assert answer["result"]["type"] == kind
    assert {k: answer["result"]["arguments"][k] for k in args} == args


@pytest.mark.parametrize(("task", "args", "kind", "name"), SEED_CALLS)
def test_seed_004_task_calls_run_by_alias_in_the_namespaced_dialect(catalog: Catalog, task, args, kind, name):
    """task_code_review(target="src/") and the others run by their provider alias, as 004's alias table says."""
    answer = catalog.tool_exec(task.replace(".", "_"), args, dialect="namespaced")
    assert answer["ok"], answer
    assert answer["result"]["task"] == task
    assert answer["result"]["name"] == name


def test_unknown_arguments_reach_the_task_as_context(catalog: Catalog):
    """Arguments the task does not declare are passed through under context, apart from its declared arguments."""
    answer = catalog.tool_exec("task.code_review", {"target": "src/", "priority": "high", "ticket": {"id": "T-7"}})
    assert answer["ok"], answer
    assert answer["result"]["arguments"] == {"target": "src/"}
    assert answer["result"]["context"] == {"priority": "high", "ticket": {"id": "T-7"}}


def test_a_declared_enum_is_still_checked(catalog: Catalog):
    """A declared argument keeps its schema: a focus outside its enum is a VALIDATION_ERROR naming the field."""
    answer = catalog.tool_exec("task.code_review", {"target": "src/", "focus": "vibes"})
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in answer["error"]["details"]["field_errors"]] == ["focus"]


def test_a_missing_required_argument_names_it_and_points_at_the_description(catalog: Catalog):
    """task.explore without query is a VALIDATION_ERROR on query whose next_action describes the task."""
    answer = catalog.tool_exec("task.explore", {}, dialect="namespaced")
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in answer["error"]["details"]["field_errors"]] == ["query"]
    assert answer["error"]["next_action"] == {"op": "tool_describe", "args": {"name": "task.explore"}}


def test_a_resource_is_read_without_the_task_arguments(catalog: Catalog):
    """Reading a bundled file (resource) needs no task argument: level 3 stays one call."""
    answer = catalog.tool_exec("task.code_review", {"resource": "references/review-checklist.md"})
    assert answer["ok"], answer
    assert answer["result"]["level"] == 3
    assert answer["result"]["content"]


def test_an_agent_task_carries_what_a_sub_agent_runner_needs(catalog: Catalog):
    """An agent's task answer says type agent and carries its tools and model for the host's sub-agent runner."""
    result = catalog.tool_exec("task.explore", {"query": "find API routes"})["result"]
    assert result["type"] == "agent"
    assert "file.search" in result["tools"]
    assert result["model"] == "haiku"


def test_agents_say_their_type_in_lists_and_describe(catalog: Catalog):
    """list('agents') and tool_describe mark the example's agents type agent; skills stay type skill."""
    listed = {p["tool_id"]: p.get("type") for p in catalog.list("agents")["tools"]}
    assert listed["task.explore"] == "agent"
    assert listed["task.plan"] == "agent"
    assert catalog.tool_describe("task.plan")["type"] == "agent"
    assert catalog.tool_describe("task.code_review")["type"] == "skill"


def test_task_list_lists_every_skill_and_agent_with_arguments(catalog: Catalog):
    """task.list() names every task once with its type, summary and an arguments line; required ones have no '?'."""
    answer = catalog.tool_exec("task.list", {})
    assert answer["ok"], answer
    rows = {row["task"]: row for row in answer["result"]["tasks"]}
    assert answer["result"]["count"] == len(rows) == 8
    assert rows["task.code_review"]["type"] == "skill"
    assert rows["task.explore"]["type"] == "agent"
    assert rows["task.plan"]["arguments"].startswith("feature: string")
    assert "project_id?: string" in rows["task.plan"]["arguments"]
    assert all(row["summary"] for row in rows.values())


@pytest.mark.parametrize(
    ("dialect", "op", "expected"),
    [
        ("gateway", "task.list", {"op": "tool_help", "args": {"path": "task.code_review"}}),
        ("spec", "task.list", {"op": "expand_tool", "args": {"tool_id": "task.code_review"}}),
        ("namespaced", "task_list", {"op": "tool_describe", "args": {"name": "task.code_review"}}),
    ],
)
def test_task_list_next_action_describes_a_task_in_each_dialect(catalog: Catalog, dialect, op, expected):
    """task.list's next_action describes its first task, in the dialect's own terms (never task.list again)."""
    answer = catalog.tool_exec(op, {}, dialect=dialect)
    assert answer["ok"], answer
    assert answer["next_action"] == expected


def test_task_list_is_findable_and_listed_beside_the_tasks(catalog: Catalog):
    """task.list is listed under skills and agents, and a search for listing tasks finds it."""
    assert "task.list" in [p["tool_id"] for p in catalog.list("skills")["tools"]]
    assert "task.list" in [p["tool_id"] for p in catalog.list("agents")["tools"]]
    names = [m["name"] for m in catalog.find_tool("list the available tasks", limit=5)["matches"]]
    assert "task.list" in names

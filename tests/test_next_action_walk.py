"""No hint loops (issue 34): from every error a tool of the example catalogue can return, follow next_action 5 steps.

The starting calls come from the catalogue (:func:`walk_support.starting_calls`: a missing argument, a wrong type,
an unknown op for every tool; a read-only refusal for every write tool; a namespace refusal; the weak searches), in
every dialect of the Python API. A walk fails when it revisits a call it already made, or names a tool the dialect
does not expose. http handlers are answered by a stand-in that builds the request as the real one would (so a URL
that cannot be built fails as it would) and sends nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from walk_support import Walk, call_in, exposed_tools, starting_calls, weak_searches

from toolcat.examples.onto_store import reset_store
from toolcat.format.types import Json
from toolcat.reader import Catalog
from toolcat.reader.dialects import DIALECTS
from toolcat.reader.execution.runners import ExecContext, describe_run


def fake_http(ctx: ExecContext) -> Json:
    """The request the http handler would send (its errors included), not sent."""
    plan = describe_run({**ctx.spec, "tool_id": ctx.tool_id}, ctx.args, ctx.policy)
    return {"would_send": {k: plan.get(k) for k in ("method", "url")}}


def opened(build: Path, sandbox: Path, **options: Any) -> Catalog:
    """The example catalogue with the stand-in http handler and a sandbox for file.*."""
    return Catalog.open(build, sandbox=str(sandbox), handlers={"http": fake_http}, **options)


def python_api(cat: Catalog, dialect: str):
    """An ``execute(op, args)`` calling the Catalog method a dialect's tool names, or a tool by its alias."""
    methods = {"list", "search_nodes", "search_tool_by_category", "expand_tool", "call_tool"}
    methods |= {"tool_help", "tool_exec", "tool_batch", "tool_list", "tool_describe", "find_tool"}

    async def execute(op: str, args: Json) -> Json:
        if op in methods:
            return getattr(cat, op)(**args)
        if op.startswith("discover_") and op.endswith("_tools"):
            return cat.discover(op.removeprefix("discover_").removesuffix("_tools"), **args)
        return cat.tool_exec(op, args, dialect=dialect)

    return execute


def aliases(cat: Catalog) -> set[str]:
    """Every tool's alias (a namespaced or direct next_action may call one)."""
    return {row["alias"] for row in cat.tool_list()["tools"]}


def run_walks(cat: Catalog, dialect: str, calls: list[tuple[str, Json]]) -> Walk:
    """Walk from each call (with a fresh example store) and return the walker."""
    walk = Walk(dialect, python_api(cat, dialect), exposed_tools(dialect, cat.discovery_domains()), aliases(cat))

    async def main() -> None:
        for op, args in calls:
            reset_store(seed=True)
            await walk.walk(op, args)

    anyio.run(main)
    reset_store(seed=True)
    return walk


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A workspace with a README and a source folder, for the file.* and refactor examples."""
    (tmp_path / "README.md").write_text("# Demo\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 1\n")
    return tmp_path


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_no_next_action_loops_from_any_error_in_any_dialect(example_build: Path, sandbox: Path, dialect: str) -> None:
    """Missing arguments, wrong types, unknown ops and weak searches lead somewhere new for 5 steps, never back."""
    cat = opened(example_build, sandbox)
    calls = starting_calls(cat, dialect) + weak_searches(dialect)
    walk = run_walks(cat, dialect, calls)
    assert not walk.problems, "\n".join(walk.problems)
    assert len(calls) >= 150
    assert "VALIDATION_ERROR" in walk.codes
    if dialect != "direct":
        assert "TOOL_NOT_FOUND" in walk.codes
        assert walk.steps >= len(calls)  # the walks did follow their next_actions


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_no_loops_after_policy_refusals(example_build: Path, sandbox: Path, dialect: str) -> None:
    """A read-only session's PERMISSION_DENIED and a hidden namespace's NOT_AUTHORIZED lead nowhere they came from."""
    cat = opened(example_build, sandbox, read_only=True)
    calls = starting_calls(cat, dialect, kinds=("write",))  # hidden in a read-only session: not listed, so none
    writes = [row for row in Catalog.open(example_build).tool_list()["tools"] if row.get("kind") == "write"]
    assert writes
    refused = [call_in(dialect, row["name"], row["alias"], {}) for row in writes]
    walk = run_walks(cat, dialect, refused + calls)
    assert not walk.problems, "\n".join(walk.problems)
    assert "PERMISSION_DENIED" in walk.codes
    hidden = opened(example_build, sandbox, allowed_namespaces=["util"])
    others = [row for row in Catalog.open(example_build).tool_list()["tools"] if not row["name"].startswith("util.")]
    walk = run_walks(hidden, dialect, [call_in(dialect, row["name"], row["alias"], {}) for row in others])
    assert not walk.problems, "\n".join(walk.problems)
    assert "NOT_AUTHORIZED" in walk.codes


def test_read_only_refusal_is_permission_denied_and_others_stay_not_authorized(example_build: Path) -> None:
    """001's PERMISSION_DENIED for a write in a read-only session; a hidden namespace is still NOT_AUTHORIZED."""
    read_only = Catalog.open(example_build, read_only=True)
    refused = read_only.tool_exec("onto.task.update", {"task_id": "T-0001", "status": "done"})
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    assert refused["error"]["help_path"] == "onto.task.update"
    hidden = Catalog.open(example_build, allowed_namespaces=["util"]).tool_exec("onto.task.list", {})
    assert hidden["error"]["code"] == "NOT_AUTHORIZED"


def test_describe_offers_a_sample_call_that_passes_validation(example_build: Path) -> None:
    """A task with a required argument and no example is described with that argument filled from its type."""
    cat = Catalog.open(example_build)
    for name in ("task.code_review", "task.explore", "task.plan"):
        described = cat.expand_tool(name)
        action = described["next_action"]
        assert action["op"] == "call_tool", described
        sent = action["args"]["args"]
        assert sent, action  # not {}, which fails on the missing argument
        ran = cat.call_tool(name, sent)
        assert ran["ok"] is True, ran

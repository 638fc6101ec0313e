"""Errors with a way forward, the namespaced loop, and batch items that report the op as sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog
from toolcat.reader.checks import MAX_NAME


@pytest.fixture
def catalog(example_build: Path) -> Catalog:
    """A fresh session of the example catalogue (its idempotency keys are its own)."""
    return Catalog.open(example_build)


def test_handler_not_found_points_at_the_entity_list(catalog: Catalog):
    """onto.task.update on T-9999 answers NOT_FOUND whose next_action runs onto.task.list, in each dialect's terms."""
    args = {"task_id": "T-9999", "status": "done"}
    gateway = catalog.tool_exec("onto.task.update", args)
    assert gateway["error"]["code"] == "NOT_FOUND"
    assert gateway["error"]["next_action"] == {"op": "tool_exec", "args": {"op": "onto.task.list", "args": {}}}
    spec = catalog.call_tool("onto.task.update", args)
    assert spec["error"]["next_action"] == {"op": "call_tool", "args": {"tool_id": "onto.task.list", "args": {}}}
    named = catalog.tool_exec("onto_task_update", args, dialect="namespaced")
    assert named["error"]["next_action"] == {"op": "onto_task_list", "args": {}}


def test_idempotency_conflict_points_at_the_op_help(catalog: Catalog):
    """A key reused for another call is CONFLICT with the op's help as next_action (not a repeat of the call)."""
    assert catalog.tool_exec("onto.task.get", {"task_id": "T-0001"}, idempotency_key="k1")["ok"] is True
    clash = catalog.tool_exec("onto.task.get", {"task_id": "T-0002"}, idempotency_key="k1")
    assert clash["error"]["code"] == "CONFLICT"
    assert clash["error"]["next_action"] == {"op": "tool_help", "args": {"path": "onto.task.get"}}


def test_namespaced_alias_is_callable_without_describe(catalog: Catalog):
    """Describe is advice, not a gate: any tool the policy allows runs by its alias at once."""
    answer = catalog.tool_exec("util_math_eval", {"expression": "2+2"}, dialect="namespaced")
    assert answer["ok"] is True
    assert answer["result"]["result"] == 4


def test_require_expand_gates_until_described(example_build: Path):
    """With require_expand the first call points at tool_describe; once described the same call runs."""
    gated = Catalog.open(example_build, require_expand=True)
    first = gated.tool_exec("util_math_eval", {"expression": "2+2"}, dialect="namespaced")
    assert first["error"]["code"] == "NOT_AUTHORIZED"
    assert first["error"]["next_action"] == {"op": "tool_describe", "args": {"name": "util.math.eval"}}
    assert gated.tool_describe("util_math_eval")["ok"] is True
    assert gated.tool_exec("util_math_eval", {"expression": "2+2"}, dialect="namespaced")["ok"] is True


def test_a_tool_that_cannot_run_says_why_once_and_never_loops(example_build: Path):
    """Described on a host that refuses its handler, a tool says why in one hint; its call does not send back to describe."""
    refusing = Catalog.open(example_build, allow_handlers={"python": []})
    described = refusing.tool_describe("file_read")
    assert described["executable"] is False
    assert len(described["hints"]) == 1
    assert "does not allow python handlers" in described["hints"][0]
    assert described.get("next_action") is None
    called = refusing.tool_exec("file_read", {"path": "notes.txt"}, dialect="namespaced")
    assert called["error"]["code"] == "NOT_AUTHORIZED"
    assert (called["error"].get("next_action") or {}).get("op") != "tool_describe"


def test_sequential_batch_reports_not_run_ops_as_sent(catalog: Catalog):
    """Items after a failure answer not_run with their op exactly as sent; resending them runs them."""
    batch = catalog.tool_batch(
        [{"op": "util.math.eval", "args": {}}, {"op": "util.math.eval", "args": {"expression": "1+2"}}]
    )
    rest = batch["results"][1]
    assert rest == {"op": "util.math.eval", "status": "not_run"}
    again = catalog.tool_exec(rest["op"], {"expression": "1+2"})
    assert again["ok"] is True


def test_malformed_batch_item_reports_its_op_as_sent(catalog: Catalog):
    """A malformed item answers BAD_REQUEST with its op as sent, not a repr of it."""
    batch = catalog.tool_batch([{"op": "util.math.eval", "argz": {}}])
    item = batch["results"][0]
    assert item["op"] == "util.math.eval"
    assert item["error"]["code"] == "BAD_REQUEST"


def test_overlong_op_is_cut_with_a_flag(catalog: Catalog):
    """An op longer than MAX_NAME is reported cut to MAX_NAME characters, with op_truncated set."""
    long_op = "x" * (MAX_NAME + 50)
    batch = catalog.tool_batch([{"op": "util.math.eval", "args": {}}, {"op": long_op, "args": {}}])
    assert batch["results"][1] == {"op": long_op[:MAX_NAME], "op_truncated": True, "status": "not_run"}
    direct = catalog.tool_exec(long_op, {})
    assert direct["op"] == long_op[:MAX_NAME]
    assert direct["op_truncated"] is True
    assert direct["error"]["code"] == "BAD_REQUEST"

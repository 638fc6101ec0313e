"""Property tests: no input to any reader operation raises; every call returns a dict or an envelope."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import write_tree

from toolcat.build import build
from toolcat.reader import ERROR_CODES, Catalog, is_error

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
NAMES = st.sampled_from(
    [
        "",
        "root",
        "demo",
        "demo.echo",
        "demo_echo",
        "demo.",
        ".",
        "task.code_reviewer",
        "code-reviewer",
        "demo/echo",
        "x" * 400,
        "démo",
        "demo..echo",
    ]
)
ANY = NAMES | JSON
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def cat(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    root = tmp_path_factory.mktemp("props")
    src = write_tree(
        root / "src",
        {
            "demo/tools.yaml": {
                "tools": [
                    {
                        "id": "demo.echo",
                        "summary": "Echo text",
                        "description": "x",
                        "handler": "json:dumps",
                        "args_schema": {
                            "type": "object",
                            "properties": {
                                "text": {"type": "string", "default": "a"},
                                "n": {"type": "integer", "minimum": 0},
                            },
                            "additionalProperties": False,
                        },
                    },
                    {
                        "id": "demo.host",
                        "summary": "Host tool",
                        "description": "x",
                        "kind": "write",
                        "args_schema": {"type": "object"},
                    },
                ]
            },
            "skills/code-reviewer/SKILL.md": "---\nname: code-reviewer\ndescription: Review code. Use for diffs.\n---\nBody\n",
        },
    )
    build(src, root / "build")
    return Catalog.open(root / "build", audit=root / "audit.jsonl")


def _check(out: object) -> None:
    assert isinstance(out, dict)
    json.dumps(out, default=repr)
    if is_error(out):
        assert out["error"]["code"] in ERROR_CODES
        assert out["error"]["code"] != "INTERNAL", out
        assert "help_path" in out["error"]
        assert "hints" in out["error"]


@SETTINGS
@given(path=ANY, fmt=ANY, examples=ANY, schemas=ANY)
def test_tool_help_never_raises(cat, path, fmt, examples, schemas):
    """tool_help answers any input with a dict (an envelope for bad input, never INTERNAL)."""
    _check(cat.tool_help(path, fmt, examples, schemas))


@SETTINGS
@given(op=ANY, args=ANY, key=ANY, dry=ANY)
def test_tool_exec_never_raises(cat, op, args, key, dry):
    """tool_exec answers any input with an envelope carrying op and meta."""
    out = cat.tool_exec(op, args, key, dry)
    _check(out)
    assert "op" in out
    assert "trace_id" in out["meta"]


@SETTINGS
@given(ops=ANY | st.lists(st.fixed_dictionaries({"op": NAMES, "args": JSON}), max_size=3), mode=ANY)
def test_tool_batch_never_raises(cat, ops, mode):
    """tool_batch answers any input with a dict."""
    _check(cat.tool_batch(ops, mode))


@SETTINGS
@given(path=ANY, tags=ANY, query=ANY, limit=ANY, cursor=ANY)
def test_list_never_raises(cat, path, tags, query, limit, cursor):
    """list answers any input with a dict."""
    _check(cat.list(path, tags, query, limit, cursor))


@SETTINGS
@given(a=ANY, b=ANY, c=ANY)
def test_namespaced_and_search_never_raise(cat, a, b, c):
    """tool_list, tool_describe, find_tool, search_nodes, search_tool_by_category, expand and resources never raise."""
    for out in (
        cat.tool_list(a, b),
        cat.tool_describe(a),
        cat.find_tool(a, b),
        cat.search_nodes(a, b),
        cat.search_tool_by_category(a, b, c),
        cat.expand_tool(a),
        cat.read_skill_resource(a, b),
        cat.call_tool(a, b),
    ):
        _check(out)

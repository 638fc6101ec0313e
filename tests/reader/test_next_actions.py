"""The ways forward docs/reader.md promises: search_nodes' no-match, UNKNOWN_PATH, meta.tool_id, read-only dry runs.

Each answer's next_action must be an operation of the dialect that answered, with arguments it accepts, and
never the call just made; following it must answer (not another error about the same thing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog


@pytest.fixture
def catalog(example_build: Path) -> Catalog:
    """A fresh session of the example catalogue."""
    return Catalog.open(example_build)


def test_search_nodes_without_a_match_searches_tools_by_purpose(catalog: Catalog):
    """No category matching answers ok with a next_action searching the tools with the same words (not the call again)."""
    out = catalog.search_nodes("xylophone quantum")
    assert out["ok"] is True
    assert out["results"] == []
    assert out["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "xylophone quantum", "category_path": ""},
    }
    assert "search tools by purpose" in out["hints"][-1]
    followed = catalog.search_tool_by_category(**out["next_action"]["args"])
    assert isinstance(followed, dict)
    assert followed.get("ok") is True or followed["error"]["code"] == "NO_MATCH_IN_CATEGORY"


def test_unknown_path_with_a_close_child_lists_that_child(catalog: Catalog):
    """list('agent') answers UNKNOWN_PATH whose next_action lists the closest existing child, 'agents'."""
    out = catalog.list("agent")
    assert out["error"]["code"] == "UNKNOWN_PATH"
    assert out["error"]["next_action"] == {"op": "list", "args": {"path": "agents"}}
    assert catalog.list(**out["error"]["next_action"]["args"])["ok"] is True


def test_unknown_path_without_a_close_child_searches_its_words_where_the_walk_stopped(catalog: Catalog):
    """With nothing close, the next_action searches the missing names' words inside the deepest node that exists.

    It used to list that node again, repeating the children the hint already named.
    """
    top = catalog.list("zzqx_widgets")["error"]
    assert top["code"] == "UNKNOWN_PATH"
    assert top["details"]["parent"] == ""
    assert top["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "zzqx widgets", "category_path": ""},
    }
    nested = catalog.list("coding/zzqx-widgets")["error"]
    assert nested["details"]["parent"] == "coding"
    assert nested["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "zzqx widgets", "category_path": "coding"},
    }


def test_unknown_category_of_a_search_runs_the_same_query_nearby(catalog: Catalog):
    """search_tool_by_category in a misspelled category: the next_action keeps the query and searches nearby."""
    close = catalog.search_tool_by_category("rename a symbol", "coding/refactorin")["error"]
    assert close["code"] == "UNKNOWN_PATH"
    assert close["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "rename a symbol", "category_path": "coding/refactoring"},
    }
    far = catalog.search_tool_by_category("rename a symbol", "zzqx")["error"]
    assert far["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "rename a symbol", "category_path": ""},
    }
    found = catalog.search_tool_by_category(**close["next_action"]["args"])
    assert "refactor.rename_symbol" in [r["tool_id"] for r in found["results"]]


def test_unknown_group_in_gateway_and_namespaced_follows_the_same_rule(catalog: Catalog):
    """tool_help/tool_list of an unknown group: help of the closest name, else a search for its words."""
    assert catalog.tool_help("tasks")["error"]["next_action"] == {"op": "tool_help", "args": {"path": "task"}}
    assert catalog.tool_list("tasks")["error"]["next_action"] == {"op": "tool_list", "args": {"namespace": "task"}}
    far = catalog.tool_help("zzqx_widgets")["error"]
    assert far["next_action"] == {"op": "tool_help", "args": {"query": "zzqx widgets"}}


def test_meta_tool_id_appears_exactly_when_op_was_not_the_canonical_id(catalog: Catalog):
    """op is always as sent; meta.tool_id names the canonical id when op was an alias, success or failure alike."""
    by_id = catalog.tool_exec("util.math.eval", {"expression": "1+1"})
    assert by_id["op"] == "util.math.eval"
    assert "tool_id" not in by_id["meta"]
    by_alias = catalog.tool_exec("util_math_eval", {"expression": "1+1"})
    assert by_alias["ok"] is True
    assert by_alias["op"] == "util_math_eval"
    assert by_alias["meta"]["tool_id"] == "util.math.eval"
    failed = catalog.tool_exec("util_math_eval", {"expression": 1})
    assert failed["error"]["code"] == "VALIDATION_ERROR"
    assert (failed["op"], failed["meta"]["tool_id"]) == ("util_math_eval", "util.math.eval")
    unknown = catalog.tool_exec("util.math.evil", {})
    assert unknown["error"]["code"] == "TOOL_NOT_FOUND"
    assert "tool_id" not in unknown["meta"]
    batch = catalog.tool_batch([{"op": "util_math_eval", "args": {"expression": "2"}}])
    assert (batch["results"][0]["op"], batch["results"][0]["meta"]["tool_id"]) == ("util_math_eval", "util.math.eval")


def test_read_only_allows_a_dry_run_and_still_refuses_the_call(example_build: Path):
    """A dry run of a write tool in a read-only session answers its plan, saying the real call would be refused."""
    catalog = Catalog.open(example_build, read_only=True)
    args = {"task_id": "T-0001", "status": "done"}
    dry = catalog.tool_exec("onto.task.update", args, dry_run=True)
    assert dry["ok"] is True, dry
    assert dry["dry_run"] is True
    assert dry["would_run"]["allowed"] is False
    assert dry["would_run"]["refusal"]["code"] == "PERMISSION_DENIED"
    assert any("read-only" in w for w in dry["meta"]["warnings"])
    real = catalog.tool_exec("onto.task.update", args)
    assert real["error"]["code"] == "PERMISSION_DENIED"
    assert "read-only" in real["error"]["message"]


def test_read_only_dry_run_still_validates_the_arguments(example_build: Path):
    """Read-only lets a dry run through to validation: bad arguments are still a VALIDATION_ERROR."""
    catalog = Catalog.open(example_build, read_only=True)
    out = catalog.tool_exec("onto.task.update", {"task_id": "T-0001", "status": "finished"}, dry_run=True)
    assert out["error"]["code"] == "VALIDATION_ERROR"


def test_always_loaded_is_the_one_operation_answering_a_list(catalog: Catalog):
    """always_loaded() returns a list of lean specs, as docs/reader.md says beside 'every operation returns a dict'."""
    loaded = catalog.always_loaded()
    assert isinstance(loaded, list)
    assert [entry["tool_id"] for entry in loaded] == ["file.read"]
    reader_doc = (Path(__file__).resolve().parents[2] / "docs" / "reader.md").read_text(encoding="utf-8")
    assert "`always_loaded()`, a host's helper rather than an agent's operation, returns a list" in reader_doc

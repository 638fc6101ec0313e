"""Weak is said everywhere (issue 34): every search says when nothing matches well, in the default tier and the lexical one.

find_tool's rule (``Searcher.weak_words``: most content words unknown to every tool, a low best score) now also marks
``search_nodes``, ``search_tool_by_category`` and ``list(query=)``: ``"weak": true``, a hint naming the missing words,
and a next_action to browse. A category search none of whose words any tool mentions is NO_MATCH_IN_CATEGORY.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog


@pytest.fixture(params=["lexical", "default"])
def tiered(request: pytest.FixtureRequest) -> Catalog:
    """The example catalogue built lexical (the suite's default) and with the default semantic tier."""
    name = "example_build" if request.param == "lexical" else "default_tier_build"
    return Catalog.open(request.getfixturevalue(name))


def _weak(answer: dict, words: list[str]) -> None:
    assert answer["ok"] is True, answer
    assert answer.get("weak") is True, answer
    assert any(all(w in h for w in words) for h in answer["hints"]), answer["hints"]
    assert answer["next_action"] is not None


def test_search_nodes_says_oauth_login_is_weak(tiered: Catalog) -> None:
    """000's own example: the catalogue has no auth category, so search_nodes("oauth login") says so."""
    answer = tiered.search_nodes("oauth login")
    if answer["results"]:
        _weak(answer, ["oauth", "login"])
        assert answer["next_action"] == {"op": "list", "args": {"path": ""}}
    else:
        assert answer["hints"], answer
    good = tiered.search_nodes("rename a symbol across a project")
    assert good["results"][0]["path"] == ["coding", "refactoring"]
    assert "weak" not in good


def test_nonsense_in_a_category_is_no_match(tiered: Catalog) -> None:
    """An unrelated query in coding/refactoring is NO_MATCH_IN_CATEGORY, not three hits by spelling."""
    answer = tiered.search_tool_by_category("xyzzy plugh frobnicate", ["Coding", "Refactoring"])
    assert answer["ok"] is False, answer
    assert answer["error"]["code"] == "NO_MATCH_IN_CATEGORY"
    assert answer["error"]["details"]["matching_categories"] == []
    assert answer["error"]["next_action"] is not None


def test_partly_known_query_in_a_category_is_weak(tiered: Catalog) -> None:
    """A query only partly known to the catalogue keeps its hits, marked weak, with a way to browse the category."""
    answer = tiered.search_tool_by_category("zip the reports", "")
    if answer.get("ok") is False:
        assert answer["error"]["code"] == "NO_MATCH_IN_CATEGORY"
        return
    _weak(answer, ["zip"])
    assert answer["next_action"] == {"op": "list", "args": {"path": ""}}
    strong = tiered.search_tool_by_category("rename a symbol across the codebase", ["Coding", "Refactoring"])
    assert strong["results"][0]["tool_id"] == "refactor.rename_symbol"
    assert "weak" not in strong


def test_list_with_a_query_says_weak(tiered: Catalog) -> None:
    """list(path, query=) marks a weak page and points at the node's own listing."""
    answer = tiered.list(path="", query="zip the reports")
    if answer["tools"]:
        _weak(answer, ["zip"])
        assert answer["next_action"] == {"op": "list", "args": {"path": ""}}
    else:
        assert answer["hints"]
    strong = tiered.list(path="coding", query="rename a symbol")
    assert strong["tools"][0]["tool_id"] == "refactor.rename_symbol"
    assert "weak" not in strong


def test_gateway_and_namespaced_say_weak_too(tiered: Catalog) -> None:
    """tool_help(query=) and find_tool keep saying so (the same rule)."""
    found = tiered.find_tool("oauth login")
    assert found.get("weak") is True or (found["matches"] == [] and found["hints"]), found
    helped = tiered.tool_help(query="oauth login")
    assert helped.get("weak") is True or not helped.get("operations"), helped


def test_weak_search_answers_in_the_spec_dialect_point_at_browsing(example_build: Path) -> None:
    """The way forward of a weak answer is a spec-dialect list call, never the search just made."""
    cat = Catalog.open(example_build)
    answer = cat.search_tool_by_category("zip the reports", ["Storage"])
    holder = answer["error"] if answer.get("ok") is False else answer
    assert holder["next_action"]["op"] in ("list", "search_tool_by_category")
    assert holder["next_action"] != {
        "op": "search_tool_by_category",
        "args": {"query": "zip the reports", "category_path": "storage"},
    }

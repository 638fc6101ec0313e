"""Weak is said everywhere (issue 34): every search says when nothing matches well, in the default tier and the lexical one.

find_tool's rule (``Searcher.weak_words``: the words no tool has carrying most of the query's idf, a low best score) marks
``search_nodes``, ``search_tool_by_category`` and ``list(query=)``: ``"weak": true``, a hint naming the missing words,
and a next_action to browse. A category search none of whose words any tool mentions is NO_MATCH_IN_CATEGORY.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from toolcat.reader import Catalog
from toolcat.reader.search import searcher as searcher_module


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


def test_a_made_up_word_among_common_known_ones_is_weak(example_build: Path) -> None:
    """Two made-up words among three common ones carry most of the query's idf: weak (by count, 2 of 5, it was not)."""
    searcher = Catalog.open(example_build).searcher()
    query = "xyzzy plugh file report folder"
    missing, words = searcher._unknown_words(query)
    assert (missing, words) == (["xyzzy", "plugh"], 5)  # under half the words by count ...
    assert searcher.unknown_share(query) >= searcher_module.WEAK_UNKNOWN_SHARE  # ... most of the idf
    _weak(Catalog.open(example_build).find_tool(query), ["xyzzy", "plugh"])


def test_a_request_whose_known_word_is_rare_is_not_weak(tiered: Catalog) -> None:
    """'scribble the postmortem': half its words unknown by count, but 'postmortem' is rare, so the right tool is no weak hit."""
    query = "scribble the postmortem"
    searcher = tiered.searcher()
    assert searcher._unknown_words(query) == (["scribble"], 2)
    assert searcher.unknown_share(query) < searcher_module.WEAK_UNKNOWN_SHARE
    answer = tiered.find_tool(query)
    assert answer["matches"][0]["name"] == "task.incident_postmortem"
    assert "weak" not in answer
    assert "next_action" not in answer


def test_the_unknown_share_weighs_each_word_by_its_idf(example_build: Path) -> None:
    """unknown_share: the unknown words' unseen idf over the query's idf; 0 with every word known, 1 with none."""
    searcher = Catalog.open(example_build).searcher()
    idf = searcher.term_idf("zip the reports")
    unseen = math.log(1 + searcher._part("tools").n_docs) + 1
    assert idf["zip"] == unseen
    assert searcher.unknown_share("zip the reports") == pytest.approx(unseen / (unseen + idf["report"]), abs=1e-12)
    assert searcher.unknown_share("upload a file to a bucket") == 0.0
    assert searcher.unknown_share("xyzzy plugh frobnicate") == 1.0
    assert searcher.unknown_share("the a of") == 0.0  # no content word

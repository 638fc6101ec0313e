"""Search quality (issue 29): the text a tool is embedded as, and a search that finds nothing good saying so."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import write_tree

from toolcat import Catalog
from toolcat.build import compile_catalog
from toolcat.build.contributors.index.texts import tool_embed_text
from toolcat.format.analyzer import analyze_words
from toolcat.reader.search import hybrid
from toolcat.reader.search import searcher as search_module
from toolcat.reader.search.hybrid import name_match

TOOL = {
    "id": "geo.forecast",
    "summary": "Get the weather forecast.",
    "description": "Get the weather forecast. Covers the next seven days for any city.",
    "args_schema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city to forecast, e.g. Paris."},
            "units": {"type": "string", "enum": ["metric", "imperial"], "description": "Unit system."},
            "window": {
                "type": "object",
                "properties": {"days": {"type": "integer", "description": "How many days ahead."}},
            },
        },
    },
    "examples": [{"description": "Rain tomorrow in Oslo", "args": {"city": "Oslo"}}],
}


@pytest.fixture(scope="module")
def default_example(default_tier_build: Path) -> Catalog:
    """The example catalogue built with the default tier (MiniLM with the tools adapter, on onnxruntime)."""
    catalog = Catalog.open(default_tier_build)
    assert catalog.searcher().semantic_tier() is not None
    return catalog


@pytest.fixture(scope="module")
def example(example_build: Path) -> Catalog:
    """The example catalogue (lexical, as the suite builds it), opened as an agent host would."""
    return Catalog.open(example_build)


def test_the_embedded_text_carries_argument_descriptions_enums_and_examples_without_repeats(tmp_path: Path) -> None:
    """The embedded text has argument descriptions (nested too), enum values, examples; a repeated summary once."""
    write_tree(tmp_path, {"geo/tools.yaml": {"tools": [TOOL]}})
    catalog, _ = compile_catalog(tmp_path)
    text = tool_embed_text(catalog.tools["geo.forecast"], catalog)
    assert text.startswith("geo forecast. Get the weather forecast. Covers the next seven days for any city. ")
    assert text.count("Get the weather forecast") == 1
    assert "The city to forecast, e.g. Paris" in text
    assert "Unit system. (metric, imperial)" in text  # as measured (the train split preferred it)
    assert "How many days ahead" in text
    assert text.endswith("Rain tomorrow in Oslo")
    assert ".. " not in text


def test_a_search_for_something_no_tool_does_says_so_and_keeps_its_hits(example: Catalog) -> None:
    """'zip the reports': marked weak, the missing word named, a next_action to browse, and the same hits kept."""
    answer = example.find_tool("zip the reports")
    assert answer["ok"] is True
    assert answer["weak"] is True
    assert any("'zip'" in hint and "No good match" in hint for hint in answer["hints"])
    assert answer["next_action"] == {"op": "tool_list", "args": {}}
    unmarked = example.searcher().rank_tools("zip the reports", limit=5)
    assert [m["name"] for m in answer["matches"]] == [p["tool_id"] for p, _, _ in unmarked][: len(answer["matches"])]
    assert len(answer["matches"]) > 3


def test_the_default_tier_marks_zip_the_reports_weak_too(default_example: Catalog) -> None:
    """With vectors the best hit of 'zip the reports' scores higher than lexically, and is still under the weak bar."""
    answer = default_example.find_tool("zip the reports")
    assert answer["weak"] is True
    assert any("'zip'" in hint for hint in answer["hints"])
    assert answer["matches"]
    assert answer["matches"][0]["relevance"] < search_module.WEAK_RELEVANCE


def test_the_gateway_search_says_so_too_and_points_at_browsing(example: Catalog) -> None:
    """tool_help(query) carries find_tool's weak marker and note; its next step browses, not the first weak hit."""
    weak = example.tool_help(query="zip the reports")
    assert weak["weak"] is True
    assert weak["operations"]  # the hits are kept
    assert any("'zip'" in hint for hint in weak["hints"])
    assert weak["next_action"] == {"op": "tool_help", "args": {"path": "root"}}
    strong = example.tool_help(query="rename a symbol")
    assert "weak" not in strong
    assert strong["next_action"] == {"op": "tool_help", "args": {"path": strong["operations"][0]["op"]}}


def test_a_request_the_catalogue_covers_gets_no_weak_match_note(example: Catalog) -> None:
    """Every word of 'upload a file to a bucket' is in the catalogue: full matches, no hint, no next_action."""
    answer = example.find_tool("upload a file to a bucket")
    assert len(answer["matches"]) == 5
    assert "hints" not in answer
    assert "next_action" not in answer
    assert "weak" not in answer


def test_a_strong_hit_is_not_called_weak_even_with_unknown_words(example: Catalog, monkeypatch) -> None:
    """The note needs a weak best hit too: with the relevance bar at 0, 'zip the reports' is answered unmarked."""
    monkeypatch.setattr(search_module, "WEAK_RELEVANCE", 0.0)
    answer = example.find_tool("zip the reports")
    assert len(answer["matches"]) == 5
    assert "next_action" not in answer
    assert "weak" not in answer


def test_an_exact_name_is_never_called_weak(example: Catalog) -> None:
    """A tool named exactly is the answer, whatever the other words: 'file.read' comes first at 1.0, with no note."""
    answer = example.find_tool("file.read")
    first = answer["matches"][0]
    assert {k: first[k] for k in ("name", "relevance", "reason")} == {
        "name": "file.read",
        "relevance": 1.0,
        "reason": "exact name",
    }
    assert first["summary"]  # each hit's one line (issue 35)
    assert "next_action" not in answer


def test_a_title_like_query_matches_the_tool_named_by_it_not_a_neighbour() -> None:
    """'List starred repositories' is list_starred_repositories by name (match 1), not star_repository."""
    terms = set(analyze_words("List starred repositories"))
    assert name_match(terms, "github.list_starred_repositories", analyze_words) == 1.0
    assert name_match(terms, "github.star_repository", analyze_words) < hybrid.NAME_MIN


def test_the_name_match_lifts_a_close_second_but_no_tool_far_behind() -> None:
    """The boost is bounded by NAME_BOOST: a named tool 0.05 behind comes first, one 0.2 behind stays where it was."""
    terms = set(analyze_words("Create repository"))
    ids = ["github.create_branch", "github.create_repository"]
    close = hybrid.name_boosted([(0, 0.50, []), (1, 0.45, [])], ids, terms, analyze_words)
    assert [doc for doc, _, _ in close] == [1, 0]
    assert close[0][1] == pytest.approx(0.45 + hybrid.NAME_BOOST)
    far = hybrid.name_boosted([(0, 0.70, []), (1, 0.45, [])], ids, terms, analyze_words)
    assert [doc for doc, _, _ in far] == [0, 1]


def test_the_default_tier_ranks_with_the_name_match(default_example: Catalog, monkeypatch) -> None:
    """'git status' names git.status: hand-fused with vectors, its score gains NAME_BOOST over the boost-off ranking."""
    # the hand fusion's boost (the learned model's name weights: tests/reader/test_fusion_model.py)
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    searcher = default_example.searcher()
    with_name = {p["tool_id"]: s for p, s, _ in searcher.rank_tools("git status", limit=5)}
    monkeypatch.setattr(hybrid, "NAME_BOOST", 0.0)
    without = {p["tool_id"]: s for p, s, _ in searcher.rank_tools("git status", limit=5)}
    assert without["git.status"] < 0.9
    assert with_name["git.status"] == pytest.approx(without["git.status"] + 0.1, abs=1e-5)

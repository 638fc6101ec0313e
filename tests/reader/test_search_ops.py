"""find_tool, search_nodes, search_tool_by_category and rank_tools over a real build, and the search CLI."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from toolcat.build import build
from toolcat.cli import main
from toolcat.format.envelope import is_error
from toolcat.reader.search.searcher import Searcher

TREE = {
    "_node.yaml": {"title": "Ops", "summary": "test catalogue"},
    "storage/_node.yaml": {"title": "Storage", "summary": "Object storage buckets and files"},
    "storage/buckets/_node.yaml": {"title": "Buckets", "summary": "Create and delete buckets"},
    "storage/buckets/tools.yaml": {
        "tools": [
            {
                "id": "storage.bucket.delete",
                "summary": "Delete an empty bucket",
                "tags": ["delete"],
                "args_schema": {
                    "type": "object",
                    "properties": {"bucket": {"type": "string", "description": "Bucket name"}},
                },
            },
            {"id": "storage.bucket.create", "summary": "Create a new bucket", "args_schema": {"type": "object"}},
        ]
        + [
            {
                "id": f"storage.bucket.op{i}",
                "summary": f"Bucket operation number {i}",
                "args_schema": {"type": "object"},
            }
            for i in range(7)
        ]
    },
    "weather/_node.yaml": {"title": "Weather", "summary": "Forecasts and observations"},
    "weather/tools.yaml": {
        "tools": [
            {
                "id": "weather.forecast",
                "summary": "Get the weather forecast for a city",
                "args_schema": {"type": "object"},
                "categories": ["storage/buckets"],
            },
            {"id": "weather.alerts", "summary": "List severe weather alerts", "args_schema": {"type": "object"}},
        ]
    },
}


@pytest.fixture
def searcher(make_tree, tmp_path):
    """A Searcher over a fresh build of TREE, with hash-checked local fetches."""
    out = tmp_path / "build"
    build(make_tree(TREE), out)

    def fetch(ref):
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    searcher = Searcher(fetch(json.loads((out / "catalog.json").read_text())["manifest"]), fetch)
    searcher.build_dir = out  # for the CLI test
    return searcher


def test_find_tool_ranks_the_described_tool_first_with_a_reason(searcher):
    """find_tool returns {matches: [{name, relevance, reason}]}, the right tool first, its matched terms in reason."""
    result = searcher.find_tool("delete a bucket")
    top = result["matches"][0]
    assert top["name"] == "storage.bucket.delete"
    assert 0 < top["relevance"] <= 1
    assert "delet" in top["reason"]
    assert "summary" in top["reason"]


def test_search_nodes_returns_paths_with_confidence_and_never_the_root(searcher):
    """search_nodes finds the weather node by its text; the root is never a result."""
    results = searcher.search_nodes("weather forecasts")["results"]
    assert results[0]["path"] == ["weather"]
    assert results[0]["summary"] == "Forecasts and observations"
    assert all(r["path"] for r in results)
    assert all(0 < r["confidence"] <= 1 for r in results)


def test_category_search_is_scoped_and_includes_dag_tools(searcher):
    """Scoped to storage, a weather query finds only weather.forecast, listed there through categories."""
    result = searcher.search_tool_by_category("weather forecast", "storage")
    ids = [r["tool_id"] for r in result["results"]]
    assert ids == ["weather.forecast"]
    assert result["category_path"] == ["storage"]
    hit = result["results"][0]
    assert {"tool_id", "path", "summary", "spec", "confidence"} <= set(hit)
    assert "args_schema" not in hit
    assert "alias" not in hit  # provider aliases stay out of what the model reads
    assert all(value not in (None, "", [], {}, False) for value in hit.values())  # lean: no empty fields


def test_category_search_pages_with_a_cursor(searcher):
    """limit 3 over the bucket node gives pages that do not overlap and end with next_cursor None."""
    seen, cursor = [], None
    for _ in range(10):
        page = searcher.search_tool_by_category("bucket", ["storage", "buckets"], limit=3, cursor=cursor)
        seen += [r["tool_id"] for r in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 10  # 9 bucket tools + weather.forecast (DAG, titled Buckets)


def test_unknown_category_gives_unknown_path_with_hints(searcher):
    """A misspelled category → UNKNOWN_PATH naming the closest root category, with a search_nodes next_action."""
    result = searcher.search_tool_by_category("delete", "storag")
    assert is_error(result)
    assert result["error"]["code"] == "UNKNOWN_PATH"
    assert "storage" in result["error"]["details"]["closest_roots"]
    assert result["error"]["next_action"]["op"] == "search_nodes"


def test_no_match_in_category_points_to_where_it_matches(searcher):
    """A query matching only weather tools, scoped to storage/buckets minus the DAG, says where it does match."""
    result = searcher.search_tool_by_category("severe alerts", "storage")
    assert result["error"]["code"] == "NO_MATCH_IN_CATEGORY"
    assert ["weather"] in result["error"]["details"]["matching_categories"]
    assert result["error"]["next_action"] == {"op": "search_in", "args": {"query": "severe alerts", "path": "weather"}}


def test_blank_query_and_bad_cursor_are_bad_requests(searcher):
    """A blank query, a bad limit and a cursor from another query are BAD_REQUEST envelopes."""
    assert searcher.find_tool("   ")["error"]["code"] == "BAD_REQUEST"
    assert searcher.search_nodes("x", limit=0)["error"]["code"] == "BAD_REQUEST"
    assert searcher.search_tool_by_category("bucket", "storage", cursor="3:deadbeef")["error"]["code"] == "BAD_REQUEST"


def test_rank_tools_direct_only_keeps_tools_listed_at_the_node(searcher):
    """rank_tools(direct_only) at storage/buckets returns the bucket tools and the DAG tool, not deeper ones."""
    ranked = searcher.rank_tools("bucket weather", within=["storage", "buckets"], direct_only=True)
    ids = {p["tool_id"] for p, _, _ in ranked}
    assert "weather.forecast" in ids
    assert "storage.bucket.delete" in ids
    assert "weather.alerts" not in ids
    assert searcher.rank_tools("bucket", within=["storage"], direct_only=True) == []


def test_search_reads_only_part_of_the_index(searcher):
    """One search fetches fewer index bytes than the index holds."""
    searcher.find_tool("forecast")
    total = sum(p.stat().st_size for p in (searcher.build_dir / "index").iterdir())
    assert 0 < searcher.bytes_read < total


def test_cli_search_prints_ranked_pointers(searcher):
    """`toolcat search` prints the best tool first; --json gives the pointers; an unknown --in exits 1."""
    runner = CliRunner()
    out = runner.invoke(main, ["search", "delete a bucket", "--build", str(searcher.build_dir), "--limit", "3"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0].split()[2] == "storage.bucket.delete"
    out = runner.invoke(main, ["search", "forecast", "--build", str(searcher.build_dir), "--json", "--in", "weather"])
    assert json.loads(out.output)["results"][0]["tool_id"] == "weather.forecast"
    out = runner.invoke(main, ["search", "forecast", "--build", str(searcher.build_dir), "--in", "nowhere"])
    assert out.exit_code == 1
    assert "UNKNOWN_PATH" in out.output


def test_rank_tools_limit_is_the_prefix_of_the_full_ranking(searcher):
    """rank_tools(limit=k) returns exactly the first k of the unlimited ranking, scoped or not."""
    for query, within in (
        ("bucket", None),
        ("weather bucket delete", None),
        ("bucket operation", ["storage"]),
        ("forecast city alerts", None),
    ):
        full = searcher.rank_tools(query, within=within)
        for k in (1, 3, 20):
            assert searcher.rank_tools(query, within=within, limit=k) == full[:k]


def test_identical_ngram_postings_are_shared(searcher):
    """Character n-grams with identical postings (those of 'forecast') decode to one shared object."""
    searcher.scores("tools", "forecast")
    chars = [p for (part, space, _), p in searcher._postings.items() if part == "tools" and space == "chars" and p]
    assert len(chars) >= 3
    assert len({id(p) for p in chars}) < len(chars)


def test_known_words_need_no_chars_shard(searcher):
    """A query of words the catalogue knows reads the meta, its words' shards and doc shards, never a chars shard."""
    fetched = []

    def counting(ref):
        fetched.append(ref["path"])
        return json.loads((searcher.build_dir / ref["path"]).read_bytes())

    fresh = Searcher(searcher.manifest, counting)
    assert fresh.find_tool("delete bucket")["matches"][0]["name"] == "storage.bucket.delete"
    assert fetched
    assert not [p for p in fetched if ".chars." in p]
    fetched.clear()
    fresh.find_tool("bukcet")  # unknown word: its n-grams come from the chars shards
    assert [p for p in fetched if ".chars." in p]

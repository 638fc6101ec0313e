"""Exact names always win and nothing is padded: find_tool, search_tool_by_category and search_nodes answers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support import write_tree

from toolcat.build import build
from toolcat.reader import Catalog
from toolcat.reader.search.searcher import MIN_RELATIVE, MIN_RELEVANCE, Searcher, name_key, name_like

TREE = {
    "_node.yaml": {"title": "Exact", "summary": "exact-name tests"},
    "acct/_node.yaml": {"title": "Accounts", "summary": "Who is signed in"},
    "acct/tools.yaml": {
        "tools": [
            # "me" is a stop word: the ranking sees only "acct get", which every acct.get_* tool has.
            {"id": "acct.get_me", "summary": "The signed-in user's profile", "args_schema": {"type": "object"}},
            *(
                {
                    "id": f"acct.get_{name}",
                    "summary": f"Get the account {name} of a user, with every account detail and setting",
                    "args_schema": {"type": "object"},
                }
                for name in ("settings", "emails", "keys", "teams", "orgs", "limits", "plans")
            ),
        ]
    },
    "mail/_node.yaml": {"title": "Mail", "summary": "Send and read email"},
    "mail/tools.yaml": {
        "tools": [
            {
                "id": "mail.send",
                "summary": "Send an email message to a recipient",
                "args_schema": {"type": "object"},
                "categories": ["acct"],
            },
            {
                "id": "mail.convert_to_pdf",
                "summary": "Render a message as a document",
                "args_schema": {"type": "object"},
            },
            {"id": "mail.archive", "summary": "Archive old messages from the inbox", "args_schema": {"type": "object"}},
        ]
    },
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TREE built once."""
    root = tmp_path_factory.mktemp("exact")
    build(write_tree(root / "src", TREE), root / "build")
    return root / "build"


def _searcher(build_dir: Path) -> Searcher:
    def fetch(ref):
        data = (build_dir / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    return Searcher(fetch(json.loads((build_dir / "catalog.json").read_text())["manifest"]), fetch)


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("file.read", "file.read"),
        ("file_read", "file.read"),  # provider alias
        ("FILE.READ", "file.read"),
        ("File Read", "file.read"),
        ("file-read", "file.read"),
        ("  cal.event.create ", "cal.event.create"),
        ("cal event create", "cal.event.create"),
        ("code-reviewer", "task.code_review"),  # a skill's name
        ("code reviewer", "task.code_review"),
        ("task.code_review", "task.code_review"),
    ],
)
def test_a_tool_named_exactly_comes_first_with_relevance_1(example_build, query, tool_id):
    """An id, a provider alias or a skill name, in any case and with . _ - or spaces, is the first match at 1.0."""
    first = Catalog.open(example_build).find_tool(query)["matches"][0]
    assert {k: first[k] for k in ("name", "relevance", "reason")} == {
        "name": tool_id,
        "relevance": 1.0,
        "reason": "exact name",
    }
    assert first["summary"]  # each hit's one line (issue 35)


def test_an_exact_name_wins_where_the_ranking_would_not_put_it_first(built):
    """acct.get_me ranks low for its own name (a stop word in it), yet the name puts it first, in every spelling."""
    searcher = _searcher(built)
    ranked = [p["tool_id"] for p, _, _ in searcher.rank_tools("acct.get_me", limit=5)]
    assert ranked[0] != "acct.get_me"  # what the ranking alone gives
    for query in ("acct.get_me", "acct_get_me", "ACCT.GET_ME", "acct get me"):
        matches = searcher.find_tool(query)["matches"]
        assert matches[0]["name"] == "acct.get_me", query
        assert matches[0]["relevance"] == 1.0
        assert [m["name"] for m in matches].count("acct.get_me") == 1


def test_a_name_with_a_stop_word_is_found_among_the_hits(built):
    """A spaced name that reads like a sentence is not looked up, but matching a shown hit's name still wins."""
    assert not name_like("mail convert to pdf please now")
    first = _searcher(built).find_tool("mail convert to pdf please now")["matches"]
    assert first[0]["name"] == "mail.convert_to_pdf"
    assert name_key("Mail.Convert-To_PDF") == "mail convert to pdf"


def test_category_search_puts_the_named_tool_first_only_inside_its_scope(built):
    """In scope (home or a category listing it) the named tool leads at 1.0; outside, it is not shown at all."""
    searcher = _searcher(built)
    inside = searcher.search_tool_by_category("mail.send", "acct")  # mail.send is listed under acct
    assert inside["results"][0]["tool_id"] == "mail.send"
    assert inside["results"][0]["confidence"] == 1.0
    home = searcher.search_tool_by_category("acct.get_me", "acct")
    assert home["results"][0]["tool_id"] == "acct.get_me"
    outside = searcher.search_tool_by_category("acct.get_me", "mail")
    assert all(r["tool_id"] != "acct.get_me" for r in outside.get("results", []))


def test_pages_with_an_exact_name_neither_repeat_nor_skip(built):
    """Paging a category search led by the named tool returns every hit exactly once."""
    searcher = _searcher(built)
    everything = searcher.search_tool_by_category("acct.get_me", "acct", limit=50)["results"]
    seen, cursor = [], None
    for _ in range(20):
        page = searcher.search_tool_by_category("acct.get_me", "acct", limit=2, cursor=cursor)
        seen += [r["tool_id"] for r in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [r["tool_id"] for r in everything]
    assert seen[0] == "acct.get_me"


def test_nothing_that_matches_well_is_an_explicit_empty_answer(example_build):
    """Gibberish gets ok, no matches, a hint and a next_action to browse, in the Python API and the search module."""
    searcher = Catalog.open(example_build).searcher()
    answer = searcher.find_tool("xqzzv blorfle")
    assert answer["matches"] == []
    assert answer["hints"]
    assert answer["next_action"] == {"op": "list", "args": {"path": ""}}
    through_catalog = Catalog.open(example_build).find_tool("xqzzv blorfle")
    assert through_catalog["ok"] is True
    assert through_catalog["matches"] == []
    assert through_catalog["hints"]
    assert through_catalog["next_action"] is not None


def test_weak_hits_are_not_padding_the_answer(example_build):
    """Every match shown scores at least MIN_RELEVANCE and MIN_RELATIVE of the best; fewer than limit is fine."""
    searcher = Catalog.open(example_build).searcher()
    for query in ("read the contents of a text file", "zip", "book a meeting room for tomorrow", "weather"):
        matches = searcher.find_tool(query, limit=10)["matches"]
        ranked = searcher.rank_tools(query, limit=11)
        if not ranked:
            assert matches == []
            continue
        floor = max(MIN_RELEVANCE, MIN_RELATIVE * ranked[0][1])
        assert [m["name"] for m in matches] == [p["tool_id"] for p, s, _ in ranked if s >= floor][:10]


def test_search_nodes_with_nothing_found_says_what_to_do(example_build):
    """search_nodes with no result gives a hint and a next_action searching the tools with the same words."""
    answer = Catalog.open(example_build).searcher().search_nodes("xqzzv blorfle")
    assert answer["results"] == []
    assert answer["hints"]
    assert answer["next_action"] == {"op": "search", "args": {"query": "xqzzv blorfle"}}


def test_a_pointer_built_from_the_spec_equals_the_indexed_one(example_build):
    """An exact hit outside the ranked hits gets its pointer from its spec: the same fields as the index doc's."""
    searcher = Catalog.open(example_build).searcher()
    part = searcher._part("tools")
    for doc_id in range(part.n_docs):
        pointer = searcher._doc(part, doc_id)["pointer"]
        assert searcher._spec_pointer(pointer["tool_id"], None) == pointer

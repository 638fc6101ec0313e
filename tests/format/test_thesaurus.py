"""The search thesaurus: tool-domain abbreviations rewritten on both sides, documents and queries."""

from __future__ import annotations

import hashlib
import json

from toolcat.build import build
from toolcat.format.analyzer import ABBREVIATIONS, SYNONYMS, VERB_GROUPS, analyze_words, analyzer_settings
from toolcat.reader.search.searcher import Searcher

TREE = {
    "_node.yaml": {"title": "Code", "summary": "code hosting"},
    "code/_node.yaml": {"title": "Code", "summary": "Code hosting"},
    "code/tools.yaml": {
        "tools": [
            {
                "id": "code.merge_pull_request",
                "summary": "Merge a pull request into its base branch",
                "args_schema": {"type": "object"},
            },
            {
                "id": "code.fork_repository",
                "summary": "Fork a repository into your account",
                "args_schema": {"type": "object"},
            },
            {"id": "code.pr_stats", "summary": "Statistics of merged work", "args_schema": {"type": "object"}},
        ]
        + [{"id": f"code.other{i}", "summary": f"Other tool {i}", "args_schema": {"type": "object"}} for i in range(5)]
    },
}


def _searcher(out):
    def fetch(ref):
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    return Searcher(fetch(json.loads((out / "catalog.json").read_text())["manifest"]), fetch)


def test_abbreviations_become_their_words():
    """'PR' becomes 'pull request' and 'repo'/'repos' become 'repository', as stemmed terms."""
    assert analyze_words("merge my pr in the repo") == ["merg", "pull", "request", "repository"]
    assert analyze_words("list repos") == ["list", "repository"]
    assert analyze_words("pull request repository") == ["pull", "request", "repository"]


def test_the_thesaurus_is_recorded_in_the_index_meta_settings():
    """analyzer_settings() carries the thesaurus table, so a reader in another language can reproduce it."""
    table = analyzer_settings()["thesaurus"]["table"]
    assert table["pr"] == ["pull", "request"]
    assert table == {word: list(terms) for word, terms in sorted(SYNONYMS.items())}
    assert set(ABBREVIATIONS) <= set(table)


def test_verb_groups_rewrite_inflections_when_enabled(monkeypatch):
    """A verb group maps every inflection of its words to the first word's stem (and leaves 2-letter stems)."""
    from toolcat.format import analyzer  # noqa: PLC0415

    monkeypatch.setattr(analyzer, "VERB_GROUPS", (("create", "new", "open", "add", "make"),))
    table = analyzer._synonyms()
    assert {table[analyzer.stem(w)] for w in ("open", "opened", "making", "makes", "adds")} == {("creat",)}
    assert "ad" not in table  # "added", "adding" stem to "ad" ("ad", the advert, is left alone)
    assert VERB_GROUPS == ()  # measured and not kept (docs/search.md, "Thesaurus")


def test_a_query_with_an_abbreviation_finds_the_spelled_out_tool(make_tree, tmp_path):
    """'merge a PR' ranks merge_pull_request first; 'fork my repo' ranks fork_repository first."""
    out = tmp_path / "build"
    build(make_tree(TREE), out, embedder="none")
    searcher = _searcher(out)
    assert searcher.find_tool("merge a PR")["matches"][0]["name"] == "code.merge_pull_request"
    assert searcher.find_tool("fork my repo")["matches"][0]["name"] == "code.fork_repository"

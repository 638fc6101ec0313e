"""Agent-written queries (issue 29): long ones cut with a note, one message for blank ones, hints, a reranker.

Long task descriptions are cut with a note; a blank query gets one message; category hints (``server: X / tool:
Y``) rank that category first without filtering (issue 33); a host's reranker is a pluggable second stage.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat import Catalog
from toolcat.reader.checks import MAX_QUERY_CHARS, check_query
from toolcat.reader.search import rerank, searcher
from toolcat.reader.search.searcher import split_hint

TASK = (
    "You are helping the finance team. Their nightly job writes a CSV export of all invoices, and they want it "
    "kept for the auditors. Upload the file invoices.csv to the reports bucket in object storage. Background: "
    + "the team has used this export for years and its columns never change. "
    * 300
)


@pytest.fixture(scope="module")
def catalog(example_build: Path) -> Catalog:
    """The example catalogue (lexical, as the suite builds it), opened as an agent host would."""
    return Catalog.open(example_build)


def test_a_long_task_description_is_cut_and_answered_with_a_note(catalog: Catalog) -> None:
    """An 18 KB query is answered (not refused), ranked on its first 1,200 characters, and the answer says so."""
    assert len(TASK) > 18_000
    answer = catalog.find_tool(TASK)
    assert answer["ok"] is True
    assert answer["matches"][0]["name"].startswith("storage.")
    assert any("cut to its first 1,200 characters" in hint for hint in answer["hints"])


@pytest.mark.parametrize(
    ("operation", "name"),
    [
        (lambda c, q: c.find_tool(q), "purpose"),
        (lambda c, q: c.search_nodes(q), "query"),
        (lambda c, q: c.search_tool_by_category(q, ""), "query"),
        (lambda c, q: c.tool_help("root", query=q), "query"),
    ],
)
def test_every_search_takes_long_queries_and_gives_one_helpful_message_for_blank_ones(
    catalog: Catalog, operation, name: str
) -> None:
    """Each dialect's search answers a long query, and a blank one gets BAD_REQUEST once, with a phrasing hint."""
    assert operation(catalog, TASK)["ok"] is True
    blank = operation(catalog, "   ")
    assert blank["ok"] is False
    assert blank["error"]["code"] == "BAD_REQUEST"
    assert blank["error"]["message"] == f"'{name}' must be a non-empty string, got '   '"
    assert any("the action, the object and the domain" in hint for hint in blank["error"]["hints"])


def test_a_query_is_trimmed_as_the_typescript_reader_trims_it() -> None:
    """A byte order mark and U+3000 go (JavaScript's trim drops them); U+001C and U+0085 stay (it keeps them).

    ``str.strip()`` did the opposite for each: a pasted query read two texts in the two readers, and a category page's
    cursor (a digest of the text) differed (``tests/js/test_js_parity.py``, odd characters).
    """
    assert check_query("\ufeff\u3000read a file\u2028") == "read a file"
    assert check_query("\x1cread a file\x85") == "\x1cread a file\x85"
    assert split_hint("\ufeffserver: files\u3000\ntool: read a file")[1] == "files"


def test_check_query_cuts_at_a_word_boundary() -> None:
    """A query over the limit keeps whole words and at most MAX_QUERY_CHARS characters."""
    text = "word " * 1000
    cut = check_query(text)
    assert len(cut) <= MAX_QUERY_CHARS
    assert cut.endswith("word")
    assert check_query("  read a file  ") == "read a file"


def test_split_hint_reads_server_and_tool_labels() -> None:
    """``server: X / tool: Y`` gives (Y, X); other labels are dropped; a plain query is untouched."""
    assert split_hint("server: github / tool: create issue") == ("create issue", "github")
    assert split_hint("category: storage; action: upload a file") == ("upload a file", "storage")
    assert split_hint("read a file, then summarise it / quickly") == ("read a file, then summarise it / quickly", None)


def test_a_hint_on_one_line_ends_at_the_next_label() -> None:
    """``server: X tool: Y`` on one line gives (Y, X), not a hint that swallows the tool's words.

    A hint over HINT_MAX_CHARS is cut at a word and the rest kept as words (it was cut mid-word at 80).
    """
    assert split_hint("server: github, tool: create issue") == ("create issue", "github")
    assert split_hint("server: web browser or HTML creation tool: navigate to a webpage") == (
        "navigate to a webpage",
        "web browser or HTML creation",
    )
    assert split_hint("app=slack action=post a message") == ("post a message", "slack")
    assert split_hint("server: tool: read") == ("read", None)
    long = "server: " + "storage bucket object " * 6 + "tool: upload a report"
    words, hint = split_hint(long)
    assert hint is not None
    assert len(hint) <= searcher.HINT_MAX_CHARS
    assert hint.endswith(("storage", "bucket", "object"))
    assert f"{hint} {words}".split() == ("storage bucket object " * 6 + "upload a report").split()


def test_a_category_hint_ranks_that_category_first(catalog: Catalog) -> None:
    """``category: calendar; tool: cancel`` puts the calendar's cancel tool first (a boost: nothing is filtered)."""
    hinted = catalog.find_tool("category: calendar; tool: cancel it")["matches"]
    assert hinted
    assert hinted[0]["name"] == "cal.event.delete"
    plain = {m["name"]: m["relevance"] for m in catalog.find_tool("cancel it calendar")["matches"]}
    assert hinted[0]["relevance"] == pytest.approx(min(1.0, plain["cal.event.delete"] + searcher.HINT_BOOST), abs=1e-4)


def test_a_hint_naming_no_category_adds_no_label_noise(catalog: Catalog) -> None:
    """A hint that names no node ranks the words without the labels, as the plain words would rank."""
    hinted = catalog.find_tool("service: qzxv / tool: read a text file")["matches"]
    plain = catalog.find_tool("read a text file qzxv")["matches"]
    assert [m["name"] for m in hinted] == [m["name"] for m in plain]


def test_a_reranker_reorders_the_top_and_says_so(catalog: Catalog) -> None:
    """A host's reranker sees the top hits' texts; its favourite comes first with reason 'reranked'."""
    seen: list[int] = []

    def prefers_stat(query: str, texts: list[str]) -> list[float]:
        seen.append(len(texts))
        return [1.0 if "stat" in text else 0.0 for text in texts]

    before = catalog.find_tool("read a text file")["matches"]
    rerank.set_reranker(prefers_stat)
    try:
        after = catalog.find_tool("read a text file")["matches"]
    finally:
        rerank.set_reranker(None)
    assert before[0]["name"] == "file.read"
    assert after[0]["name"] == "file.stat"
    assert after[0]["reason"].endswith("reranked")
    assert seen
    assert seen[0] <= rerank.DEPTH
    assert catalog.find_tool("read a text file")["matches"] == before


@pytest.mark.parametrize(
    "broken",
    [
        lambda _query, _texts: 1 / 0,
        lambda _query, _texts: [0.5],
        lambda _query, texts: [float("nan")] * len(texts),
    ],
)
def test_a_failing_reranker_keeps_the_first_stage(catalog: Catalog, broken) -> None:
    """A reranker that raises or answers the wrong scores is skipped: the answer is the first stage's."""
    before = catalog.find_tool("read a text file")
    rerank.set_reranker(broken)
    try:
        after = catalog.find_tool("read a text file")
    finally:
        rerank.set_reranker(None)
    assert after == before

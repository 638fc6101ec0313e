"""The index's word filter (format toolcat-index-2): an unknown query word costs no round of its own, never an answer.

And its n-gram filter (toolcat-index-3): an unknown word's n-grams the index lacks read no chars shard.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from support import REPO
from test_reader_http import StaticServer

from toolcat.build import build
from toolcat.format.index_format import INDEX_FORMAT, WordFilter, word_filter
from toolcat.reader import Catalog

#: "bukcet" and "uplaod" are in no tool's text: their n-grams match "bucket" and "upload".
QUERY = "uplaod a report to a bukcet"


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory):
    """The example catalogue built lexically with tiny index shards, served over HTTP."""
    from toolcat.build.contributors.index import shards  # noqa: PLC0415 - patched for this build only

    tmp = tmp_path_factory.mktemp("filter")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shards, "TERM_SHARD_BYTES", 3000)
        patch.setattr(shards, "DOC_SHARD_SIZE", 4)
        build(REPO / "catalog_src", tmp / "build", embedder="none")
    server = StaticServer(tmp / "build")
    yield server, tmp
    server.close()


def _meta(out: Path) -> dict:
    manifest_ref = json.loads((out / "catalog.json").read_text())["manifest"]
    manifest = json.loads((out / manifest_ref["path"]).read_text())
    return json.loads((out / manifest["index"]["path"]).read_text())


def _cold(server: StaticServer, cache: Path, query: str = QUERY) -> tuple[dict, int]:
    catalog = Catalog.open(server.url, cache_dir=cache)
    catalog.list()
    before = catalog.stats()["round_trips"]
    out = catalog.find_tool(query)
    return out, catalog.stats()["round_trips"] - before


def test_the_filter_holds_every_word_and_few_others(sharded):
    """Every word of each part's words space passes its filter; of 5,000 words it lacks, under 4% pass (about 2%)."""
    server, _ = sharded
    meta = _meta(server.root)
    assert meta["format"] == INDEX_FORMAT
    rng = random.Random(7)  # noqa: S311 - seeded test words
    for part in ("tools", "nodes"):
        space = next(s for s in meta[part]["spaces"] if s["name"] == "words")
        held = WordFilter(space["filter"])
        words = set()
        pages = space.get("term_pages")
        paths = (
            [shard["ref"]["path"] for shard in space["shards"]]
            if pages is None
            else [f"{pages['folder']}/{pages['prefix']}{i}.json" for i in range(pages["files"])]
        )
        for path in paths:
            words |= set(json.loads((server.root / path).read_text())["terms"])
        assert words
        assert all(held.may_hold(word) for word in words)
        others = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(5000)} - words
        passed = sum(held.may_hold(word) for word in others)
        assert passed < 0.04 * len(others), (part, passed, len(others))


def test_a_word_the_index_lacks_costs_no_round_of_its_own(sharded):
    """A query with misspelt words is answered in three rounds (meta; term and n-gram shards; doc shards)."""
    server, tmp = sharded
    out, rounds = _cold(server, tmp / "cache-a")
    assert out["ok"], out
    assert out["matches"], out
    assert rounds == 3
    one_by_one = Catalog.open(server.url, cache_dir=tmp / "cache-s", max_parallel=1)
    assert one_by_one.find_tool(QUERY) == out


def test_a_false_positive_costs_a_round_never_an_answer(sharded, monkeypatch):
    """A filter that lets every word through (all false positives) gives the same answer, a round later."""
    server, tmp = sharded
    out, rounds = _cold(server, tmp / "cache-b")
    monkeypatch.setattr(WordFilter, "may_hold", lambda *_: True)
    late, late_rounds = _cold(server, tmp / "cache-c")
    assert late == out
    assert late_rounds == rounds + 1


def test_an_index_of_another_format_asks_for_a_rebuild(sharded, monkeypatch):
    """A build whose index meta is of another format is answered UNAVAILABLE, saying to rebuild, not a traceback."""
    from toolcat.reader.search import ranking  # noqa: PLC0415 - the reader's expected format, patched

    server, tmp = sharded
    monkeypatch.setattr(ranking, "INDEX_FORMAT", "toolcat-index-99")
    monkeypatch.setattr(ranking, "INDEX_FORMATS", ("toolcat-index-99",))
    out = Catalog.open(server.url, cache_dir=tmp / "cache-d").find_tool(QUERY)
    assert out["ok"] is False
    assert out["error"]["code"] == "UNAVAILABLE", out
    assert "rebuild" in out["error"]["message"]
    assert out["error"]["details"] == {"index": INDEX_FORMAT, "reader": "toolcat-index-99"}


def test_the_filter_is_deterministic_and_sized_by_its_words():
    """The same words give the same bytes in any order; 8 bits a word, 6 probes; no word gives an empty filter."""
    words = [f"word{i}" for i in range(1000)]
    assert word_filter(words) == word_filter(reversed(words))
    spec = word_filter(words)
    assert (spec["bits"], spec["hashes"]) == (8000, 6)
    empty = WordFilter(word_filter([]))
    assert not empty.may_hold("anything")


def test_a_damaged_filter_is_refused():
    """A filter whose size is not its data's, or of another kind, raises ValueError (the reader's INTEGRITY)."""
    spec = word_filter(["alpha", "beta"])
    with pytest.raises(ValueError, match="bits"):
        WordFilter({**spec, "bits": spec["bits"] + 8})
    with pytest.raises(ValueError, match="kind"):
        WordFilter({**spec, "kind": "cuckoo"})


#: Misspelt and unknown words: most of their n-grams are in no tool's text.
UNKNOWN = "uplaod a zyxwv report to a bukcet"


def _paged_build(out: Path, *, old: bool = False) -> None:
    """The example built lexically with tiny term shards in paged tables; ``old``: as ``toolcat-index-2`` wrote it."""
    from toolcat.build.contributors.index import shards, texts  # noqa: PLC0415 - patched for this build only

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shards, "TERM_SHARD_BYTES", 3000)
        patch.setattr(shards, "PAGES_FROM", 4)
        patch.setattr(shards, "TERM_PAGE_SIZE", 4)
        if old:
            patch.setattr(texts, "INDEX_FORMAT", "toolcat-index-2")
            patch.setattr(texts, "filtered", lambda name, _space: name == "words")
        build(REPO / "catalog_src", out, embedder="none")


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory):
    """The paged example (``toolcat-index-4``) and the same sources as ``toolcat-index-2`` wrote them, served."""
    tmp = tmp_path_factory.mktemp("grams")
    _paged_build(tmp / "new")
    _paged_build(tmp / "old", old=True)
    new, old = StaticServer(tmp / "new"), StaticServer(tmp / "old")
    yield new, old, tmp
    new.close()
    old.close()


def _requests(server: StaticServer, cache: Path, query: str) -> tuple[dict, dict]:
    catalog = Catalog.open(server.url, cache_dir=cache)
    catalog.list()
    before = catalog.stats()
    out = catalog.find_tool(query)
    after = catalog.stats()
    return out, {key: after[key] - before[key] for key in ("requests", "round_trips", "bytes_downloaded")}


def test_a_paged_chars_space_carries_a_filter_of_its_ngrams(paged):
    """The paged chars space's filter passes every n-gram its shards hold; an unpaged one (nodes) carries none."""
    server, _, _ = paged
    meta = _meta(server.root)
    assert meta["format"] == INDEX_FORMAT == "toolcat-index-4"
    chars = next(s for s in meta["tools"]["spaces"] if s["name"] == "chars")
    pages = chars["term_pages"]
    grams: set[str] = set()
    for i in range(pages["files"]):
        grams |= set(json.loads((server.root / f"{pages['folder']}/{pages['prefix']}{i}.json").read_text())["terms"])
    held = WordFilter(chars["filter"])
    assert len(grams) == chars["terms"]
    assert all(held.may_hold(gram) for gram in grams)
    assert not any("filter" in s for s in meta["nodes"]["spaces"] if s["name"] == "chars" and "term_pages" not in s)


def test_an_unknown_words_absent_ngrams_read_no_shard(paged):
    """With the n-gram filter, unknown words fetch fewer chars shards, in no more rounds, for the same answer."""
    from toolcat.reader.search import ranking  # noqa: PLC0415 - the filter switched off, to compare

    server, _, tmp = paged
    out, cost = _requests(server, tmp / "cache-g1", UNKNOWN)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking._Part, "may_hold_gram", lambda *_: True)
        unfiltered, unfiltered_cost = _requests(server, tmp / "cache-g2", UNKNOWN)
    assert out["ok"], out
    assert out["matches"], out
    assert out == unfiltered
    # a word the words filter lets through that the index lacks ("zyxwv" here) reads its n-grams a round later:
    # with every one of them filtered out that round is gone too
    assert cost["round_trips"] == 3 <= unfiltered_cost["round_trips"]
    assert cost["requests"] < unfiltered_cost["requests"], (cost, unfiltered_cost)
    assert cost["bytes_downloaded"] < unfiltered_cost["bytes_downloaded"], (cost, unfiltered_cost)


def test_a_toolcat_index_2_build_is_still_read_with_the_same_answers(paged):
    """A build without the n-gram filter (format toolcat-index-2) is read, answering as the new format does."""
    server, old, tmp = paged
    assert _meta(old.root)["format"] == "toolcat-index-2"
    assert not any("filter" in s for s in _meta(old.root)["tools"]["spaces"] if s["name"] == "chars")
    for i, query in enumerate([UNKNOWN, QUERY, "upload a report to a bucket"]):
        new_out, _ = _requests(server, tmp / f"cache-n{i}", query)
        old_out, _ = _requests(old, tmp / f"cache-o{i}", query)
        assert new_out["ok"], new_out
        assert old_out == new_out, query


def test_verify_checks_each_filter_against_its_terms(paged):
    """`toolcat verify` passes the paged build, and reports a chars filter that lacks a held n-gram."""
    import base64  # noqa: PLC0415 - this test only

    from toolcat.build.verify import VerifyReport, _check_filters, verify_build  # noqa: PLC0415 - build-side check

    server, _, _ = paged
    assert verify_build(server.root).ok
    meta = _meta(server.root)
    chars = next(s for s in meta["tools"]["spaces"] if s["name"] == "chars")
    pages = chars["term_pages"]
    paths = [f"{pages['folder']}/{pages['prefix']}{i}.json" for i in range(pages["files"])]
    terms = {path: json.loads((server.root / path).read_text())["terms"] for path in paths}
    report = VerifyReport()
    _check_filters(meta, terms, report)
    assert report.ok, report.problems
    empty = base64.b64encode(bytes(len(base64.b64decode(chars["filter"]["data"])))).decode()
    chars["filter"] = {**chars["filter"], "data": empty}
    _check_filters(meta, terms, report)
    assert len(report.problems) == 1, report.problems
    assert "tools.chars filter" in report.problems[0]
    assert "rebuild" in report.problems[0]

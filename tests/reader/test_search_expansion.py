"""The learned term expansion (issue 33; ``--embedder terms``): written by the build, summed by the stdlib reader."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import EXAMPLE_SRC

from toolcat.build import build
from toolcat.build.contributors.index import terms
from toolcat.reader import Catalog
from toolcat.reader.search import expansion
from toolcat.reader.search.ranking import query_weights
from toolcat.reader.search.searcher import Searcher


def _read(out: Path, ref: dict[str, Any]) -> Any:
    return json.loads((out / ref["path"]).read_bytes())


def _index_meta(out: Path) -> dict[str, Any]:
    manifest = _read(out, json.loads((out / "catalog.json").read_text())["manifest"])
    meta: dict[str, Any] = _read(out, manifest["index"])
    return meta


def _searcher(out: Path, patch: Any = None) -> Searcher:
    def fetch(ref: dict[str, Any]) -> Any:
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        obj = json.loads(data)
        if patch is not None and obj.get("artifact") == "index_meta":
            patch(obj)
        return obj

    return Searcher(fetch(json.loads((out / "catalog.json").read_text())["manifest"]), fetch)


def _shards(out: Path, expand: dict[str, Any]) -> list[dict[str, Any]]:
    return [_read(out, shard["ref"]) for shard in expand["shards"]]


def test_a_terms_build_writes_the_expansion_and_no_vectors(terms_tier_build: Path) -> None:
    """--embedder terms: the index's tools part carries tools.expand with its model, and the manifest no vectors."""
    manifest = _read(terms_tier_build, json.loads((terms_tier_build / "catalog.json").read_text())["manifest"])
    assert "vectors" not in manifest
    expand = _index_meta(terms_tier_build)["tools"]["expand"]
    assert expand["format"] == "toolcat-expand-1"
    assert expand["model"]["name"] == terms.MODEL_NAME
    assert expand["model"]["sha256"] == hashlib.sha256(terms.MODEL_FILE.read_bytes()).hexdigest()
    assert (expand["denominator"], expand["weight"], expand["floor"]) == (
        terms.DENOMINATOR,
        terms.WEIGHT,
        terms.FLOOR,
    )
    assert "expand" not in _index_meta(terms_tier_build)["nodes"]


def test_every_stored_weight_is_an_integer_over_the_denominator(terms_tier_build: Path) -> None:
    """Postings: increasing doc ids in range, integer weights in (0, denominator], at most MAX_POSTINGS a term."""
    meta = _index_meta(terms_tier_build)
    expand, n_docs = meta["tools"]["expand"], meta["tools"]["n_docs"]
    seen = 0
    for shard in _shards(terms_tier_build, expand):
        assert shard["space"] == "expand"
        for entry in shard["terms"].values():
            assert entry["idf"] > 0
            assert len(entry["docs"]) == len(entry["w"]) <= terms.MAX_POSTINGS
            ids = [sum(entry["docs"][: i + 1]) for i in range(len(entry["docs"]))]
            assert ids == sorted(set(ids))
            assert ids[0] >= 0
            assert ids[-1] < n_docs
            assert all(isinstance(w, int) and 0 < w <= expand["denominator"] for w in entry["w"])
            seen += len(ids)
    assert seen >= n_docs  # every tool has postings


def test_the_expansion_score_is_the_documented_sum(terms_tier_build: Path) -> None:
    """E(d) = sum over the query's terms of q_t * w / denominator, q the lexical weighting with u for the idf."""
    searcher = _searcher(terms_tier_build)
    query = "store my holiday pictures online and share them"
    got = expansion.scores(searcher._expand_terms("tools", query), 1000.0)
    expand = _index_meta(terms_tier_build)["tools"]["expand"]
    entries = {t: e for shard in _shards(terms_tier_build, expand) for t, e in shard["terms"].items()}
    from toolcat.format.analyzer import analyze_words  # noqa: PLC0415 - the same analyzer, stated

    tokens = analyze_words(query)
    q = query_weights(tokens, {t: entries[t]["idf"] for t in tokens if t in entries})
    assert q, "some query term must have an expansion entry"
    expected: dict[int, float] = {}
    for term, weight in q.items():
        doc = 0
        for gap, w in zip(entries[term]["docs"], entries[term]["w"], strict=True):
            doc += gap
            expected[doc] = expected.get(doc, 0.0) + weight * (w / expand["denominator"])
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[d], expected[d], abs_tol=1e-12) for d in got)


def test_fuse_mixes_the_two_rankings_as_documented() -> None:
    """(1 - a) * lexical + a * E, E under the floor counts 0, ties by doc id, ~expanded when E outweighs words."""
    lexical = [(0, 0.5, ["bucket"]), (2, 0.2, ["file"])]
    expanded = {0: 0.2, 1: 0.6, 2: 0.04, 3: 0.72}
    fused = expansion.fuse(lexical, expanded, 10, (0.5, 0.05, 50, 1000.0))
    assert [(doc, round(score, 9)) for doc, score, _ in fused] == [(3, 0.36), (0, 0.35), (1, 0.3), (2, 0.1)]
    assert fused[0][2] == [expansion.EXPANDED_TERM]
    assert fused[1][2] == ["bucket"]
    assert fused[3][2] == ["file"]  # 0.04 is under the floor: no expansion part
    only_two = expansion.fuse(lexical, expanded, 10, (0.5, 0.05, 1, 1000.0))
    assert [doc for doc, _, _ in only_two] == [3, 0, 2]  # one expansion candidate joins the lexical ones


def test_a_request_sharing_no_word_with_its_tool_finds_it(terms_tier_build: Path) -> None:
    """Related words bring in a tool no query word matches ("purge" finds delete tools), and the reason says so."""
    catalog = Catalog.open(terms_tier_build)
    found = catalog.find_tool("purge a container")["matches"]
    # find_tool shows the ranking's reason on its top hit only: the ranking says which hits the expansion brought
    hits = _searcher(terms_tier_build).rank_tools("purge a container", limit=5)
    by_expansion = [p["tool_id"] for p, _, terms in hits if terms == [expansion.EXPANDED_TERM]]  # no word matched
    assert any(".delete" in name for name in by_expansion), hits
    assert set(by_expansion) <= {m["name"] for m in found}, found
    lexical = _searcher(terms_tier_build, lambda meta: meta["tools"].pop("expand"))
    assert not set(by_expansion) & {m["name"] for m in lexical.find_tool("purge a container")["matches"]}
    assert catalog.stats()["search_tier"] == f"expanded ({terms.MODEL_NAME})"


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: e.pop("weight"),
        lambda e: e.update(weight="heavy"),
        lambda e: e.update(denominator=0),
        lambda e: e.update(weight=7),
    ],
)
def test_a_malformed_expand_entry_is_an_integrity_envelope(terms_tier_build: Path, damage: Any) -> None:
    """A tools.expand entry a build did not write answers INTEGRITY, never a traceback."""
    searcher = _searcher(terms_tier_build, lambda meta: damage(meta["tools"]["expand"]))
    answer = searcher.find_tool("upload a file to a bucket")
    assert answer["error"]["code"] == "INTEGRITY", answer


def test_the_reader_sums_the_expansion_without_numpy(terms_tier_build: Path) -> None:
    """A find_tool on the default tier imports neither numpy nor any model runtime (stdlib reader)."""
    code = (
        "import sys; from toolcat.reader import Catalog;"
        f"c = Catalog.open({str(terms_tier_build)!r});"
        "m = c.find_tool('store my holiday pictures online')['matches'];"
        "assert m, m;"
        "bad = [x for x in ('numpy', 'onnxruntime', 'torch') if x in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_two_builds_write_the_same_expansion(terms_tier_build: Path, tmp_path: Path) -> None:
    """Reproducible: a second build of the same sources writes the same index meta (and so the same shards)."""
    build(EXAMPLE_SRC, tmp_path / "again", embedder="terms")
    assert _index_meta(tmp_path / "again") == _index_meta(terms_tier_build)


def test_a_category_hint_ranks_and_never_filters(example_build: Path) -> None:
    """``server: X`` names the wrong node: the right tool is still found; the named node's tools gain a little."""
    catalog = Catalog.open(example_build)
    wrong = catalog.find_tool("server: files / tool: create a storage bucket")
    assert "storage.create_bucket" in [m["name"] for m in wrong["matches"]], wrong
    plain = catalog.find_tool("create a storage bucket files")
    hinted = {m["name"]: m["relevance"] for m in wrong["matches"]}
    for match in plain["matches"]:
        if match["name"] in hinted and match["name"].startswith("file."):
            assert hinted[match["name"]] >= match["relevance"]

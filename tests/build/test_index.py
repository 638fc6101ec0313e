"""The index contributor: artifacts valid against their schemas, deterministic, sharded, scoped by ranges."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from support import REPO

from toolcat.build import build
from toolcat.build.contributors.index.shards import TERM_SHARD_BYTES

SCHEMAS = REPO / "compiler" / "format" / "schemas"
TREE = {
    "_node.yaml": {"title": "Index", "summary": "index tests"},
    "a/tools.yaml": {
        "tools": [
            {"id": f"a.tool{i}", "summary": f"Alpha tool {i} reads widgets", "args_schema": {"type": "object"}}
            for i in range(40)
        ]
    },
    "a/deep/tools.yaml": {
        "tools": [{"id": "a.deep.thing", "summary": "A deep thing", "args_schema": {"type": "object"}}]
    },
    "b/tools.yaml": {
        "tools": [
            {"id": "b.extra", "summary": "Listed in a too", "categories": ["a/deep"], "args_schema": {"type": "object"}}
        ]
    },
}


def _load(out: Path, ref: dict) -> dict:
    return json.loads((out / ref["path"]).read_bytes())


def _build(make_tree, tmp_path, name="build") -> Path:
    out = tmp_path / name
    build(make_tree(TREE), out)
    return out


def _manifest(out: Path) -> dict:
    return _load(out, json.loads((out / "catalog.json").read_text())["manifest"])


def test_index_artifacts_match_their_schemas(make_tree, tmp_path):
    """The meta, every term shard and every doc shard validate against compiler/format/schemas/index_*.json."""
    out = _build(make_tree, tmp_path)
    meta = _load(out, _manifest(out)["index"])
    jsonschema.validate(meta, json.loads((SCHEMAS / "index_meta.json").read_text()))
    terms_schema = json.loads((SCHEMAS / "index_terms.json").read_text())
    docs_schema = json.loads((SCHEMAS / "index_docs.json").read_text())
    for part in ("tools", "nodes"):
        for space in meta[part]["spaces"]:
            for shard in space["shards"]:
                jsonschema.validate(_load(out, shard["ref"]), terms_schema)
        for shard in meta[part]["doc_shards"]:
            jsonschema.validate(_load(out, shard["ref"]), docs_schema)
    assert meta["analyzer"]["vectorizer"] == {"sublinear_tf": True, "norm": "l2", "smooth_idf": True, "use_idf": True}


def test_term_shards_cover_sorted_disjoint_ranges(make_tree, tmp_path):
    """Each space's shards hold sorted, non-overlapping term ranges, and each shard stays near the size budget."""
    out = _build(make_tree, tmp_path)
    meta = _load(out, _manifest(out)["index"])
    for space in meta["tools"]["spaces"]:
        previous_last = ""
        for shard in space["shards"]:
            terms = sorted(_load(out, shard["ref"])["terms"])
            assert terms[0] == shard["first"]
            assert terms[-1] == shard["last"]
            assert shard["first"] > previous_last
            previous_last = shard["last"]
            assert shard["ref"]["bytes"] < 3 * TERM_SHARD_BYTES


def test_node_entries_hold_contiguous_ranges_and_dag_extras(make_tree, tmp_path):
    """Node a covers its 41 home tools as one range plus b.extra (listed via categories) as an extra id."""
    out = _build(make_tree, tmp_path)
    meta = _load(out, _manifest(out)["index"])
    entries = [d for s in meta["nodes"]["doc_shards"] for d in _load(out, s["ref"])["docs"]]
    by_path = {tuple(e["path"]): e for e in entries}
    low, high = by_path[("a",)]["range"]
    assert high - low == 41
    assert by_path[("a",)]["direct"] == 40
    tool_docs = [d["pointer"]["tool_id"] for s in meta["tools"]["doc_shards"] for d in _load(out, s["ref"])["docs"]]
    assert [tool_docs[i] for i in by_path[("a", "deep")]["extra"]] == ["b.extra"]
    assert [tool_docs[i] for i in by_path[("a", "deep")]["extra_direct"]] == ["b.extra"]


def test_index_is_byte_identical_across_builds(make_tree, tmp_path):
    """Two builds of the same sources write the same index files."""
    first = _build(make_tree, tmp_path, "one")
    second = _build(make_tree, tmp_path, "two")
    files = sorted(p.name for p in (first / "index").iterdir())
    assert files == sorted(p.name for p in (second / "index").iterdir())
    assert _manifest(first)["index"] == _manifest(second)["index"]


def test_empty_catalogue_builds_an_empty_index(make_tree, tmp_path):
    """A catalogue with no tools still builds, with zero tool docs."""
    out = tmp_path / "empty"
    build(make_tree({"_node.yaml": {"title": "Empty", "summary": "nothing"}}), out)
    meta = _load(out, _manifest(out)["index"])
    assert meta["tools"]["n_docs"] == 0


def test_word_entries_bundle_exactly_their_own_ngrams(make_tree, tmp_path):
    """Each word carries every n-gram of itself that the chars space has, with the chars space's very entry."""
    from toolcat.format.analyzer import word_ngrams  # noqa: PLC0415 - the reader's own n-gram rule

    out = _build(make_tree, tmp_path)
    meta = _load(out, _manifest(out)["index"])
    spaces = {s["name"]: s for s in meta["tools"]["spaces"]}
    words = {t: e for sh in spaces["words"]["shards"] for t, e in _load(out, sh["ref"])["terms"].items()}
    chars = {t: e for sh in spaces["chars"]["shards"] for t, e in _load(out, sh["ref"])["terms"].items()}
    assert meta["tools"]["bundles"] is True
    bundled = 0
    for word, entry in words.items():
        bundle = entry.get("chars", {})
        assert set(bundle) == {g for g in word_ngrams(word) if g in chars}, word
        for gram, sub in bundle.items():
            resolved = bundle[sub["same"]] if "same" in sub else sub
            assert resolved == chars[gram], (word, gram)
            bundled += 1
    assert bundled > 0


def test_identical_documents_keep_their_ngrams(make_tree, tmp_path):
    """120 tools with the same text: max_df would drop every n-gram, so the chars space keeps them all (max_df 1)."""
    letters = "abcdefghijklmnopqrstuvwxyz"  # one-letter id parts have no 4-gram, so every n-gram is shared
    tools = [
        {"id": f"same.{a}.{b}", "summary": "Identical widget reader", "args_schema": {"type": "object"}}
        for a in letters[:12]
        for b in letters[:10]
    ]
    out = tmp_path / "same"
    build(make_tree({"_node.yaml": {"title": "Same", "summary": "same"}, "same/tools.yaml": {"tools": tools}}), out)
    spaces = {s["name"]: s for s in _load(out, _manifest(out)["index"])["tools"]["spaces"]}
    assert spaces["chars"]["max_df"] == 1.0
    assert spaces["chars"]["terms"] > 0

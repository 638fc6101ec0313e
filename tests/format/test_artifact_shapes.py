"""A file whose hash matches but whose shape is not what a build writes is an INTEGRITY envelope naming it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolcat import Catalog


def _ref(root: Path, rel: str) -> dict[str, Any]:
    data = (root / rel).read_bytes()
    return {"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def _tamper_lookup(build: Path, value: Any) -> str:
    """Replace the lookup bucket with ``value`` and re-sign the manifest and catalog.json, as a hostile host can."""
    entry = json.loads((build / "catalog.json").read_text())
    manifest_rel = entry["manifest"]["path"]
    manifest = json.loads((build / manifest_rel).read_text())
    bucket_rel = manifest["lookup"]["refs"][0]["path"]
    (build / bucket_rel).write_text(json.dumps(value))
    manifest["lookup"]["refs"][0] = _ref(build, bucket_rel)
    (build / manifest_rel).write_text(json.dumps(manifest))
    entry["manifest"] = _ref(build, manifest_rel)
    for version in entry.get("versions", []):
        if version.get("registry_version") == entry["registry_version"]:
            version["manifest"] = entry["manifest"]
    (build / "catalog.json").write_text(json.dumps(entry))
    return bucket_rel


@pytest.mark.parametrize(
    "value",
    [
        [],
        None,
        {"artifact": "lookup", "bucket": 0, "buckets": 1, "entries": []},
        {"artifact": "lookup", "entries": {"x": 1}},
    ],
)
def test_wrong_shaped_lookup_is_integrity_in_every_dialect(example_build: Path, tmp_path: Path, value: Any) -> None:
    """describe, exec and help over a lookup bucket of the wrong shape answer INTEGRITY with the file's path."""
    build = tmp_path / "build"
    shutil.copytree(example_build, build)
    bucket = _tamper_lookup(build, value)
    cat = Catalog.open(build)
    for answer in (
        cat.tool_describe("file.read"),
        cat.tool_exec("file.read", {"path": "a"}),
        cat.expand_tool("file.read"),
    ):
        assert answer["ok"] is False, answer
        assert answer["error"]["code"] == "INTEGRITY", answer
        assert bucket in answer["error"]["message"]

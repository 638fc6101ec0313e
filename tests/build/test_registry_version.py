"""registry_version names the content: the hash of the manifest, which references every published file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from support import write_tree

from toolcat.build import build
from toolcat.build.plan import registry_version
from toolcat.format.canonical import dumps, sha256
from toolcat.reader import Catalog


def small_tree() -> dict[str, Any]:
    """Two nodes, two tools."""
    schema = {"type": "object", "properties": {"path": {"type": "string", "description": "Path."}}}
    return {
        "_node.yaml": {"title": "Small", "summary": "A small catalogue."},
        "files/tools.yaml": {
            "tools": [
                {"id": "file.read", "summary": "Read a file.", "args_schema": schema},
                {"id": "file.stat", "summary": "Size and times of a file.", "args_schema": schema},
            ]
        },
        "time/tools.yaml": {"tools": [{"id": "time.now", "summary": "The time.", "args_schema": {"type": "object"}}]},
    }


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a build, except the compiler's private incremental state."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".toolcat-state.json"
    }


def _manifest(out: Path) -> dict[str, Any]:
    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    return json.loads((out / entry["manifest"]["path"]).read_bytes())


def _extra_tier(catalog: Any, artifacts: Any, specs: Any) -> None:
    """A stand-in for the semantic tier: one more artifact, referenced from the manifest, same sources."""
    del catalog
    artifacts.manifest["vectors"] = {"ref": artifacts.add_json("vectors", "meta", {"ids": sorted(specs)})}


def test_registry_version_is_the_hash_of_the_manifest_without_its_name(tmp_path: Path) -> None:
    """The published registry_version is sha256 (16 hex) of the manifest's canonical bytes minus that field."""
    out = tmp_path / "build"
    result = build(write_tree(tmp_path / "src", small_tree()), out)
    manifest = _manifest(out)
    unnamed = {k: v for k, v in manifest.items() if k != "registry_version"}
    assert manifest["registry_version"] == result.registry_version == sha256(dumps(unnamed))[:16]
    assert registry_version(manifest) == result.registry_version


def test_any_referenced_file_changes_the_version() -> None:
    """Changing one ref's hash anywhere in the manifest gives another registry_version; the old name is ignored."""
    manifest = {"artifact": "manifest", "index": {"meta": {"path": "index/meta.a.json", "sha256": "a" * 64}}}
    changed = {**manifest, "index": {"meta": {"path": "index/meta.b.json", "sha256": "b" * 64}}}
    assert registry_version(manifest) != registry_version(changed)
    assert registry_version({**manifest, "registry_version": "anything"}) == registry_version(manifest)


def test_an_extra_tier_over_the_same_sources_has_its_own_version(tmp_path: Path) -> None:
    """Two builds of the same sources that publish different files (an added tier) get different versions."""
    src = write_tree(tmp_path / "src", small_tree())
    plain = build(src, tmp_path / "plain")
    tiered = build(src, tmp_path / "tiered", extra=[_extra_tier])
    assert plain.registry_version != tiered.registry_version
    assert "vectors" in _manifest(tmp_path / "tiered")


def test_version_opens_each_of_two_builds_published_side_by_side(tmp_path: Path) -> None:
    """Publishing a tiered build over a plain one of the same sources keeps both reachable by version=."""
    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    plain = build(src, out)
    tiered = build(src, out, extra=[_extra_tier])
    assert "vectors" not in Catalog.open(out, version=plain.registry_version).manifest
    assert "vectors" in Catalog.open(out, version=tiered.registry_version).manifest


def test_fresh_builds_of_the_same_sources_share_the_version(tmp_path: Path) -> None:
    """Reproducible: two fresh builds of one catalogue in different folders give one version and the same bytes."""
    src = write_tree(tmp_path / "src", small_tree())
    first = build(src, tmp_path / "one")
    second = build(src, tmp_path / "two", force=True)
    assert first.registry_version == second.registry_version
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="the [semantic] extra (sentence-transformers) is not installed",
)
def test_lexical_and_embedder_builds_differ(example_src_copy: Path, tmp_path: Path) -> None:
    """The issue's case: a lexical and a --embedder minilm build of the same sources have different versions."""
    lexical = build(example_src_copy, tmp_path / "lexical", embedder="none")
    semantic = build(example_src_copy, tmp_path / "semantic", embedder="minilm")
    assert lexical.registry_version != semantic.registry_version

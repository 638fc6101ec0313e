"""The build pipeline end to end: determinism, incremental rebuilds, atomic swaps, golden scenarios, schemas."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import EXAMPLE_SRC, TESTS, write_tree

from toolcat.build import build
from toolcat.build import write as write_module
from toolcat.build.errors import BuildError
from toolcat.build.verify import verify_build
from toolcat.cli import main

CASES = TESTS / "cases"
UPDATE_GOLDEN = os.environ.get("TOOLCAT_UPDATE_GOLDEN") == "1"
#: The artifact kinds the compiler core owns; golden files cover exactly these folders.
CORE_FOLDERS = ("nodes", "tools", "lookup", "aliases", "skills", "stats")


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a build, except the compiler's private incremental state."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".toolcat-state.json"
    }


def small_tree(summary: str = "Read a text file from the workspace.") -> dict[str, Any]:
    """A three-level catalogue with a DAG category and a skill."""
    return {
        "_node.yaml": {"title": "Small", "summary": "A small catalogue."},
        "files/_node.yaml": {"title": "Files", "summary": "Files in the workspace.", "tags": ["fs"]},
        "files/tools.yaml": {
            "tools": [
                {
                    "id": "file.read",
                    "summary": summary,
                    "kind": "read",
                    "tags": ["read", "fs"],
                    "args_schema": {
                        "type": "object",
                        "properties": {"path": {"type": "string", "description": "Relative path."}},
                        "required": ["path"],
                        "additionalProperties": False,
                    },
                    "categories": ["coding"],
                },
                {
                    "id": "file.write",
                    "summary": "Write a text file.",
                    "kind": "write",
                    "args_schema": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                        "required": ["path", "content"],
                    },
                },
            ]
        },
        "coding/_node.yaml": {"title": "Coding"},
        "coding/refactoring/_node.yaml": {"title": "Refactoring"},
        "coding/refactoring/tools.yaml": {
            "tools": [
                {
                    "id": "refactor.rename_symbol",
                    "summary": "Rename a symbol across a project.",
                    "kind": "write",
                    "args_schema": {
                        "type": "object",
                        "properties": {
                            "symbol": {"type": "string"},
                            "new_name": {"type": "string"},
                            "language": {"enum": ["ts", "js", "py", "go", "java"]},
                            "dry_run": {"type": "boolean", "default": True},
                        },
                        "required": ["symbol", "new_name", "language"],
                    },
                },
            ]
        },
        "skills/code-reviewer/SKILL.md": "---\nname: code-reviewer\ndescription: Review a diff for bugs. Use when asked for a code review.\nmetadata:\n  updated: 2026-03-17\n---\n# Code review\n\n1. Read the diff.\n",
        "skills/code-reviewer/references/checklist.md": "- [ ] tests\n",
    }


def test_two_builds_are_byte_identical_in_different_folders(tmp_path: Path) -> None:
    """The same sources give the same bytes, wherever they and the output live."""
    src_a = write_tree(tmp_path / "a" / "src", small_tree())
    src_b = tmp_path / "elsewhere" / "deeper" / "catalog"
    shutil.copytree(src_a, src_b)
    build(src_a, tmp_path / "a" / "build")
    build(src_b, tmp_path / "b" / "out")
    assert tree_bytes(tmp_path / "a" / "build") == tree_bytes(tmp_path / "b" / "out")


def test_example_catalogue_builds_identically_twice(tmp_path: Path) -> None:
    """The bundled example catalogue is reproducible byte for byte (forced rebuild from scratch)."""
    first = build(EXAMPLE_SRC, tmp_path / "one")
    second = build(EXAMPLE_SRC, tmp_path / "two", force=True)
    assert first.registry_version == second.registry_version
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


def test_unchanged_sources_do_no_work(tmp_path: Path) -> None:
    """A second build of unchanged sources is up to date and writes nothing."""
    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    build(src, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    again = build(src, out)
    assert again.up_to_date
    assert again.write is None
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before


def test_a_file_gone_from_an_unchanged_build_is_written_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Unchanged sources over a build that lost a file build again: the file is back, the build verifies, bytes equal."""
    from toolcat.build.verify import verify_build  # noqa: PLC0415 - the check a platform team runs

    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    build(src, out)
    whole = tree_bytes(out)
    gone = min((out / "tools").rglob("*.json"))
    gone.unlink()
    again = build(src, out)
    assert not again.up_to_date
    assert "are gone" in caplog.text
    assert gone.name in caplog.text
    assert gone.is_file()
    assert not verify_build(out).problems
    assert {k: v for k, v in tree_bytes(out).items() if not k.startswith(".toolcat")} == {
        k: v for k, v in whole.items() if not k.startswith(".toolcat")
    }
    assert build(src, out).up_to_date


def test_changed_compiler_code_is_never_up_to_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same sources after toolcat's own code changed (same version number) are compiled again."""
    import toolcat.build.pipeline  # noqa: PLC0415

    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    first = build(src, out)
    assert build(src, out).up_to_date
    monkeypatch.setattr(toolcat.build.pipeline, "code_fingerprint", lambda: "another-checkout")
    again = build(src, out)
    assert not again.up_to_date
    assert again.registry_version == first.registry_version  # same sources, same artifacts
    assert build(src, out).up_to_date


def test_one_tool_change_rewrites_only_its_dependents(tmp_path: Path) -> None:
    """Changing one summary writes its spec, the node shards up to the root, one lookup bucket and the manifest."""
    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    first = build(src, out)
    old = tree_bytes(out)
    write_tree(src, {"files/tools.yaml": small_tree("Read a UTF-8 text file from the workspace.")["files/tools.yaml"]})
    second = build(src, out)
    assert second.registry_version != first.registry_version
    assert second.write is not None
    new = tree_bytes(out)
    added = sorted(set(new) - set(old))
    core_added = [p for p in added if p.split("/")[0] in CORE_FOLDERS]
    # file.read is listed at files/ and (as a category) at coding/, so: its spec, the shards of
    # files/, coding/ and the root, the lookup bucket and the stats file
    assert sorted(p.split("/")[0] for p in core_added) == ["lookup", "nodes", "nodes", "nodes", "stats", "tools"]
    assert any(p.startswith("tools/file.read.") for p in core_added)
    assert second.write.files_written == len(added)
    assert second.write.files_written < len(new) / 2
    # the previous version stays readable for pinned readers
    entry = json.loads((out / "catalog.json").read_text())
    assert [v["registry_version"] for v in entry["versions"]] == [second.registry_version, first.registry_version]
    assert verify_build(out).ok


def test_failed_write_leaves_previous_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An I/O failure while writing leaves the last good build untouched and no temporary folder."""
    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    build(src, out)
    before = tree_bytes(out)
    write_tree(src, {"files/tools.yaml": small_tree("Changed.")["files/tools.yaml"]})
    real_entry = write_module._entry_point

    def broken(*args: Any, **kwargs: Any) -> bytes:
        real_entry(*args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_module, "_entry_point", broken)
    with pytest.raises(BuildError, match=r"previous build .* is untouched"):
        build(src, out)
    assert tree_bytes(out) == before
    assert not list(tmp_path.glob(".build.tmp-*"))


def test_example_build_validates_against_published_schemas(example_build: Path) -> None:
    """Every artifact of the example build resolves, matches its hash and validates against its JSON Schema."""
    report = verify_build(example_build)
    assert report.ok, "\n".join(report.problems[:20])
    for kind in ("catalog", "manifest", "node", "tool", "lookup", "aliases", "stats"):
        assert report.kinds.get(kind, 0) >= 1, kind


def test_verify_detects_a_tampered_file(tmp_path: Path) -> None:
    """Changing one byte of a published file is reported by verify."""
    src = write_tree(tmp_path / "src", small_tree())
    out = tmp_path / "build"
    build(src, out)
    spec = next((out / "tools").glob("file.read.*.json"))
    spec.write_bytes(spec.read_bytes().replace(b"Read", b"Reed"))
    report = verify_build(out)
    assert not report.ok
    assert any(spec.name in p and "tampered" in p for p in report.problems)


def test_example_catalogue_meets_the_brief(example_build: Path) -> None:
    """The example has 60+ tools in 6+ namespaces, 5+ skills, a multi-level tree and the design's named tools."""
    entry = json.loads((example_build / "catalog.json").read_text())
    manifest = json.loads((example_build / entry["manifest"]["path"]).read_text())
    assert manifest["counts"]["tools"] >= 60
    assert manifest["counts"]["skills"] >= 5
    assert len([n for n in manifest["namespaces"] if n != "task"]) >= 6
    names = {p.name.rsplit(".", 2)[0] for p in (example_build / "tools").glob("*.json")}
    for tool_id in (
        "storage.put_object",
        "refactor.rename_symbol",
        "onto.task.update",
        "onto.project.list",
        "cal.event.create",
        "util.web.search",
        "file.read",
        "file.write",
        "file.search",
        "file.dir",
        "task.code_review",
        "task.list",
    ):
        assert tool_id in names, tool_id
    rename = json.loads(next((example_build / "tools").glob("refactor.rename_symbol.*.json")).read_text())
    props = rename["args_schema"]["properties"]
    assert props["language"]["enum"] == ["ts", "js", "py", "go", "java"]
    assert props["dry_run"]["default"] is True
    assert {"changed_files", "diff_preview"} <= set(rename["result_schema"]["properties"])
    assert rename["path"] == ["coding", "refactoring"]
    put = json.loads(next((example_build / "tools").glob("storage.put_object.*.json")).read_text())
    assert put["path"] == ["storage", "buckets"]


def test_cli_build_prints_summary(tmp_path: Path) -> None:
    """toolcat build prints counts, files written and the registry_version."""
    src = write_tree(tmp_path / "src", small_tree())
    result = CliRunner().invoke(main, ["build", str(src), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "4 tools, 1 skills" in result.output  # task.list is generated beside the skill
    assert "files written" in result.output
    assert "registry_version" in result.output
    again = CliRunner().invoke(main, ["build", str(src), "--out", str(tmp_path / "out")])
    assert "up to date" in again.output


def test_validate_writes_nothing(tmp_path: Path) -> None:
    """toolcat validate checks without creating any output."""
    src = write_tree(tmp_path / "src", small_tree())
    before = set(tmp_path.rglob("*"))
    result = CliRunner().invoke(main, ["validate", str(src)])
    assert result.exit_code == 0, result.output
    assert "valid: 5 nodes, 4 tools, 1 skills" in result.output  # task.list is generated beside the skill
    assert set(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.glob("build_*")) if CASES.is_dir() else [])
def test_golden_scenarios(tmp_path: Path, case: str) -> None:
    """Golden scenario builds match their recorded core artifacts (TOOLCAT_UPDATE_GOLDEN=1 refreshes them)."""
    folder = CASES / case
    out = tmp_path / "build"
    build(folder / "src", out)
    produced = {rel: data for rel, data in tree_bytes(out).items() if rel.split("/")[0] in CORE_FOLDERS}
    expected_dir = folder / "expected"
    if UPDATE_GOLDEN:
        shutil.rmtree(expected_dir, ignore_errors=True)
        for rel, data in produced.items():
            (expected_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (expected_dir / rel).write_bytes(data)
    expected = {p.relative_to(expected_dir).as_posix(): p.read_bytes() for p in expected_dir.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(expected)
    for rel, data in produced.items():
        assert data == expected[rel], rel

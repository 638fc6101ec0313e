"""004's skill metadata, legacy aliases, always_load and search_hints: from sources to what readers and exports see."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat import Catalog
from toolcat.build import build
from toolcat.cli import main

ARGS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _tool(tool_id: str, summary: str, **extra: Any) -> dict[str, Any]:
    return {"id": tool_id, "summary": summary, "args_schema": ARGS, **extra}


def _tree(**over: Any) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "_node.yaml": {"title": "Meta", "summary": "Metadata tests."},
        "files/_node.yaml": {"title": "Files", "summary": "File tools."},
        "files/tools.yaml": {
            "tools": [
                _tool(
                    "file.read",
                    "Read a text file.",
                    always_load=True,
                    aliases=["read_file", "fs.read"],
                    handler="toolcat.examples.files:file_read",
                ),
                _tool("file.write", "Write a text file.", kind="write", alias=["write_file"]),
                _tool("file.stat", "Size and type of a path.", search_hints=["how big is this thing"]),
            ]
        },
        "skills/code-reviewer/SKILL.md": (
            "---\nname: code-reviewer\ndescription: Reviews diffs for bugs. Use when asked to review code.\n"
            "version: 1.0.0\nauthor: community\ntask_id: task.code_review\n"
            "capabilities: [code-analysis, bug-detection]\nconstraints: [read-only]\ntools: [file.read]\n---\n"
            "# Review\nRead the diff.\n"
        ),
        "skills/notes/SKILL.md": (
            "---\nname: notes\ndescription: Writes meeting notes. Use after a meeting.\nmetadata:\n"
            '  version: "2.1.0"\n  author: "workplace"\n  capabilities: "summarising, action-items"\n---\n# Notes\nWrite.\n'
        ),
        "skills/notes/metadata.yaml": "constraints: [no-network]\n",
    }
    tree.update(over)
    return tree


@pytest.fixture(scope="module")
def meta_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The metadata catalogue, built once."""
    root = tmp_path_factory.mktemp("meta")
    out = root / "build"
    build(write_tree(root / "src", _tree()), out)
    return out


def test_skill_metadata_of_004_is_kept_in_the_spec(meta_build: Path) -> None:
    """version, author, capabilities, constraints and tools come out of frontmatter, metadata: and metadata.yaml."""
    cat = Catalog.open(meta_build)
    review = cat.tool_describe("task.code_review")
    assert review["ok"], review
    assert review["version"] == "1.0.0"
    assert review["author"] == "community"
    assert review["capabilities"] == ["bug-detection", "code-analysis"]
    assert review["constraints"] == ["read-only"]
    assert review["tools"] == ["file.read"]
    notes = cat.tool_describe("task.notes")
    assert notes["version"] == "2.1.0"  # under metadata:, a string as the Agent Skills spec wants
    assert notes["capabilities"] == ["action-items", "summarising"]  # one comma-separated string
    assert notes["constraints"] == ["no-network"]  # from metadata.yaml beside SKILL.md


def test_task_id_overrides_the_derived_id(meta_build: Path) -> None:
    """task_id: task.code_review replaces task.code_reviewer; the skill's name still resolves to it."""
    cat = Catalog.open(meta_build)
    assert cat.resolve("task.code_review") == "task.code_review"
    assert cat.resolve("task.code_reviewer") is None
    assert cat.resolve("code-reviewer") == "task.code_review"


def test_capabilities_are_filterable_and_searchable(meta_build: Path) -> None:
    """list(capability=...) keeps the skills that declare it; a capability word finds the skill."""
    cat = Catalog.open(meta_build)
    listed = cat.list("skills", capability="bug-detection")
    assert [t["tool_id"] for t in listed["tools"]] == ["task.code_review"]
    assert listed["tools"][0]["capabilities"] == ["bug-detection", "code-analysis"]
    assert cat.list("skills", capability="nothing-has-this")["tools"] == []
    hits = cat.find_tool("action items")["matches"]
    assert hits
    assert hits[0]["name"] == "task.notes"


def test_legacy_aliases_resolve_in_describe_and_exec(meta_build: Path, tmp_path: Path) -> None:
    """aliases: [read_file, fs.read] and alias: [write_file] reach their tools; the provider alias is unchanged."""
    cat = Catalog.open(meta_build, sandbox=tmp_path)
    assert cat.resolve("read_file") == "file.read"
    assert cat.resolve("fs.read") == "file.read"
    assert cat.resolve("write_file") == "file.write"
    described = cat.tool_describe("read_file")
    assert described["tool_id"] == "file.read"
    assert described["alias"] == "file_read"
    (tmp_path / "a.txt").write_text("hello\n")
    ran = cat.tool_exec("read_file", {"path": "a.txt"})
    assert ran["ok"], ran
    assert "hello" in json.dumps(ran["result"])


def test_legacy_alias_collisions_are_located_errors(tmp_path: Path) -> None:
    """A legacy alias that is another tool's id or provider alias fails the build at its file and line."""
    tree = _tree()
    tree["files/tools.yaml"]["tools"][2]["aliases"] = ["file_write"]  # file.write's provider alias
    result = CliRunner().invoke(main, ["validate", str(write_tree(tmp_path / "src", tree))])
    assert result.exit_code == 1
    assert "files/tools.yaml:" in result.output
    assert "legacy alias 'file_write' of 'file.stat' collides with the provider alias of 'file.write'" in result.output


def test_bad_task_id_is_a_located_error(tmp_path: Path) -> None:
    """task_id must be a dotted id; the error names the SKILL.md line."""
    tree = _tree()
    tree["skills/code-reviewer/SKILL.md"] = tree["skills/code-reviewer/SKILL.md"].replace(
        "task_id: task.code_review", "task_id: Not An Id"
    )
    result = CliRunner().invoke(main, ["validate", str(write_tree(tmp_path / "src", tree))])
    assert result.exit_code == 1
    assert "skills/code-reviewer/SKILL.md:6" in result.output
    assert "task_id is not a tool id" in result.output


def test_always_load_in_manifest_api_and_exports(meta_build: Path) -> None:
    """always_load: true lands in the manifest, Catalog.always_loaded() and every --pinned dialect export, last."""
    cat = Catalog.open(meta_build)
    assert [e["tool_id"] for e in cat.manifest["always_load"]] == ["file.read"]
    assert [s["tool_id"] for s in cat.always_loaded()] == ["file.read"]
    for dialect in ("spec", "gateway", "namespaced"):
        out = CliRunner().invoke(
            main, ["export", "--provider", "anthropic", "--dialect", dialect, "--pinned", "--build", str(meta_build)]
        )
        assert out.exit_code == 0, out.output
        names = [t["name"] for t in json.loads(out.stdout)]
        assert names[-1] == "file_read"
        assert names.count("file_read") == 1


def test_too_many_always_loaded_tools_warn_and_fail_strict(tmp_path: Path) -> None:
    """More than 20 always-loaded tools is a warning, and an error under --strict."""
    tree = _tree()
    tree["files/tools.yaml"]["tools"] += [
        _tool(f"bulk.t{i:02d}", f"Bulk tool {i}.", always_load=True) for i in range(21)
    ]
    src = write_tree(tmp_path / "src", tree)
    relaxed = CliRunner().invoke(main, ["validate", str(src)])
    assert relaxed.exit_code == 0, relaxed.output
    assert "22 tools are always_load, over 20" in relaxed.output
    assert CliRunner().invoke(main, ["validate", str(src), "--strict"]).exit_code == 1


def test_search_hints_find_the_tool_but_stay_out_of_its_spec(meta_build: Path) -> None:
    """A phrase only in search_hints finds the tool; the hints are not in what the model reads."""
    cat = Catalog.open(meta_build)
    hits = cat.find_tool("how big is this thing")["matches"]
    assert hits
    assert hits[0]["name"] == "file.stat"
    assert "how big" not in json.dumps(cat.tool_describe("file.stat"))

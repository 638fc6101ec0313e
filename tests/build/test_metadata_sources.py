"""Where 004's metadata comes from and what the example catalogue shows: metadata.yaml, tags, task_id and real skills."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import EXAMPLE_SRC, write_tree

from toolcat import Catalog
from toolcat.build import build
from toolcat.build.errors import Severity
from toolcat.build.sources.skills import check_skill
from toolcat.cli import main

ARGS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _tree(**over: Any) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "_node.yaml": {"title": "Meta", "summary": "Metadata tests."},
        "files/_node.yaml": {"title": "Files", "summary": "File tools."},
        "files/tools.yaml": {"tools": [{"id": "file.read", "summary": "Read a text file.", "args_schema": ARGS}]},
        "skills/planner/SKILL.md": "---\nname: planner\ndescription: Plans work. Use it to plan.\n---\n# Plan\n",
        "skills/code-reviewer/SKILL.md": "---\nname: code-reviewer\ndescription: Reviews code. Use it to review.\n---\nBody\n",
    }
    tree.update(over)
    return tree


def _validate(tmp_path: Path, tree: dict[str, Any], *flags: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", str(write_tree(tmp_path / "src", tree)), *flags])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


# 004's own metadata.yaml, verbatim but for the name
METADATA_YAML_004 = """\
name: planner
description: Reviews code for quality, bugs, and security issues
version: 1.0.0
author: community
tags: [code-quality, review, security]
capabilities:
  - code-analysis
  - bug-detection
  - security-analysis
constraints:
  - read-only
tools:
  - file.read
  - file.search
"""


def test_004_metadata_yaml_is_read_without_frontmatter_warnings(tmp_path: Path) -> None:
    """004's metadata.yaml (version, author, tags, capabilities, ...) builds clean under --strict and lands in the spec."""
    tree = _tree(**{"skills/planner/metadata.yaml": METADATA_YAML_004})
    code, output = _validate(tmp_path, tree, "--strict")
    assert code == 0, output
    out = tmp_path / "build"
    build(tmp_path / "src", out)
    spec = Catalog.open(out).tool_describe("task.planner")
    assert spec["description"] == "Plans work. Use it to plan."  # the frontmatter wins
    assert spec["version"] == "1.0.0"
    assert spec["author"] == "community"
    assert spec["tags"] == ["code-quality", "review", "security"]
    assert spec["capabilities"] == ["bug-detection", "code-analysis", "security-analysis"]
    assert spec["tools"] == ["file.read", "file.search"]


def test_metadata_yaml_problems_name_metadata_yaml_and_its_line(tmp_path: Path) -> None:
    """A wrong value or an unknown key in metadata.yaml is reported at metadata.yaml:line, not in SKILL.md."""
    tree = _tree(**{"skills/planner/metadata.yaml": "version: 1.0.0\nauthor:\n  name: x\n"})
    code, output = _validate(tmp_path / "a", tree)
    assert code == 1
    assert "skills/planner/metadata.yaml:2:1: error: $.author: must be a string" in output
    assert "SKILL.md" not in output
    tree = _tree(**{"skills/planner/metadata.yaml": "version: 1.0.0\ncategory: planning\n"})
    code, output = _validate(tmp_path / "b", tree)
    assert code == 0
    assert "skills/planner/metadata.yaml:2:1: warning: $.category: 'category' in metadata.yaml is neither" in output
    assert "SKILL.md" not in output


def test_tags_under_metadata_or_as_one_string_are_read(tmp_path: Path) -> None:
    """tags under metadata: (one 'a, b' string, as the hint promises) and a top-level 'a, b' string become tag lists."""
    tree = _tree(
        **{
            "skills/planner/SKILL.md": (
                "---\nname: planner\ndescription: Plans work. Use it to plan.\nmetadata:\n"
                '  tags: "planning, roadmap"\n---\n# Plan\n'
            ),
        }
    )
    out = tmp_path / "build"
    build(write_tree(tmp_path / "src", tree), out)
    assert Catalog.open(out).tool_describe("task.planner")["tags"] == ["planning", "roadmap"]
    root = write_tree(
        tmp_path / "one",
        {"s/planner/SKILL.md": "---\nname: planner\ndescription: Plans. Use it.\ntags: planning, roadmap\n---\nB\n"},
    )
    result = check_skill(root, root / "s" / "planner", ("s",))
    assert result.record is not None
    assert result.record["tags"] == ["planning", "roadmap"]


def test_task_id_collision_points_at_the_task_id_line(tmp_path: Path) -> None:
    """A task_id that takes another tool's id is an error at the task_id line with a hint to change task_id."""
    reviewer = "---\nname: code-reviewer\ndescription: Reviews code. Use it to review.\ntask_id: task.planner\n---\nB\n"
    code, output = _validate(tmp_path, _tree(**{"skills/code-reviewer/SKILL.md": reviewer}))
    assert code == 1
    assert "skills/code-reviewer/SKILL.md:4" in output
    assert "task_id 'task.planner' of skill 'code-reviewer' is already the id of" in output
    assert "choose another task_id" in output


def test_legacy_alias_diagnostics_say_what_is_expected(tmp_path: Path) -> None:
    """A legacy-alias collision says what would be accepted instead of 'expected ?'; an alias equal to its own id is dropped."""
    tree = _tree()
    tree["files/tools.yaml"]["tools"][0]["aliases"] = ["file.read", "FILE_READ", "planner"]
    code, output = _validate(tmp_path, tree)
    assert code == 1
    assert "legacy alias 'planner' of 'file.read' collides with the skill name of 'task.planner'" in output
    assert "expected ?" not in output
    assert "FILE_READ" not in output  # its own provider alias in another case: redundant, not a collision


def test_always_loaded_tool_named_like_a_discovery_tool_is_a_located_error(tmp_path: Path) -> None:
    """An always-loaded tool whose provider alias is a dialect's discovery tool fails at its line, not with a traceback."""
    tree = _tree()
    tree["files/tools.yaml"]["tools"].append(
        {"id": "tool.exec", "summary": "Run a thing.", "args_schema": ARGS, "always_load": True}
    )
    result = CliRunner().invoke(main, ["build", str(write_tree(tmp_path / "src", tree)), "--out", str(tmp_path / "b")])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception
    assert "files/tools.yaml:" in result.output
    assert "'tool_exec'" in result.output
    assert "gateway" in result.output


def test_example_catalogue_is_clean_under_strict(tmp_path: Path) -> None:
    """catalog_src, with its 004 metadata, always_load, search_hints and aliases, has no warnings under --strict."""
    src = tmp_path / "catalog_src"
    shutil.copytree(EXAMPLE_SRC, src)
    result = CliRunner().invoke(main, ["validate", str(src), "--strict"])
    assert result.exit_code == 0, result.output


def test_example_catalogue_shows_the_new_fields(example_build: Path) -> None:
    """A new user sees 004 metadata, a task_id, an always-loaded tool, legacy aliases and search hints in the example."""
    cat = Catalog.open(example_build)
    review = cat.tool_describe("task.code_review")
    assert review["version"] == "2.1.0"
    assert review["author"] == "developer-productivity"
    assert "bug-detection" in review["capabilities"]
    assert cat.resolve("release-notes-writer") == "task.release_notes"
    assert [e["tool_id"] for e in cat.always_loaded()] == ["file.read"]
    assert cat.resolve("read_file") == "file.read"
    assert cat.list("skills", capability="query-tuning")["tools"]
    assert cat.find_tool("open a ticket")["matches"][0]["name"] == "onto.task.create"


def test_export_selects_tools_by_legacy_alias(example_build: Path) -> None:
    """toolcat export --tools read_file,grep gives the tools those legacy names stand for, under their provider aliases."""
    out = CliRunner().invoke(
        main, ["export", "--provider", "openai", "--tools", "read_file,grep", "--build", str(example_build)]
    )
    assert out.exit_code == 0, out.output
    assert [t["function"]["name"] for t in json.loads(out.stdout)] == ["file_read", "file_search"]


def _sample(corpus: Path, per_collection: int = 12) -> list[Path]:
    """Corpus skills that check clean, with unique names: every one declaring 004 metadata, and a few others per collection."""
    chosen: dict[str, Path] = {}
    for folder in ("skills", "skills-wild"):
        for collection in sorted(p for p in (corpus / folder).iterdir() if p.is_dir()):
            plain = 0
            for md in sorted(collection.rglob("SKILL.md")):
                result = check_skill(md.parent.parent, md.parent, ("skills",))
                record = result.record
                if record is None or record["name"] in chosen:
                    continue
                if any(d.severity is Severity.ERROR for d in result.diagnostics):
                    continue
                if record["meta"] or record["version"] or plain < per_collection:
                    plain += not (record["meta"] or record["version"])
                    chosen[record["name"]] = md.parent
    return [chosen[name] for name in sorted(chosen)]


@pytest.mark.corpus
def test_a_sample_of_real_skills_builds_with_their_metadata(corpus: Path, tmp_path: Path) -> None:
    """Real skills from ../shared/corpus compile together into one catalogue; declared versions and authors survive."""
    sample = _sample(corpus)
    assert len(sample) >= 60
    src = write_tree(tmp_path / "src", {"_node.yaml": {"title": "Corpus", "summary": "Real skills."}})
    for skill_dir in sample:
        shutil.copytree(skill_dir, src / "skills" / skill_dir.name, symlinks=True)
    result = CliRunner().invoke(main, ["build", str(src), "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output[-3000:]
    assert ": error:" not in result.output
    cat = Catalog.open(tmp_path / "b")
    declared = 0
    for skill_dir in sample:
        record = check_skill(skill_dir.parent, skill_dir, ("skills",)).record
        assert record is not None
        spec = cat.tool_describe(record["id"])
        assert spec["ok"], spec
        if record["version"]:
            declared += 1
            assert spec["version"] == record["version"]
        if record["meta"].get("author"):
            assert spec["author"] == record["meta"]["author"]
    assert declared >= 5

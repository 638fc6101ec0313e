"""Turn the real corpus into a toolcat source tree: the GitHub MCP tools plus the corpus skills.

Used by ``tests/test_site.py`` (a sample) and ``bench/bench_site.py`` (everything).
Tool sources: one ``github.<name>`` tool per ``toolsnaps/*.json`` (summary = first sentence
of the description, args_schema = inputSchema, kind from ``annotations.readOnlyHint``).
Skills: every folder holding a SKILL.md is checked with toolcat's own skill checker first;
those it rejects, and later copies of an already taken name, are skipped and counted.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from toolcat.build.errors import Severity
from toolcat.build.sources.skills import check_skill

TOOLSNAPS = Path("tools/mcp/github-mcp-server/toolsnaps")
SKILL_COLLECTIONS = Path("skills")


@dataclass(slots=True)
class CorpusTree:
    """The written source tree and what was left out."""

    root: Path
    tools: int = 0
    skills: int = 0
    skipped_invalid: list[str] = field(default_factory=list)
    skipped_duplicate: list[str] = field(default_factory=list)


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
    return first[:200] or "GitHub MCP tool"


def github_tools(corpus: Path, limit: int | None = None) -> list[dict[str, object]]:
    """Tool definitions for the GitHub MCP server's tool snapshots (sorted by name)."""
    tools = []
    for snap in sorted((corpus / TOOLSNAPS).glob("*.json"))[:limit]:
        raw = json.loads(snap.read_text(encoding="utf-8"))
        annotations = raw.get("annotations") or {}
        description = raw.get("description") or raw["name"]
        tool: dict[str, object] = {
            "id": f"github.{raw['name']}",
            "summary": _first_sentence(description),
            "description": description,
            "args_schema": raw.get("inputSchema") or {"type": "object"},
            "kind": "read" if annotations.get("readOnlyHint") else "write",
            "tags": ["github", *raw["name"].split("_")[:1]],
        }
        if annotations:
            tool["annotations"] = annotations
        tools.append(tool)
    return tools


def write_corpus_tree(
    corpus: Path, root: Path, *, tool_limit: int | None = None, skill_limit: int | None = None
) -> CorpusTree:
    """Write the source tree under ``root`` and report how many skills were skipped and why."""
    tree = CorpusTree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "_node.yaml").write_text(
        yaml.safe_dump(
            {"title": "Real corpus: GitHub MCP tools and public skills", "summary": "Built from ../shared/corpus."}
        ),
        encoding="utf-8",
    )
    github = root / "github"
    github.mkdir()
    (github / "_node.yaml").write_text(
        yaml.safe_dump({"title": "GitHub", "summary": "The GitHub MCP server's tools."}), encoding="utf-8"
    )
    tools = github_tools(corpus, tool_limit)
    (github / "tools.yaml").write_text(
        yaml.safe_dump({"tools": tools}, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    tree.tools = len(tools)

    copy_valid_skills(corpus / SKILL_COLLECTIONS, root / "skills", tree, skill_limit)
    return tree


def copy_valid_skills(collections: Path, skills_root: Path, tree: CorpusTree, skill_limit: int | None = None) -> None:
    """Copy every spec-valid skill folder under ``collections`` to ``skills_root/<collection>/<name>`` (first of a name)."""
    seen: set[str] = set()
    for skill_md in sorted(collections.rglob("SKILL.md")):
        if skill_limit is not None and tree.skills >= skill_limit:
            break
        folder = skill_md.parent
        rel = folder.relative_to(collections).as_posix()
        result = check_skill(collections, folder, ("skills",))
        if result.record is None or any(d.severity is Severity.ERROR for d in result.diagnostics):
            tree.skipped_invalid.append(rel)
            continue
        name = str(result.record.get("name", folder.name))
        if name in seen:
            tree.skipped_duplicate.append(rel)
            continue
        seen.add(name)
        collection = re.sub(r"[^a-z0-9_-]+", "-", rel.split("/", 1)[0].lower())
        target = skills_root / collection / folder.name
        if target.exists():
            tree.skipped_duplicate.append(rel)
            continue
        shutil.copytree(folder, target)
        tree.skills += 1

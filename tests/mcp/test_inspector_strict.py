"""MCP Inspector's CLI (pinned in tests/mcp/inspector/package-lock.json, installed by ``make inspector``) against serve.

``--strict`` reports every tool-schema portability problem (type arrays, schemas that constrain nothing, …);
``--verify`` runs Inspector's own SEP-2640 conformance and digest checks over ``skills/list``. Both run
against ``toolcat serve`` over stdio, the way a user points Inspector at a server. Skipped with the reason
when node or the pinned Inspector is missing (``make test`` installs it where npm exists).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_mcp_clients import DIALECTS, TOOLCAT

from toolcat.format.dialects import dialect_tools

INSPECTOR = Path(__file__).parent / "inspector" / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = [
    pytest.mark.skipif(
        shutil.which("node") is None, reason="node is not installed (make test installs it where apt can)"
    ),
    pytest.mark.skipif(
        not INSPECTOR.exists(),
        reason="MCP Inspector is not installed: run `make inspector` (npm ci in tests/mcp/inspector)",
    ),
]


def inspector(*args: str) -> subprocess.CompletedProcess[str]:
    """Run Inspector's CLI with ``args`` (bounded: a hung server fails the test, it does not hang it)."""
    return subprocess.run([str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_inspector_strict_finds_no_portability_problem(example_build: Path, dialect: str) -> None:
    """Inspector --strict lists each dialect's tools over stdio with 0 errors and 0 warnings."""
    done = inspector(
        "--strict",
        "--method",
        "tools/list",
        TOOLCAT,
        "serve",
        "--build",
        str(example_build),
        "--dialect",
        dialect,
        "--poll",
        "0",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr, done.stderr[-3000:]
    assert "Error" not in done.stderr, done.stderr[-3000:]
    declared = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    for tool in dialect_tools(dialect):  # the checked list holds the dialect's tools, output schemas included
        assert "outputSchema" in declared[tool.name], tool.name


def test_inspector_verifies_every_skill_against_sep_2640(example_build: Path) -> None:
    """Inspector --verify --require-digests checks every skill's conformance, frontmatter, sizes and digests."""
    done = inspector(
        "--protocol-era", "modern", "--verify", "--require-digests", "--method", "skills/list",
        TOOLCAT, "serve", "--build", str(example_build), "--poll", "0",
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(reports) >= 3
    assert all(r["ok"] and r["outcome"] == "verified" and not r["conformance"] for r in reports), reports
    assert sum(len(r["files"]) for r in reports) > len(reports)  # bundled files were checked too


def test_inspector_verifies_a_hand_written_skill_md_served_as_written(tmp_path: Path) -> None:
    """Inspector --verify passes a SKILL.md with CRLF, a comment, a folded description and 004's fields, served as is."""
    from support import write_tree  # noqa: PLC0415
    from test_skills_extension import ODD_SKILL  # noqa: PLC0415

    from toolcat.build import build  # noqa: PLC0415

    src = write_tree(
        tmp_path / "src",
        {"_node.yaml": {"title": "Root", "summary": "Everything."}, "skills/odd-skill/SKILL.md": ODD_SKILL},
    )
    build(src, tmp_path / "out")
    done = inspector(
        "--protocol-era", "modern", "--verify", "--require-digests", "--method", "skills/list",
        TOOLCAT, "serve", "--build", str(tmp_path / "out"), "--poll", "0",
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == 1
    assert reports[0]["ok"], reports
    assert reports[0]["outcome"] == "verified", reports
    assert not reports[0]["conformance"], reports

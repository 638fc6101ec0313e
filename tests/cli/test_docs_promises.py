"""What README.md and docs/*.md promise of the CLI: read-only dry runs, UNKNOWN_PATH's next step, python in import mcp."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolcat.build import build
from toolcat.cli import main
from toolcat.reader import Catalog

UPSTREAM = Path(__file__).resolve().parents[1] / "mcp" / "upstream_server.py"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_exec_read_only_dry_run_answers_the_plan(example_build: Path):
    """`toolcat exec --read-only --dry-run` of a write tool exits 0 with its plan; without --dry-run it is refused."""
    args = ["exec", "onto.task.update", "--args", '{"task_id": "T-0001", "status": "done"}', "--build"]
    code, out = run(*args, str(example_build), "--read-only", "--dry-run", "--json")
    assert code == 0, out
    answer = json.loads(out[out.index("{") :])
    assert answer["dry_run"] is True
    assert answer["would_run"]["allowed"] is False
    code, out = run(*args, str(example_build), "--read-only")
    assert code == 1
    assert "PERMISSION_DENIED" in out


def test_list_unknown_path_points_to_a_search_not_back_to_the_root(example_build: Path):
    """`toolcat list zzqx_widgets --json`: UNKNOWN_PATH whose next step searches the words, not `list ""` again."""
    code, out = run("list", "zzqx_widgets", "--build", str(example_build), "--json")
    assert code == 1
    error = json.loads(out[out.index("{") :])["error"]
    assert error["code"] == "UNKNOWN_PATH"
    assert error["next_action"] == {
        "op": "search_tool_by_category",
        "args": {"query": "zzqx widgets", "category_path": ""},
    }


@pytest.mark.slow
def test_import_mcp_python_command_runs_this_interpreter_like_the_handler(tmp_path: Path, monkeypatch):
    """`import mcp --command "python server.py"` starts sys.executable (not the python on PATH), as the handler does.

    A `python` first on PATH that fails stands in for a system Python without the MCP SDK.
    """
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "python"
    fake.write_text("#!/bin/sh\necho 'not the running interpreter' >&2\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    out = tmp_path / "src" / "upstream"
    done = subprocess.run(
        [sys.executable, "-m", "toolcat.cli", "import", "mcp", "--command", f"python {UPSTREAM}", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    written = (out / "tools.yaml").read_text(encoding="utf-8")
    assert "- python" in written  # the handler keeps `python`: the host's interpreter at run time
    assert sys.executable not in written
    build(tmp_path / "src", tmp_path / "build")
    ran = Catalog.open(tmp_path / "build").tool_exec("upstream_test.add", {"a": 20, "b": 22})
    assert ran["ok"] is True, ran
    assert ran["result"] == {"sum": 42}

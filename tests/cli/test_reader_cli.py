"""``toolcat show | help | exec | list`` over a real build, as text and as JSON envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat.build import build
from toolcat.cli import main


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    src = write_tree(
        root / "src",
        {
            "text/tools.yaml": {
                "tools": [
                    {
                        "id": "text.json.dump",
                        "summary": "Serialise a value as JSON",
                        "description": "x",
                        "kind": "read",
                        "handler": "json:dumps",
                        "args_schema": {
                            "type": "object",
                            "properties": {"value": {"type": "string"}, "indent": {"type": "integer", "default": 2}},
                            "required": ["value"],
                        },
                    },
                ]
            }
        },
    )
    build(src, root / "build")
    return root / "build"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_show_prints_spec(built):
    """toolcat show prints the tool's summary and arguments; --json prints the envelope."""
    code, out = run("show", "text_json_dump", "--build", str(built))
    assert code == 0
    assert "Serialise a value as JSON" in out
    assert "value (required): string" in out
    code, out = run("show", "text.json.dump", "--build", str(built), "--json")
    assert json.loads(out)["tool_id"] == "text.json.dump"


def test_help_levels(built):
    """toolcat help walks root → group → operation."""
    assert "text" in run("help", "--build", str(built))[1]
    assert "text.json.dump" in run("help", "text.json", "--build", str(built))[1]
    code, out = run("help", "text.json.dump", "--build", str(built))
    assert code == 0
    assert "indent: integer; default: 2" in out


def test_exec_runs_and_reports_errors(built):
    """toolcat exec runs the handler; a validation error prints field errors and exits 1."""
    code, out = run("exec", "text.json.dump", "--args", '{"value": "hi"}', "--build", str(built), "--json")
    assert code == 0
    assert json.loads(out)["result"] == '{"value": "hi", "indent": 2}'
    code, out = run("exec", "text.json.dump", "--args", "{}", "--build", str(built))
    assert code == 1
    assert "VALIDATION_ERROR" in out
    assert "value" in out
    code, out = run("exec", "text.json.dump", "--args", '{"value": "x"}', "--dry-run", "--build", str(built))
    assert code == 0
    assert "dry run" in out


def test_list_and_missing_build(built, tmp_path):
    """toolcat list shows nodes and tools; a missing build exits 1 with a clear message."""
    code, out = run("list", "text", "--build", str(built))
    assert code == 0
    assert "text.json.dump" in out
    code, out = run("list", "--build", str(tmp_path / "none"))
    assert code == 1
    assert "catalog.json" in out

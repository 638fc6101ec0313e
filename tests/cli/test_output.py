"""What the reader commands print where: stdout the answer, stderr the notes and errors (one renderer).

Also: ``--build`` as a folder or a URL everywhere, and export's adaptations summarised by kind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import serve_folder, write_tree

from toolcat.build import build
from toolcat.cli import main
from toolcat.commands.export import adaptation_kind
from toolcat.commands.output import render_error
from toolcat.reader import Catalog

TOOLS = {
    "tools": [
        {
            "id": "text.json.dump",
            "summary": "Serialise a value as JSON",
            "description": "Old name of the encoder.",
            "kind": "read",
            "handler": "json:dumps",
            "deprecated": "use text.json.encode",
            "args_schema": {
                "type": "object",
                # deliberately not alphabetical: `toolcat show` keeps the author's order
                "properties": {
                    "value": {"type": "string", "minLength": 1, "default": "x"},
                    "indent": {"type": "integer", "default": 2},
                    "ascii": {"type": "boolean"},
                },
                "required": ["value"],
            },
        },
        {
            "id": "text.json.encode",
            "summary": "Encode a value as JSON text",
            "description": "Encode a value.",
            "kind": "read",
            "handler": "json:dumps",
            "args_schema": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
        },
    ]
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-tool build (one deprecated, so every call of it carries a warning)."""
    root = tmp_path_factory.mktemp("output")
    build(write_tree(root / "src", {"text/tools.yaml": TOOLS}), root / "build")
    return root / "build"


def toolcat(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a child process, stdout and stderr kept apart as a shell pipe keeps them."""
    return subprocess.run(
        [sys.executable, "-m", "toolcat.cli", *args], capture_output=True, text=True, check=False, timeout=120
    )


def test_exec_stdout_pipes_into_json_loads_and_notes_go_to_stderr(built: Path) -> None:
    """`toolcat exec` without --json prints only the answer on stdout (json.loads reads it); its warning is on stderr."""
    done = toolcat("exec", "text.json.dump", "--args", '{"value": "hi"}', "--build", str(built))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"value": "hi", "indent": 2}
    assert "warning:" in done.stderr
    assert "deprecated" in done.stderr.lower()
    assert "#" not in done.stdout


def test_an_error_is_shown_with_its_warnings_and_details(built: Path) -> None:
    """A failed exec prints the error's field details on stderr beside the call's warnings, stdout stays empty."""
    done = toolcat("exec", "text.json.dump", "--args", '{"value": ""}', "--build", str(built))
    assert done.returncode == 1
    assert done.stdout == ""
    assert "VALIDATION_ERROR" in done.stderr
    assert "- value:" in done.stderr
    assert "deprecated" in done.stderr.lower()


def test_render_error_shows_what_the_envelope_carries() -> None:
    """An upstream's 400 shows its status and reason (details), the hints and the next step, not only the message."""
    envelope = {
        "ok": False,
        "error": {
            "code": "VALIDATION_ERROR",
            "message": "GET https://api.example.com/v1/pets answered HTTP 400",
            "details": {"status": 400, "body": {"error": "limit must be at most 100"}},
            "hints": ["Lower limit."],
            "next_action": {"op": "help", "args": {"path": "pets.list"}},
            "help_path": "pets.list",
        },
    }
    text = render_error(envelope)
    assert "status: 400" in text
    assert "limit must be at most 100" in text
    assert "hint: Lower limit." in text
    assert '"op": "help"' in text
    assert "help: toolcat help pets.list" in text


def test_render_error_elides_a_huge_detail() -> None:
    """A detail longer than the limit is cut, saying how long it was, so a server's page does not flood the terminal."""
    text = render_error({"ok": False, "error": {"code": "INTERNAL", "message": "m", "details": {"body": "x" * 50_000}}})
    assert len(text) < 3_000
    assert "50,000 characters" in text


def test_search_answers_as_the_catalog_does(built: Path) -> None:
    """`toolcat search --json` is Catalog.search_tool_by_category's envelope (the same spec-dialect answer)."""
    out = CliRunner().invoke(main, ["search", "encode json", "--build", str(built), "--json", "--limit", "2"])
    assert out.exit_code == 0, out.output
    expected = Catalog.open(built).search_tool_by_category("encode json", "", limit=2)
    answer = json.loads(out.stdout)
    assert [r["tool_id"] for r in answer["results"]] == [r["tool_id"] for r in expected["results"]]
    assert answer.keys() == expected.keys()


def test_search_errors_use_the_one_renderer(built: Path) -> None:
    """An unknown --in gives the same rendering as the other reader commands: code, hints and a next step."""
    done = toolcat("search", "encode", "--in", "nowhere", "--build", str(built))
    assert done.returncode == 1
    assert done.stdout == ""
    first = done.stderr.splitlines()[0]
    assert first.startswith(("UNKNOWN_PATH", "NO_MATCH_IN_CATEGORY"))
    assert "next: " in done.stderr or "hint: " in done.stderr


def test_build_accepts_a_url_in_every_reader_command(built: Path, tmp_path: Path) -> None:
    """--build URL works for search, show, list, prompt, export and stats; --url stays as a hidden alias."""
    runner = CliRunner()
    cache = str(tmp_path / "cache")
    with serve_folder(built) as url:
        for args in (
            ["search", "encode json"],
            ["show", "text.json.encode"],
            ["list", "text"],
            ["prompt"],
            ["export", "--provider", "openai"],
            ["stats"],
        ):
            out = runner.invoke(main, [*args, "--build", url, "--cache-dir", cache])
            assert out.exit_code == 0, (args, out.output)
        alias = runner.invoke(main, ["search", "encode json", "--url", url, "--cache-dir", cache])
    assert alias.exit_code == 0, alias.output
    assert "text.json.encode" in alias.stdout
    assert "--url" not in runner.invoke(main, ["search", "--help"]).output


def test_show_keeps_the_schemas_argument_order(built: Path) -> None:
    """`toolcat show` lists arguments in the order the author wrote them, not alphabetically."""
    out = CliRunner().invoke(main, ["show", "text.json.dump", "--build", str(built)])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    start = lines.index("arguments:")
    names = [line.split()[0].rstrip(":") for line in lines[start + 1 : start + 4]]
    assert names == ["value", "indent", "ascii"]


def test_export_summarises_adaptations_by_kind_and_lists_each_with_v(built: Path) -> None:
    """export prints one stderr line per kind of loss; -v lists every adaptation too."""
    quiet = toolcat("export", "--provider", "openai", "--build", str(built))
    assert quiet.returncode == 0, quiet.stderr
    json.loads(quiet.stdout)
    assert "by kind" in quiet.stderr
    assert "warning: openai" not in quiet.stderr
    summary = [line for line in quiet.stderr.splitlines() if line.startswith("  ")]
    assert any("dropped 'minLength'" in line for line in summary)
    loud = toolcat("-v", "export", "--provider", "openai", "--build", str(built))
    each = [line for line in loud.stderr.splitlines() if line.startswith("warning: openai")]
    assert len(each) >= len(summary)
    assert any("$.properties.value" in line for line in each)


def test_adaptation_kinds_drop_paths_and_numbers() -> None:
    """Two adaptations that differ only by path or size are one kind; version-like names stay intact."""
    assert adaptation_kind("description cut from 1200 to 1024 characters") == "description cut from N to N characters"
    assert adaptation_kind("strict mode off: $.properties.a: a free-form object") == "strict mode off"
    assert adaptation_kind("dropped format 'uri' (supports ipv4); kept in the description") == (
        "dropped format 'uri' (supports ipv4)"
    )

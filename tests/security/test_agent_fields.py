"""Agents' tools and model are checked at build, and a read-only session hands on only read tools (issue 36)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import write_tree

from toolcat.build import build, compile_catalog
from toolcat.build.errors import SourceError
from toolcat.format.agent_tools import KNOWN_TOOLS, READ_TOOLS, tool_entry_problem
from toolcat.reader import Catalog


def _agent(tools: object, model: object = "haiku") -> str:
    front = {"name": "helper", "description": "Helps with code. Use it for small tasks.", "tools": tools}
    if model is not None:
        front["model"] = model
    return "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\nHelp.\n"


def _src(tmp_path: Path, text: str) -> Path:
    return write_tree(
        tmp_path / "src",
        {"_node.yaml": {"title": "C", "summary": "Agents."}, "agents/helper.md": text},
    )


def _codes(tmp_path: Path, text: str, *, strict: bool = False) -> list[str]:
    try:
        _, diagnostics = compile_catalog(_src(tmp_path, text), strict=strict)
    except SourceError as exc:
        return [f"error:{d.code}" for d in exc.diagnostics]
    return [f"{d.severity.value}:{d.code}" for d in diagnostics if d.file.endswith("helper.md")]


def test_a_tool_rule_that_grants_everything_is_a_warning_and_strict_refuses_it(tmp_path: Path) -> None:
    """`Bash(*)` warns (bad_agent_tool); --strict stops the build on it; `Bash(git diff:*)` is fine."""
    assert _codes(tmp_path / "a", _agent(["Read", "Bash(*)"])) == ["warning:bad_agent_tool"]
    assert "error:bad_agent_tool" in _codes(tmp_path / "b", _agent(["Read", "Bash(*)"]), strict=True)
    assert _codes(tmp_path / "c", _agent(["Read", "Bash(git diff:*)", "mcp__github__get_issue", "file.read"])) == []


def test_a_line_break_in_model_or_a_tool_is_refused(tmp_path: Path) -> None:
    """A model or tools entry with a newline (another setting smuggled in) stops the build, located."""
    assert _codes(tmp_path / "a", _agent(["Read"], "haiku\npermissionMode: bypassPermissions")) == [
        "error:bad_agent_model"
    ]
    assert _codes(tmp_path / "b", _agent(["Read\nBash"])) == ["error:bad_agent_tool"]
    assert _codes(tmp_path / "c", _agent(["Read"], "claude-sonnet-4-5")) == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entry=st.text(max_size=60))
def test_any_tools_entry_is_known_or_reported(entry: str) -> None:
    """Every string is accepted only as a known tool, a rule, an MCP tool or a tool id; control characters are errors."""
    problem = tool_entry_problem(entry)
    if any(ord(c) < 32 or ord(c) == 127 for c in entry):
        assert problem is not None
        assert problem[0] == "error"
    elif problem is None:
        name = entry.split("(", 1)[0]
        assert name in KNOWN_TOOLS or entry.startswith("mcp__") or "." in entry


def test_a_read_only_session_hands_an_agent_only_read_tools(tmp_path: Path) -> None:
    """serve --read-only (read_only=True) gives an agent's runner Read and Grep, never Write, Bash or an MCP tool."""
    tools = ["Read", "Write", "Bash(git diff:*)", "mcp__github__create_issue", "Grep(src/**)", "file.write"]
    out = tmp_path / "build"
    build(_src(tmp_path, _agent(tools)), out)
    full = Catalog.open(out).tool_exec("agent.helper", {})
    assert full["ok"], full
    assert full["result"]["tools"] == sorted(tools)
    narrowed = Catalog.open(out, read_only=True).tool_exec("agent.helper", {})
    assert narrowed["ok"], narrowed
    assert narrowed["result"]["tools"] == ["Grep(src/**)", "Read"]
    assert all(t.split("(")[0] in READ_TOOLS for t in narrowed["result"]["tools"])


@pytest.mark.parametrize("text", ["Read, Grep\nBash", "Read,Bash(*)"])
def test_the_comma_string_form_is_checked_too(tmp_path: Path, text: str) -> None:
    """Claude Code's `tools: Read, Grep` string is checked entry by entry."""
    codes = _codes(tmp_path, _agent(text))
    assert any(code.endswith("bad_agent_tool") for code in codes), codes

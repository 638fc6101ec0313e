"""Every call a served system prompt shows names a tool of its dialect, with argument names that tool accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolcat import Catalog
from toolcat.format.dialects import DIALECT_NAMES, SESSIONLESS_CALL, dialect_tools

#: `name(...)` in backticks: the calls a prompt tells the model to make.
CALL = re.compile(r"`([a-z_]+)\(([^`]*)\)`")
#: an argument: key=value, a quoted literal, or a bare placeholder naming the argument.
ARG = re.compile(r'\s*(?:([a-z_]+)\s*=\s*(?:"[^"]*"|[^,]+)|"[^"]*"|([a-z_.]+))\s*(?:,|$)')


def _calls(text: str) -> list[tuple[str, list[str]]]:
    out = []
    for name, inside in CALL.findall(text):
        names = [key or bare for key, bare in ARG.findall(inside) if key or bare]
        out.append((name, names))
    return out


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_system_prompt_calls_are_operations_of_its_dialect(example_build: Path, dialect: str) -> None:
    """system.<dialect> names only that dialect's tools, and each argument it names is in the tool's input schema."""
    section = Catalog.open(example_build).prompt(f"system.{dialect}")
    assert section["ok"], section
    tools = {t.name: set(t.input_schema["properties"]) for t in dialect_tools(dialect)}
    if dialect == "namespaced":  # served beside the dialect's tools to clients without a session (docs/mcp.md)
        tools[SESSIONLESS_CALL.name] = set(SESSIONLESS_CALL.input_schema["properties"])
    calls = _calls(section["text"])
    if not tools:  # direct: no discovery tool to name (every tool is in the client's own list)
        assert calls == [], calls
        return
    assert calls, "the system prompt shows no call at all"
    wrong = []
    for name, args in calls:
        if name not in tools:
            wrong.append(f"{name}(): not a {dialect} tool")
            continue
        # placeholders such as error.help_path stand for a value, not an argument name
        unknown = [a for a in args if "." not in a and a not in tools[name]]
        if unknown:
            wrong.append(f"{name}({', '.join(args)}): {unknown} not in its input schema")
    assert not wrong, wrong


def test_the_call_pattern_catches_a_foreign_tool() -> None:
    """The check would fail on a gateway prompt that sends the model to find_tool."""
    assert _calls("use `find_tool(purpose)` then `tool_exec(op, args)`") == [
        ("find_tool", ["purpose"]),
        ("tool_exec", ["op", "args"]),
    ]

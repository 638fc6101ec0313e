"""What an agent's ``tools`` and ``model`` may say (issue 36): checked at build, narrowed for read-only sessions.

An agent (``AGENT.md``, seed 004) names the tools a host's sub-agent runner starts it with, in Claude
Code's forms: a built-in tool (``Read``), a tool with a rule (``Bash(git diff:*)``, ``Read(./docs/**)``),
an MCP tool (``mcp__github__get_issue``), or a catalogue tool id (``file.read``). The build refuses an
entry with a line break or control character (a runner's parser could read it as two entries) and
warns about an unknown name or a rule that grants every use (``Bash(*)``); ``--strict`` makes those
warnings errors. ``model`` is one line of a model name's characters.

A read-only session (``read_only=True``, ``serve --read-only``) hands an agent only the tools that read:
:data:`READ_TOOLS` (with or without a rule); write tools, MCP tools and catalogue ids (whose kind the
runner cannot see) are left out. Stdlib only: the reader uses this module.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "KNOWN_TOOLS",
    "MAX_MODEL",
    "READ_TOOLS",
    "model_problem",
    "read_only_tools",
    "tool_entry_problem",
]

#: Claude Code's built-in tools that only read.
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoRead"})
#: Every built-in tool name an agent may list (the read ones and those that write, run or delegate).
KNOWN_TOOLS = READ_TOOLS | frozenset(
    {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "BashOutput", "KillShell", "Task", "TodoWrite", "Skill"}
)
MAX_ENTRY = 200
MAX_MODEL = 128
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
_BUILTIN = re.compile(r"^([A-Z][A-Za-z]*)(?:\((.*)\))?$", re.DOTALL)
_MCP_TOOL = re.compile(r"^mcp__[A-Za-z0-9_-]+(__[A-Za-z0-9_.-]+)?$")
_TOOL_ID = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$")
_EVERYTHING = frozenset({"", "*", "**", ":*", "*:*"})


def tool_entry_problem(entry: Any) -> tuple[str, str, str] | None:
    """``(severity, message, hint)`` for an entry of an agent's ``tools`` (``error`` or ``warning``), or None."""
    if not isinstance(entry, str):
        return "error", f"a tools entry must be a string, not {type(entry).__name__}", "Write one tool per entry."
    if _CONTROL.search(entry) or len(entry) > MAX_ENTRY:
        return (
            "error",
            "a tools entry holds a line break or control character, or is over 200 characters",
            "Write one tool name (or Name(rule)) per entry, on one line.",
        )
    if _MCP_TOOL.match(entry) or _TOOL_ID.match(entry):
        return None
    found = _BUILTIN.match(entry)
    if found is None:
        return (
            "warning",
            f"{entry!r} is not a tool name, Name(rule), mcp__server__tool or a catalogue tool id",
            f"Known tools: {', '.join(sorted(KNOWN_TOOLS))}.",
        )
    name, rule = found.group(1), found.group(2)
    if name not in KNOWN_TOOLS:
        return (
            "warning",
            f"{name!r} is not a tool a sub-agent runner knows",
            f"Known: {', '.join(sorted(KNOWN_TOOLS))}.",
        )
    if rule is not None and rule.strip() in _EVERYTHING:
        return (
            "warning",
            f"{entry!r} grants every use of {name}",
            (
                f"Name what the agent needs, e.g. {name}(git diff:*) or {name}(./docs/**), or list {name} "
                "plainly if it truly needs all of it."
            ),
        )
    return None


def model_problem(model: Any) -> tuple[str, str] | None:
    """``(severity, message)`` for an agent's ``model``, or None: one line of a model name's characters."""
    if not isinstance(model, str):
        return "error", f"model must be a string, not {type(model).__name__}"
    if _CONTROL.search(model):
        return "error", "model holds a line break or control character"
    if len(model) > MAX_MODEL or not _MODEL.match(model):
        return "warning", f"model {model[:60]!r} is not a model name (letters, digits and . _ : / @ - only)"
    return None


def read_only_tools(tools: Any) -> list[str]:
    """The entries of ``tools`` a read-only session hands on: built-in read tools, with or without a rule."""
    if not isinstance(tools, list):
        return []
    kept = []
    for entry in tools:
        found = _BUILTIN.match(entry) if isinstance(entry, str) and not _CONTROL.search(entry) else None
        if found is not None and found.group(1) in READ_TOOLS:
            kept.append(entry)
    return kept

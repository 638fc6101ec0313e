"""Which program a stdio MCP server's command line starts: ``python`` means the running interpreter.

``toolcat import mcp --command "python server.py"`` and an ``mcp`` handler whose command is
``[python, server.py]`` start the same program, ``sys.executable``, so a server written for the
virtual environment toolcat runs in works in both (docs/mcp.md). Any other program name is looked up
on ``PATH`` as usual.
"""

from __future__ import annotations

import sys

#: Program names that mean the interpreter running toolcat.
PYTHON_NAMES = ("python", "python3")


def interpreter_argv(argv: list[str]) -> list[str]:
    """``argv`` with a leading ``python``/``python3`` replaced by ``sys.executable`` (a copy; others unchanged)."""
    if argv and argv[0] in PYTHON_NAMES:
        return [sys.executable, *argv[1:]]
    return list(argv)

"""LangChain's MCP adapter (langchain-mcp-adapters 0.3.2, on mcp 1.x) against ``toolcat serve``, in its own environment.

The adapter needs mcp<2 and toolcat[mcp] needs mcp>=2 (docs/mcp.md), so it runs in ``.venv-langchain`` (``make
langchain``, from requirements-langchain.lock) through ``tests/mcp/langchain_client.py``; the tests read the JSON that
script prints. The adapter's default client opens a new session for every tool call, so these tests also hold the
namespaced dialect to "a described tool is callable by its alias from any session" (issue 24). Every dialect runs over
streamable HTTP; the namespaced one also over stdio, where every call is a new server process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_mcp_clients import http_serving

ROOT = Path(__file__).resolve().parents[2]
LC_PYTHON = ROOT / ".venv-langchain" / "bin" / "python"
CLIENT = Path(__file__).with_name("langchain_client.py")
TOOLCAT = str(Path(sys.executable).with_name("toolcat"))
EVAL = {"expression": "6*7"}

pytestmark = pytest.mark.skipif(
    not LC_PYTHON.exists(), reason="no .venv-langchain: run `make langchain` (LangChain's adapter needs mcp<2)"
)

#: Per dialect: the adapter's calls, discovery first, ending with util.math.eval through that dialect.
PLANS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "spec": [("list", {}), ("call_tool", {"tool_id": "util.math.eval", "args": EVAL})],
    "gateway": [("tool_help", {}), ("tool_exec", {"op": "util.math.eval", "args": EVAL})],
    "namespaced": [("tool_list", {}), ("tool_describe", {"name": "util.math.eval"}), ("util_math_eval", EVAL)],
    "direct": [("util_math_eval", EVAL)],
}


def _run_client(connection: dict[str, Any], plan: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The adapter's client run in .venv-langchain: its printed JSON (the test fails with its stderr otherwise)."""
    argv = [str(LC_PYTHON), str(CLIENT), json.dumps(connection), json.dumps(plan)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def _check_eval(dialect: str, out: dict[str, Any]) -> None:
    """The plan's discovery tool was listed, no answer failed, and 6*7 came back as 42."""
    assert PLANS[dialect][0][0] in out["tools"], out["tools"]
    assert all(answer.get("ok", True) is not False for answer in out["answers"]), out["answers"]
    assert out["answers"][-1]["result"]["result"] == 42, out["answers"][-1]


@pytest.mark.parametrize("dialect", sorted(PLANS))
def test_adapter_lists_and_calls_over_http(example_build: Path, dialect: str) -> None:
    """Over streamable HTTP, the adapter's default client lists each dialect's tools and runs util.math.eval (6*7)."""
    with http_serving(example_build, "--dialect", dialect) as url:
        out = _run_client({"transport": "streamable_http", "url": url}, PLANS[dialect])
    _check_eval(dialect, out)
    assert out["versions"]["langchain-mcp-adapters"] == "0.3.2"
    assert out["versions"]["mcp"].startswith("1."), out["versions"]


def test_namespaced_alias_works_from_a_new_stdio_process(example_build: Path) -> None:
    """Over stdio each adapter call starts its own server: the alias tool_describe named still runs (issue 24).

    The described tool is not listed to the adapter (its listing session ended before the describe), so the client
    calls the alias in a session, and a process, that never described it: the call answers 42, not NOT_AUTHORIZED.
    """
    args = ["serve", "--build", str(example_build), "--dialect", "namespaced"]
    out = _run_client({"transport": "stdio", "command": TOOLCAT, "args": args}, PLANS["namespaced"])
    _check_eval("namespaced", out)
    assert out["unlisted"] == ["util_math_eval"]
    assert out["answers"][1]["next_action"]["op"] == "util_math_eval"


def test_langchain_env_passes_pip_check() -> None:
    """.venv-langchain, installed from requirements-langchain.lock, has no broken requirements (pip check)."""
    done = subprocess.run([str(LC_PYTHON), "-m", "pip", "check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

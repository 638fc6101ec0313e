"""The ``mcp`` handler's session pool, against the real SDK upstream server of tests/mcp/upstream_server.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO, TESTS, write_tree

from toolcat.build import build
from toolcat.mcp.upstream import POOL, close_upstreams
from toolcat.reader import Catalog

UPSTREAM = str(TESTS / "mcp" / "upstream_server.py")


def _tool(name: str, props: dict | None = None, *, env: dict | None = None) -> dict:
    handler: dict = {"type": "mcp", "command": ["python", UPSTREAM], "tool": name}
    if env:
        handler["env"] = env
    return {
        "id": f"up.srv.{name}" + ("_other" if env else ""),
        "summary": f"The upstream {name} tool.",
        "kind": "read",
        "args_schema": {"type": "object", "properties": props or {}},
        "handler": handler,
    }


@pytest.fixture(scope="module")
def upstream_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("upstream")
    tree = {
        "_node.yaml": {"title": "Upstream", "summary": "Tools on an upstream MCP server."},
        "up/_node.yaml": {"title": "Up", "summary": "Upstream tools."},
        "up/tools.yaml": {
            "tools": [
                _tool("pid"),
                _tool("add", {"a": {"type": "integer"}, "b": {"type": "integer"}}),
                _tool("fail", {"reason": {"type": "string"}}),
                _tool("pid", env={"TOOLCAT_TEST": "other"}),
            ]
        },
    }
    out = root / "build"
    build(write_tree(root / "src", tree), out)
    return out


@pytest.fixture
def catalog(upstream_build: Path):
    yield Catalog.open(upstream_build)
    close_upstreams()


def _pid(catalog: Catalog, op: str = "up.srv.pid") -> int:
    out = catalog.tool_exec(op, {})
    assert out["ok"], out
    return int(out["result"]["pid"])


def test_calls_to_one_server_share_a_session(catalog: Catalog) -> None:
    """The second call to the same server reuses its process; another env is another server."""
    first = _pid(catalog)
    assert catalog.tool_exec("up.srv.add", {"a": 2, "b": 40})["result"] == {"sum": 42}
    assert _pid(catalog) == first
    assert _pid(catalog, "up.srv.pid_other") != first
    failed = catalog.tool_exec("up.srv.fail", {"reason": "testing"})
    assert failed["error"]["code"] == "UPSTREAM_ERROR"
    assert "refused: testing" in failed["error"]["message"]
    assert _pid(catalog) == first  # an isError result leaves the session as it was


def test_a_dead_server_is_started_again(catalog: Catalog) -> None:
    """When the pooled server has died, the next call notices (a ping), starts a new one and succeeds."""
    first = _pid(catalog)
    os.kill(first, signal.SIGKILL)
    time.sleep(0.2)
    second = _pid(catalog)
    assert second != first


def test_close_stops_the_servers(catalog: Catalog) -> None:
    """close_upstreams() ends the sessions; their processes exit, and a later call starts afresh."""
    first = _pid(catalog)
    close_upstreams()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(first):
        time.sleep(0.05)
    assert not _alive(first)
    assert not POOL._sessions  # the pool's bookkeeping is what is under test
    assert _pid(catalog) != first


def test_a_process_with_pooled_sessions_exits_promptly(upstream_build: Path) -> None:
    """At interpreter exit the pool closes its sessions: the process ends, and so does its upstream server."""
    code = (
        "from toolcat.reader import Catalog\n"
        f"c = Catalog.open({str(upstream_build)!r})\n"
        "print(c.tool_exec('up.srv.pid', {})['result']['pid'])\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert time.monotonic() - started < 30
    upstream = int(done.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(upstream):
        time.sleep(0.05)
    assert not _alive(upstream)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes: it no longer runs
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:  # noqa: PTH123 - Linux procfs
            return stat.read().split()[2] != "Z"
    except OSError:
        return False

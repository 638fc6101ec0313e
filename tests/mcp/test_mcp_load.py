"""Serving under load and hostile upstreams (issue 23: 4, 5, 7, 10, 20; issue 24: upstream timeouts, restarts, stderr).

Each test names the defect it pins; the slow upstream, the flood and the noise come from
tests/mcp/hostile_upstream_server.py (the SDK's own server), driven through the real ``mcp`` handler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from support import TESTS, write_tree
from test_mcp_clients import TOOLCAT, connect, http_serving

from toolcat.build import build
from toolcat.cli import main
from toolcat.mcp import upstream
from toolcat.mcp.http_guard import ExposureError, exposure
from toolcat.mcp.upstream import MAX_RESULT_BLOCKS, Backoff, close_upstreams
from toolcat.reader import Catalog

UPSTREAM = str(TESTS / "mcp" / "hostile_upstream_server.py")
SECRET = "s3cret-TOKEN-value"  # noqa: S105 - a fake token, to show it never leaks
MATH_EVAL = "toolcat.examples.util:util_math_eval"


def _up(tool_id: str, name: str, props: dict[str, Any], **handler: Any) -> dict[str, Any]:
    return {
        "id": tool_id,
        "summary": f"The upstream {name} tool.",
        "kind": "read",
        "args_schema": {"type": "object", "properties": props},
        "handler": {"type": "mcp", "command": ["python", UPSTREAM], "tool": name, **handler},
    }


@pytest.fixture(scope="module")
def load_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalogue with a slow, a flooding, a noisy and a broken upstream tool, and a quick local one."""
    root = tmp_path_factory.mktemp("load")
    tools = [
        _up("up.slow.sleep", "sleep", {"seconds": {"type": "number"}}),
        _up("up.slow.flood", "flood", {"n": {"type": "integer"}}),
        _up("up.slow.noisy", "noisy", {}),
        {
            **_up("up.broken.start", "pid", {}),
            "handler": {
                "type": "mcp",
                "command": ["python", "-c", "import sys; sys.exit(3)", "--token", SECRET],
                "tool": "pid",
            },
        },
        {
            "id": "quick.math.eval",
            "summary": "Evaluate an arithmetic expression.",
            "kind": "read",
            "args_schema": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
            "handler": MATH_EVAL,
        },
    ]
    tree = {
        "_node.yaml": {"title": "Load", "summary": "Tools for the load tests."},
        "up/_node.yaml": {"title": "Up", "summary": "Upstream tools."},
        "up/tools.yaml": {"tools": tools[:4]},
        "quick/_node.yaml": {"title": "Quick", "summary": "Local tools."},
        "quick/tools.yaml": {"tools": tools[4:]},
    }
    out = root / "build"
    build(write_tree(root / "src", tree), out)
    return out


@pytest.fixture
def catalog(load_build: Path) -> Iterator[Catalog]:
    """The load catalogue with a 2 s handler timeout; upstream sessions closed after."""
    yield Catalog.open(load_build, timeout=2.0)
    close_upstreams()
    upstream.POOL._backoff.clear()


def test_slow_upstream_is_reported_as_a_timeout(catalog: Catalog) -> None:
    """A slow upstream answers UNAVAILABLE saying it timed out (it used to say 'cannot reach')."""
    out = catalog.tool_exec("up.slow.sleep", {"seconds": 10})
    assert out["error"]["code"] == "UNAVAILABLE"
    assert out["error"]["details"]["reason"] == "timeout"
    assert "timed out" in out["error"]["message"]
    assert "cannot reach" not in out["error"]["message"]


def test_handler_timeout_shortens_the_hosts(load_build: Path, catalog: Catalog) -> None:
    """A handler's own ``timeout`` below the host's is the one applied."""
    assert upstream.call_seconds({"timeout": 0.5}, 2.0) == 0.5
    assert upstream.call_seconds({"timeout": 50}, 2.0) == 2.0  # a catalogue cannot raise the host's limit
    assert upstream.call_seconds({"timeout": True}, 2.0) == 2.0


def test_huge_upstream_result_is_refused(load_build: Path) -> None:
    """More than MAX_RESULT_BLOCKS content blocks answer UPSTREAM_ERROR 'too large' instead of growing the reader."""
    # a generous limit: this test is about size, and starting the upstream on a loaded machine can take over 2 s
    catalog = Catalog.open(load_build, timeout=60.0)
    out = catalog.tool_exec("up.slow.flood", {"n": MAX_RESULT_BLOCKS + 1})
    assert out["error"]["code"] == "UPSTREAM_ERROR", out
    assert out["error"]["details"]["reason"] == "too_large"
    fine = catalog.tool_exec("up.slow.flood", {"n": 3})
    assert fine["ok"] is True
    close_upstreams()


def test_command_line_secret_never_shows_in_errors(catalog: Catalog) -> None:
    """An upstream that cannot start is named by its program only: its arguments (a token) stay out of the envelope."""
    out = catalog.tool_exec("up.broken.start", {})
    assert out["error"]["code"] == "UNAVAILABLE"
    assert SECRET not in json.dumps(out)
    assert "python" in out["error"]["message"]


def test_failed_start_waits_a_backoff_before_the_next(catalog: Catalog) -> None:
    """Right after a failed start the next call does not respawn the server: it says when it will retry."""
    first = catalog.tool_exec("up.broken.start", {})
    assert first["error"]["details"]["reason"] == "unreachable"
    second = catalog.tool_exec("up.broken.start", {})
    assert second["error"]["details"]["reason"] == "restarting"
    assert second["error"]["details"]["retry_after_s"] > 0


def test_backoff_doubles_and_resets_after_sustained_uptime() -> None:
    """Each failed start doubles the wait (to a cap); a session up for STABLE_SECONDS forgets the failures."""
    backoff = Backoff()
    waits = []
    for _ in range(10):
        backoff.failed(0.0)
        waits.append(backoff.wait(0.0))
    assert waits[:3] == [1.0, 2.0, 4.0]
    assert waits[-1] == upstream.MAX_BACKOFF_SECONDS
    pool = upstream.UpstreamPool()
    pool._backoff[("k",)] = backoff
    pool._settle_backoff(("k",), upstream.STABLE_SECONDS + 1, died=True)
    assert ("k",) not in pool._backoff
    pool._settle_backoff(("k",), 0.5, died=True)
    assert pool._backoff[("k",)].failures == 1


def test_upstream_stderr_goes_to_the_log_not_the_cli_output(load_build: Path) -> None:
    """`toolcat exec` of a tool whose upstream writes to stderr shows none of it."""
    proc = subprocess.run(
        [TOOLCAT, "exec", "up.slow.noisy", "--build", str(load_build), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    assert "UPSTREAM-NOISE-LINE" not in proc.stdout + proc.stderr


def test_serving_beyond_loopback_needs_allow_lists_or_a_token() -> None:
    """--host 0.0.0.0 without --allowed-host/--allowed-origin or --token-env is refused with the fix spelled out."""
    with pytest.raises(ExposureError, match="--token-env"):
        exposure("0.0.0.0")  # noqa: S104 - the case under test
    with pytest.raises(ExposureError):
        exposure("127.0.0.2".replace("127", "10"), ("h.example",), ())  # hosts without origins
    assert exposure("127.0.0.2").allowed_hosts  # any loopback keeps the DNS-rebinding checks
    guarded = exposure("0.0.0.0", token=True)  # noqa: S104
    assert guarded.token_required
    assert guarded.warnings  # said loudly
    result = CliRunner().invoke(main, ["serve", "--transport", "http", "--host", "0.0.0.0", "--build", "."])  # noqa: S104
    assert result.exit_code != 0
    assert "--allowed-host" in result.output


def test_token_guard_refuses_requests_without_the_token(load_build: Path) -> None:
    """With --token-env, a request without the bearer token gets 401; with it, the client works."""
    os.environ["TOOLCAT_TEST_TOKEN"] = SECRET
    try:
        with http_serving(load_build, "--token-env", "TOOLCAT_TEST_TOKEN") as url:
            refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
            assert refused.status_code == 401
            assert SECRET not in refused.text

            async def run() -> None:
                headers = {"Authorization": f"Bearer {SECRET}"}
                async with httpx.AsyncClient(headers=headers, timeout=30) as http:
                    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

                    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                        assert (await client.list_tools()).tools

            anyio.run(run)
    finally:
        del os.environ["TOOLCAT_TEST_TOKEN"]


def _initialize(url: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "leaky", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    return httpx.post(url, json=body, headers=headers, timeout=30)


def test_idle_sessions_are_evicted_so_new_clients_get_in(load_build: Path) -> None:
    """Past --max-sessions a new session ends the newest idle one of the busiest opener instead of getting 503."""
    with http_serving(load_build, "--max-sessions", "3") as url:
        opened = []
        for _ in range(6):  # sessions opened and never closed, all by one address
            answer = _initialize(url)
            assert answer.status_code == 200, answer.text
            opened.append(answer.headers["mcp-session-id"])
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
            "Mcp-Session-Id": opened[4],
        }
        gone = httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers, timeout=30)
        assert gone.status_code == 404  # the newest idle session was ended to admit the sixth
        for kept_id in (opened[0], opened[-1]):  # the oldest stays: a loop of opens evicts its own newest
            headers["Mcp-Session-Id"] = kept_id
            kept = httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers, timeout=30)
            assert kept.status_code == 200, kept.text


def test_one_slow_client_does_not_hold_up_another(load_build: Path) -> None:
    """A client's slow calls are cut at --call-timeout, and another client's quick call finishes meanwhile."""
    order: list[str] = []

    async def slow(url: str) -> None:
        async with Client(url, mode="legacy") as client, anyio.create_task_group() as group:
            for _ in range(3):  # more than --client-calls: the rest wait their turn, in this client only
                group.start_soon(_slow_call, client, order)

    async def quick(url: str) -> None:
        await anyio.sleep(0.5)
        async with Client(url, mode="legacy") as client:
            out = await client.call_tool("tool_exec", {"op": "quick.math.eval", "args": {"expression": "2+2"}})
            assert out.structured_content["ok"] is True  # type: ignore[index]
            order.append("quick")

    with http_serving(load_build, "--call-timeout", "3", "--client-calls", "1", "--timeout", "30") as url:

        async def run() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(slow, url)
                group.start_soon(quick, url)

        anyio.run(run)
    assert order[0] == "quick", order
    assert order.count("slow-cut") == 3, order


async def _slow_call(client: Client, order: list[str]) -> None:
    out = await client.call_tool("tool_exec", {"op": "up.slow.sleep", "args": {"seconds": 20}})
    envelope = out.structured_content or {}
    if envelope.get("error", {}).get("details", {}).get("timeout_s") == 3:
        order.append("slow-cut")
    else:
        order.append(f"slow:{envelope}")


@pytest.mark.parametrize("flag", ["--deny-namespace", "--allow-namespace"])
def test_serve_namespace_policy_flags_reach_the_catalog(load_build: Path, flag: str) -> None:
    """--deny-namespace up (or --allow-namespace quick) keeps the agent from running up.* tools."""
    value = "up" if flag == "--deny-namespace" else "quick"

    async def run() -> None:
        params = _stdio(load_build, flag, value)
        async with connect(params, "auto") as client:
            refused = await client.call_tool("tool_exec", {"op": "up.slow.noisy", "args": {}})
            assert refused.structured_content["error"]["code"] in {"NOT_AUTHORIZED", "TOOL_NOT_FOUND"}  # type: ignore[index]
            fine = await client.call_tool("tool_exec", {"op": "quick.math.eval", "args": {"expression": "1+1"}})
            assert fine.structured_content["ok"] is True  # type: ignore[index]

    anyio.run(run)


def test_require_expand_flag_refuses_a_call_before_its_spec_was_read(load_build: Path) -> None:
    """With --require-expand, the namespaced alias call before tool_describe answers NOT_AUTHORIZED pointing at it."""

    async def run() -> None:
        async with connect(_stdio(load_build, "--dialect", "namespaced", "--require-expand"), "auto") as client:
            early = await client.call_tool("quick_math_eval", {"expression": "1+1"})
            error = early.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "NOT_AUTHORIZED"
            assert error["next_action"]["op"] == "tool_describe"
            await client.call_tool("tool_describe", {"name": "quick.math.eval"})
            later = await client.call_tool("quick_math_eval", {"expression": "1+1"})
            assert later.structured_content["ok"] is True  # type: ignore[index]

    anyio.run(run)


def _stdio(build_dir: Path, *extra: str) -> Any:
    from mcp import StdioServerParameters  # noqa: PLC0415

    return StdioServerParameters(command=TOOLCAT, args=["serve", "--build", str(build_dir), *extra])


def test_python_is_the_running_interpreter() -> None:
    """``python`` in an mcp handler's command means this interpreter (the tests' upstream runs in the venv)."""
    assert upstream.server_command({"command": ["python", "x.py"]}, "t")[0] == sys.executable  # type: ignore[index]

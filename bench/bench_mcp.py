"""Load on the MCP server: many concurrent SDK clients run discovery flows over streamable HTTP (127.0.0.1).

Starts ``toolcat serve --transport http`` on a free 127.0.0.1 port over a build of
catalog_src (or --build), then runs ``--clients`` asyncio tasks (default 64), each with its
own SDK ``ClientSession``, repeating the gateway flow (tools/list → tool_help root → group →
operation → tool_exec with a bad argument (an expected isError) → tool_exec) until
``--seconds`` (default 15) have passed. Prints per-operation count, throughput, p50 and
p99 latency, and the failed calls (must be 0).

Then times the ``mcp`` handler against the SDK test server (tests/mcp_upstream_server.py over
stdio): a call on a new session each time (what every call cost before the session pool)
beside calls on the pooled session, in the same run.

    .venv/bin/python bench/bench_mcp.py [--clients 64] [--seconds 15] [--build DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TOOLCAT = str(Path(sys.executable).parent / "toolcat")
MAX_CLIENTS = 256
MAX_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def client(url: str, deadline: float, timings: dict[str, list[float]], failures: list[str]) -> int:
    import httpx2  # noqa: PLC0415 - the SDK's HTTP client
    from mcp import ClientSession  # noqa: PLC0415
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    flows = 0

    async def timed(name: str, call: Any, *, expect_error: bool = False) -> Any:
        started = time.perf_counter()
        try:
            result = await call
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            return None
        timings[name].append((time.perf_counter() - started) * 1000)
        if getattr(result, "is_error", False) != expect_error:
            failures.append(f"{name}: is_error={getattr(result, 'is_error', None)}")
        return result

    started = time.perf_counter()
    # plain http to 127.0.0.1: skip loading the CA bundle (53 ms of blocking work per client otherwise)
    http = httpx2.AsyncClient(verify=False, timeout=httpx2.Timeout(30, read=300))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        timings["initialize"].append((time.perf_counter() - started) * 1000)
        while time.perf_counter() < deadline:
            await timed("tools/list", session.list_tools())
            await timed("tool_help root", session.call_tool("tool_help", {"path": "root"}))
            await timed("tool_help group", session.call_tool("tool_help", {"path": "util.math"}))
            await timed("tool_help op", session.call_tool("tool_help", {"path": "util.math.eval"}))
            await timed(
                "tool_exec bad arg",
                session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": 7}}),
                expect_error=True,
            )
            await timed(
                "tool_exec",
                session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": f"{flows} * 3"}}),
            )
            flows += 1
    return flows


async def drive(url: str, clients: int, seconds: float) -> tuple[dict[str, list[float]], list[str], int, float]:
    timings: dict[str, list[float]] = defaultdict(list)
    failures: list[str] = []
    started = time.perf_counter()
    deadline = started + seconds
    results = await asyncio.wait_for(
        asyncio.gather(*(client(url, deadline, timings, failures) for _ in range(clients)), return_exceptions=True),
        timeout=seconds + 60,
    )
    elapsed = time.perf_counter() - started
    flows = 0
    for item in results:
        if isinstance(item, BaseException):
            failures.append(f"client: {type(item).__name__}: {item}")
        else:
            flows += item
    return timings, failures, flows, elapsed


def upstream_pool(tmp: Path, calls: int = 30) -> None:
    """tool_exec of an mcp-handled tool: a new session per call against the pooled session, side by side."""
    import yaml  # noqa: PLC0415

    from toolcat.build import build  # noqa: PLC0415
    from toolcat.mcp.upstream import close_upstreams  # noqa: PLC0415
    from toolcat.reader import Catalog  # noqa: PLC0415

    src = tmp / "upstream-src"
    (src / "up").mkdir(parents=True)
    (src / "_node.yaml").write_text(yaml.safe_dump({"title": "Upstream", "summary": "An upstream MCP server."}))
    (src / "up" / "_node.yaml").write_text(yaml.safe_dump({"title": "Up", "summary": "Upstream tools."}))
    handler = {"type": "mcp", "command": ["python", str(REPO / "tests" / "mcp_upstream_server.py")], "tool": "add"}
    tool = {
        "id": "up.math.add",
        "summary": "Add two integers upstream.",
        "kind": "read",
        "handler": handler,
        "args_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    }
    (src / "up" / "tools.yaml").write_text(yaml.safe_dump({"tools": [tool]}))
    build(src, tmp / "upstream-build")
    catalog = Catalog.open(tmp / "upstream-build")

    def timed() -> float:
        started = time.perf_counter()
        out = catalog.tool_exec("up.math.add", {"a": 1, "b": 2})
        assert out["ok"], out
        return (time.perf_counter() - started) * 1000

    fresh = []
    for _ in range(max(3, calls // 6)):
        close_upstreams()
        fresh.append(timed())
    pooled = [timed() for _ in range(calls)]
    close_upstreams()
    print()
    print("mcp handler (stdio upstream, tests/mcp_upstream_server.py), tool_exec wall time:")
    print(f"| {'session':<28} | {'calls':>5} | {'median ms':>9} | {'max ms':>8} |")
    print(f"|{'-' * 30}|{'-' * 7}|{'-' * 11}|{'-' * 10}|")
    for label, values in (("new session per call", fresh), ("pooled session", pooled)):
        print(f"| {label:<28} | {len(values):>5} | {statistics.median(values):>9.1f} | {max(values):>8.1f} |")
    print(f"pooled / new: {statistics.median(pooled) / statistics.median(fresh):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--build", type=Path, default=None, help="A build folder (default: build catalog_src).")
    args = parser.parse_args()
    clients = max(50, min(MAX_CLIENTS, args.clients))
    seconds = max(1.0, min(MAX_SECONDS, args.seconds))
    with tempfile.TemporaryDirectory() as tmp:
        build_dir = args.build
        if build_dir is None:
            from toolcat.build import build  # noqa: PLC0415

            build_dir = Path(tmp) / "build"
            build(REPO / "catalog_src", build_dir)
        port = free_port()
        server = subprocess.Popen(
            [TOOLCAT, "-q", "serve", "--build", str(build_dir), "--transport", "http", "--port", str(port)],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert server.stderr is not None
            line = server.stderr.readline()
            assert "listening on" in line, line
            url = f"http://127.0.0.1:{port}/mcp"
            timings, failures, flows, elapsed = asyncio.run(drive(url, clients, seconds))
        finally:
            server.terminate()
            server.wait(10)
    print(
        f"MCP over streamable HTTP, 127.0.0.1: {clients} concurrent SDK clients, {elapsed:.1f} s, "
        f"{flows} discovery flows ({os.cpu_count()} CPUs)"
    )
    print()
    print(f"| {'operation':<18} | {'calls':>7} | {'calls/s':>8} | {'p50 ms':>8} | {'p99 ms':>8} | {'max ms':>8} |")
    print(f"|{'-' * 20}|{'-' * 9}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    total = 0
    for name, values in timings.items():
        total += len(values)
        print(
            f"| {name:<18} | {len(values):>7} | {len(values) / elapsed:>8.1f} | {statistics.median(values):>8.1f} "
            f"| {percentile(values, 0.99):>8.1f} | {max(values):>8.1f} |"
        )
    print(f"| {'all calls':<18} | {total:>7} | {total / elapsed:>8.1f} | {'':>8} | {'':>8} | {'':>8} |")
    print()
    print(f"failed calls: {len(failures)}")
    for failure in failures[:10]:
        print(f"  {failure}")
    with tempfile.TemporaryDirectory() as tmp:
        upstream_pool(Path(tmp))
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()

"""CPU seconds an MCP server spends before its first answers: ``toolcat serve`` beside a FastMCP hello server.

Each server is started over stdio as a client starts it; the bench sends ``initialize`` (protocol 2025-11-25),
``notifications/initialized`` and ``tools/list``, and reads the process's CPU time (user + system, from
``/proc/<pid>/stat``) when each answer arrives, plus the wall time. The hello server is FastMCP's own one-tool
example (``@mcp.tool def hello(name)``). The target (issue 35): ``toolcat serve`` answers ``initialize`` and the
first ``tools/list`` in under 1 s of CPU on the example catalogue. Runs are repeated (``--repeat``, median kept).

    .venv/bin/python bench/bench_start.py [--repeat 5] [--build build]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOLCAT = str(Path(sys.executable).parent / "toolcat")
TARGET_CPU_S = 1.0
HELLO = '''
from fastmcp import FastMCP

mcp = FastMCP("hello")


@mcp.tool
def hello(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    mcp.run(show_banner=False)
'''
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


#: The client's first message, in the handshake era (2025-11-25), over stdio and HTTP alike.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def first_answers(argv: list[str]) -> tuple[float, float, float, float]:
    """(CPU at initialize, CPU at tools/list, wall at initialize, wall at tools/list) of one fresh server."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert "result" in answer, answer
        cpu_init, wall_init = cpu_seconds(proc.pid), time.perf_counter() - started
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())
        assert listed.get("result", {}).get("tools"), listed
        return cpu_init, cpu_seconds(proc.pid), wall_init, time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()


def _post(url: str, message: dict[str, object], session: str | None) -> tuple[dict[str, object], str | None]:
    """One JSON-RPC request over streamable HTTP (JSON responses); its answer and the session id header."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    request = urllib.request.Request(url, json.dumps(message).encode(), headers, method="POST")  # noqa: S310
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 - a loopback URL this bench started
        body = response.read()
        return (json.loads(body) if body else {}), response.headers.get("mcp-session-id") or session


def first_answers_http(argv: list[str]) -> tuple[float, float, float, float]:
    """As :func:`first_answers`, over streamable HTTP (``--transport http --port 0``; the URL is read from stderr)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen([*argv, "--transport", "http", "--port", "0"], stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    try:
        url = ""
        while not url:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("the server exited before listening")
            url = next((word for word in line.split() if word.startswith("http://")), "")
        answer, session = _post(url, INITIALIZE, None)
        assert "result" in answer, answer
        cpu_init, wall_init = cpu_seconds(proc.pid), time.perf_counter() - started
        _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        listed, _ = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        assert listed.get("result"), listed
        return cpu_init, cpu_seconds(proc.pid), wall_init, time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()


def main() -> int:
    """Print the table; exit 1 when toolcat serve misses the CPU target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--build", default=str(REPO / "build"))
    options = parser.parse_args()
    if not (Path(options.build) / "catalog.json").is_file():
        print(f"no build at {options.build}: run make build first")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        hello = Path(tmp) / "hello_server.py"
        hello.write_text(HELLO)
        servers = {
            "toolcat serve (gateway)": [TOOLCAT, "serve", "--build", options.build, "--dialect", "gateway"],
            "toolcat serve (namespaced)": [TOOLCAT, "serve", "--build", options.build, "--dialect", "namespaced"],
            "FastMCP hello (1 tool)": [sys.executable, str(hello)],
        }
        rows = {name: [first_answers(argv) for _ in range(options.repeat)] for name, argv in servers.items()}
        http = servers["toolcat serve (gateway)"]
        rows["toolcat serve (gateway, HTTP)"] = [first_answers_http(http) for _ in range(options.repeat)]
    print(
        f"CPU to first answers (stdio unless marked), median of {options.repeat} fresh starts each (same run, {os.cpu_count()} CPUs)"
    )
    print()
    print("| server | CPU s to initialize | CPU s to tools/list | wall s to tools/list |")
    print("|---|---|---|---|")
    medians = {}
    for name, runs in rows.items():
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        medians[name] = med
        print(f"| {name} | {med[0]:.2f} | {med[1]:.2f} | {med[3]:.2f} |")
    hello_cpu = medians["FastMCP hello (1 tool)"][1]
    worst = max(m[1] for name, m in medians.items() if name.startswith("toolcat"))
    print()
    print(f"toolcat / FastMCP hello, CPU to tools/list: {worst / hello_cpu:.2f}x; target < {TARGET_CPU_S:g} s of CPU")
    return 0 if worst < TARGET_CPU_S else 1


if __name__ == "__main__":
    sys.exit(main())

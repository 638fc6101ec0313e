"""Fair sharing under load (issue 36): another client's call while 10 identities saturate `toolcat serve`.

Ten identities (each its own `toolcat_client` key, as ten SDK clients would be) keep FLOOD calls each in
flight over stateless HTTP; a separate client sends a quick call (util.math.eval) every half second for
SECONDS and records how long each answer took. Two loads, each against two servers side by side:

* **long**: the flood's calls sleep 8 s and finish within the limit (the server is saturated with real work);
* **hung**: the flood's calls sleep 60 s, so each is cut at `--call-timeout` (10 s) while its thread runs on.

`fair` is `toolcat serve` as shipped (`--max-calls 32`, `--client-calls 4`: a global bound, per-identity
shares, a free slot to the least-served identity, cut calls' threads counted); `per-client only` is
`--max-calls 1024`, which leaves only the per-identity bound, as before issue 36. Each row: the other
client's calls answered within the call limit, their median and worst latency, and the server's most
threads during the run.

    make bench-fairness                       # 10 identities x 8 calls, 15 s per row
    FAIR_FLOOD=16 FAIR_SECONDS=20 make bench-fairness
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from toolcat.build import build

IDENTITIES = 10
FLOOD = int(os.environ.get("FAIR_FLOOD", "8"))
SECONDS = float(os.environ.get("FAIR_SECONDS", "15"))
CALL_TIMEOUT = 10.0
TOOLCAT = str(Path(sys.executable).parent / "toolcat")
MODERN = "2026-07-28"
NAP = "import time\n\n\ndef nap(args):\n    time.sleep(float(args.get('seconds', 1)))\n    return {'slept': True}\n"


def _catalogue(root: Path) -> Path:
    (root / "py").mkdir(parents=True)
    (root / "py" / "benchnap.py").write_text(NAP, encoding="utf-8")
    tools = [
        {
            "id": "quick.math.eval",
            "summary": "Evaluate an arithmetic expression.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"expression": {"type": "string"}}},
            "handler": "toolcat.examples.util:util_math_eval",
        },
        {
            "id": "quick.slow.nap",
            "summary": "Sleep for some seconds.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
            "handler": "benchnap:nap",
        },
    ]
    src = root / "src"
    (src / "quick").mkdir(parents=True)
    (src / "_node.yaml").write_text(yaml.safe_dump({"title": "Bench", "summary": "Fairness bench."}))
    (src / "quick" / "_node.yaml").write_text(yaml.safe_dump({"title": "Quick", "summary": "Tools."}))
    (src / "quick" / "tools.yaml").write_text(yaml.safe_dump({"tools": tools}))
    build(src, root / "build")
    return root / "build"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _server(build_dir: Path, state: Path, *extra: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = _free_port()
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONPATH": str(build_dir.parent / "py")}
    argv = [TOOLCAT, "serve", "--build", str(build_dir), "--transport", "http", "--port", str(port), "--poll", "0"]
    argv += ["--call-timeout", str(CALL_TIMEOUT), "--drain-seconds", "0", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and "listening on" not in proc.stderr.readline():
        if proc.poll() is not None:
            raise SystemExit(f"toolcat serve exited with {proc.returncode}")
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep its stderr pipe drained
    try:
        yield port, proc
    finally:
        proc.kill()
        proc.wait(15)


def _call(port: int, arguments: dict[str, Any], client: str, timeout: float) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": meta, "name": "tool_exec", "arguments": arguments},
        }
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "tool_exec",
        "cookie": f"toolcat_client={client}",
    }
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/mcp", body, headers)
        data = connection.getresponse().read()
    finally:
        connection.close()
    answer: dict[str, Any] = json.loads(data)["result"]["structuredContent"]
    return answer


def _threads(proc: subprocess.Popen[str]) -> int:
    try:
        return len(os.listdir(f"/proc/{proc.pid}/task"))  # noqa: PTH208 - a count of /proc entries
    except OSError:
        return 0


def run(build_dir: Path, state: Path, nap: float, extra: tuple[str, ...]) -> dict[str, Any]:
    """One row: the flood against a server, and the other client's latencies."""
    with _server(build_dir, state, *extra) as (port, proc):
        stop = threading.Event()
        flood_done = [0]

        def flood(identity: int) -> None:
            client = f"{identity:032x}"
            while not stop.is_set():
                with contextlib.suppress(OSError, ValueError, KeyError):
                    _call(port, {"op": "quick.slow.nap", "args": {"seconds": nap}}, client, 120)
                    flood_done[0] += 1

        workers = [
            threading.Thread(target=flood, args=(i,), daemon=True) for i in range(IDENTITIES) for _ in range(FLOOD)
        ]
        for worker in workers:
            worker.start()
        time.sleep(2.0)  # the flood is in full swing
        latencies: list[float] = []
        answered = 0
        most_threads = 0
        ends = time.monotonic() + SECONDS
        other = "f" * 32
        while time.monotonic() < ends:
            started = time.monotonic()
            try:
                answer = _call(port, {"op": "quick.math.eval", "args": {"expression": "6*7"}}, other, 60)
                ok = answer.get("ok") is True
            except (OSError, ValueError, KeyError):
                ok = False
            took = time.monotonic() - started
            latencies.append(took)
            answered += int(ok and took <= CALL_TIMEOUT)
            most_threads = max(most_threads, _threads(proc))
            time.sleep(max(0.0, 0.5 - took))
        stop.set()
        flood_calls = flood_done[0]
    return {
        "calls": len(latencies),
        "answered": answered,
        "p50": statistics.median(latencies),
        "max": max(latencies),
        "threads": most_threads,
        "flood_per_s": flood_calls / (SECONDS + 2.0),
    }


def _cpu() -> str:
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "unknown CPU"
    model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("Model name")), "?")
    cores = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("CPU(s)")), "?")
    flags = " ".join(f for f in ("avx512f", "avx512_vnni") if f in info)
    return f"{model}, {cores} CPU(s), {flags or 'no AVX-512'}"


def main() -> None:
    """Print one table: load x server, the other client's answers within the limit and latencies."""
    print(f"CPU: {_cpu()}")
    print(
        f"{IDENTITIES} identities x {FLOOD} calls in flight each; the other client calls every 0.5 s for "
        f"{SECONDS:g} s; --call-timeout {CALL_TIMEOUT:g} s"
    )
    servers = {"fair (as shipped)": (), "per-client only": ("--max-calls", "1024")}
    with tempfile.TemporaryDirectory() as tmp:
        build_dir = _catalogue(Path(tmp) / "cat")
        print(f"{'load':<6} {'server':<18} {'answered':>10} {'p50 s':>7} {'max s':>7} {'threads':>8} {'flood/s':>8}")
        for load, nap in (("long", 8.0), ("hung", 60.0)):
            for label, extra in servers.items():
                row = run(build_dir, Path(tmp) / f"state-{load}-{len(extra)}", nap, extra)
                answered = f"{row['answered']}/{row['calls']}"
                print(
                    f"{load:<6} {label:<18} {answered:>10} {row['p50']:>7.2f} {row['max']:>7.2f} "
                    f"{row['threads']:>8} {row['flood_per_s']:>8.1f}"
                )
                sys.stdout.flush()


if __name__ == "__main__":
    main()

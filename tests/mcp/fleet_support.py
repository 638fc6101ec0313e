"""Real parts for the fleet tests and bench: a Redis server, toolcat replicas, HAProxy, and a small HTTP load client."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support import free_port

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
REDIS = shutil.which("redis-server")
HAPROXY = shutil.which("haproxy")
MISSING = ", ".join(name for name, path in (("redis-server", REDIS), ("haproxy", HAPROXY)) if path is None)
#: The reason the real-parts tests skip where `make fleet` could not install them.
SKIP_REASON = f"{MISSING} not installed (make fleet installs Debian's redis-server and haproxy where apt can)"


def wait_port(port: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


class RedisServer:
    """Debian's redis-server on a free port, without persistence (a restart loses everything, on purpose)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The --state URL of this server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart, on the same port) and wait until it listens."""
        assert REDIS is not None
        args = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self) -> None:
        """Stop the server (its records are gone: no persistence)."""
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Replica:
    """One `toolcat serve --transport http` process."""

    def __init__(
        self, build: Path, state: str | None, dialect: str = "gateway", *extra: str, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.args = [TOOLCAT, "serve", "--build", str(build), "--transport", "http", "--port", str(self.port)]
        self.args += [*(["--state", state] if state is not None else []), "--dialect", dialect, "--poll", "0.5", *extra]
        environ = {**os.environ, **(env or {})}
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environ
        )

    @property
    def url(self) -> str:
        """The replica's own /mcp endpoint (bypassing the balancer)."""
        return f"http://127.0.0.1:{self.port}/mcp"

    def wait(self) -> None:
        """Wait for the line saying it listens."""
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert "listening on" in line, line
        threading.Thread(target=self.process.stderr.read, daemon=True).start()  # keep draining its log

    def stop(self, sig: str = "term") -> int | None:
        """SIGTERM (drain) or SIGKILL it; its exit code."""
        if self.process.poll() is None:
            self.process.kill() if sig == "kill" else self.process.terminate()
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None


HAPROXY_CONFIG = """global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout check 5s
    retries 2
    option redispatch 1
    retry-on conn-failure empty-response 503
{frontends}"""
FRONTEND = """frontend fe_{name}
    bind 127.0.0.1:{port}
    default_backend be_{name}
backend be_{name}
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
{servers}
"""


@contextlib.contextmanager
def haproxy(pools: dict[str, list[Replica]], folder: Path) -> Iterator[dict[str, str]]:
    """HAProxy (roundrobin, no stickiness) in front of each pool; yields each pool's /mcp URL."""
    assert HAPROXY is not None
    ports = {name: free_port() for name in pools}
    frontends = ""
    for name, replicas in pools.items():
        servers = "\n".join(
            f"    server r{i} 127.0.0.1:{r.port} check inter 1s fall 3 rise 1" for i, r in enumerate(replicas)
        )
        frontends += FRONTEND.format(name=name, port=ports[name], servers=servers)
    config = folder / "haproxy.cfg"
    config.write_text(HAPROXY_CONFIG.format(frontends=frontends), encoding="utf-8")
    process = subprocess.Popen([HAPROXY, "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for port in ports.values():
            wait_port(port)
        yield {name: f"http://127.0.0.1:{port}/mcp" for name, port in ports.items()}
    finally:
        process.terminate()
        process.wait(10)


def call(
    url: str, name: str, arguments: dict[str, Any], timeout: float = 30.0, client: str | None = None
) -> dict[str, Any]:
    """One stateless tools/call (2025-11-25 era, no session) over HTTP; returns the JSON-RPC answer.

    ``client`` is a client key (32 hex digits) sent as the ``toolcat_client`` cookie a server issues, as the
    SDK's HTTP client sends it back: calls with one key are one client on every replica; without one, each
    connection is its own client (docs/security.md, "Who a client is").

    Raises OSError / http.client.HTTPException when the connection fails, and RuntimeError(status) on
    a non-200 answer (a draining replica's 503, a load balancer's 502): both are retryable.
    """
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    if client is not None:
        headers["cookie"] = f"toolcat_client={client}"
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("POST", "/mcp", body, headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {data[:200]!r}")
    answer: dict[str, Any] = json.loads(data)
    return answer


def get(url: str, path: str) -> tuple[int, dict[str, Any]]:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def load_run(url: str, clients: int, seconds: float, during: Any = None) -> dict[str, Any]:
    """``clients`` threads calling tool_exec through ``url`` for ``seconds``; counts, failures and latencies.

    A call fails when the transport fails or the answer is not ``ok: true``; ``during()`` runs once,
    halfway through.
    """
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(index: int) -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            started = time.perf_counter()
            try:
                answer = call(url, "tool_exec", {"op": "util.math.eval", "args": {"expression": f"{index} + {n}"}})
                ok = answer["result"]["structuredContent"]["ok"] is True
                problem = None if ok else json.dumps(answer["result"]["structuredContent"])[:200]
            except (OSError, http.client.HTTPException, RuntimeError, KeyError, ValueError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            with lock:
                if problem is None:
                    latencies.append(time.perf_counter() - started)
                else:
                    failures.append(problem)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    if during is not None:
        time.sleep(seconds / 2)
        during()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else 0.0

    return {
        "calls": len(latencies) + len(failures),
        "ok": len(latencies),
        "failures": failures,
        "throughput": len(latencies) / elapsed,
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
    }

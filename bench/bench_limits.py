"""How fast two limits reach their clean end (issue 36): the OpenAPI `$ref` fan-out budget and the session cap.

* **fan-out**: a spec whose schemas each name the next ten times (10^12 objects) stops at the budget of
  1,000,000 schema objects with an ImporterError; the row gives the seconds to that error.
* **sessions**: `toolcat serve --max-sessions CAP` while one address opens SESSIONS handshake-era sessions
  in a row (each beyond the cap evicts that opener's newest idle one); the row gives the opens per second
  and the seconds to pass the cap tenfold, and checks that the first session still answers.

    make bench-limits
    LIMITS_SESSIONS=3000 make bench-limits
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolcat.build import build
from toolcat.importers.common import ImporterError
from toolcat.importers.openapi.operations import import_openapi

REPO = Path(__file__).resolve().parent.parent
TOOLCAT = str(Path(sys.executable).parent / "toolcat")
CAP = int(os.environ.get("LIMITS_CAP", "100"))
SESSIONS = int(os.environ.get("LIMITS_SESSIONS", str(CAP * 10)))


def fan_out(folder: Path) -> float:
    """Seconds until a 10-way, 12-level $ref fan-out stops at the 1,000,000-object budget."""
    schemas = {
        f"s{i}": {"type": "object", "properties": {k: {"$ref": f"#/components/schemas/s{i + 1}"} for k in "abcdefghij"}}
        for i in range(12)
    }
    schemas["s12"] = {"type": "string"}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/s0"}}}}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Fan", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {"post": {"operationId": "x", "requestBody": body, "responses": {"200": {"description": "ok"}}}}
        },
        "components": {"schemas": schemas},
    }
    (folder / "fan.json").write_text(json.dumps(spec), encoding="utf-8")
    started = time.perf_counter()
    try:
        import_openapi(str(folder / "fan.json"), namespace="fan", out=folder / "out")
    except ImporterError as exc:
        if "1,000,000 schema objects" not in str(exc):
            raise SystemExit(f"the fan-out stopped for another reason: {exc}") from None
    else:
        raise SystemExit("the fan-out was imported: the budget did not stop it")
    return time.perf_counter() - started


def _post(port: int, body: dict[str, object], session: str | None = None) -> http.client.HTTPResponse:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    if session:
        headers["mcp-session-id"] = session
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/mcp", json.dumps(body), headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def sessions(folder: Path) -> tuple[float, float, int]:
    """(opens per second, seconds for SESSIONS opens, the first session's status after them)."""
    build(REPO / "catalog_src", folder / "build")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
    argv = [TOOLCAT, "serve", "--build", str(folder / "build"), "--transport", "http", "--port", str(port)]
    argv += ["--max-sessions", str(CAP), "--poll", "0", "--drain-seconds", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        while "listening on" not in proc.stderr.readline():
            if proc.poll() is not None:
                raise SystemExit("toolcat serve did not start")
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "0"},
            },
        }
        first = _post(port, initialize).getheader("mcp-session-id")
        started = time.perf_counter()
        for _ in range(SESSIONS):
            _post(port, initialize)
        took = time.perf_counter() - started
        status = _post(port, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, first).status
    finally:
        proc.kill()
        proc.wait(15)
    return SESSIONS / took, took, status


def main() -> None:
    """Print the two rows."""
    info = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("Model name")), "?")
    print(f"CPU: {model}, {os.cpu_count()} CPU(s), {'avx512f' if 'avx512f' in info else 'no AVX-512'}")
    with tempfile.TemporaryDirectory() as tmp:
        seconds = fan_out(Path(tmp))
        print(f"fan-out   1,000,000-object budget reached in {seconds:.2f} s")
        rate, took, status = sessions(Path(tmp))
        print(
            f"sessions  {SESSIONS:,} opens past --max-sessions {CAP}: {took:.1f} s ({rate:.0f}/s); "
            f"the first session answers {status}"
        )


if __name__ == "__main__":
    main()

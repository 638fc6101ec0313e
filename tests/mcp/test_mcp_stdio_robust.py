"""``toolcat serve`` over stdio answers every bad line with a JSON-RPC error and keeps serving (raw pipes, timeouts)."""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO, write_tree

from toolcat.build import build
from toolcat.mcp.stdio import MAX_DEPTH, MAX_LINE_BYTES, LineFramer, Oversize, check_line, top_level_id

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
READ_TIMEOUT = 10.0
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class RawServer:
    """``toolcat serve`` as a subprocess, spoken to with raw bytes; every read has a timeout."""

    def __init__(self, build_dir: Path) -> None:
        self.process = subprocess.Popen(
            [TOOLCAT, "serve", "--build", str(build_dir), "--poll", "0"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buffer = b""
        self._ids = itertools.count(1000)

    def send(self, raw: bytes) -> None:
        """Write ``raw`` and a newline to the server's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def read(self, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """The next JSON line from stdout; fails (instead of hanging) when none comes within ``timeout``."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            if not ready:
                pytest.fail(f"no reply from the server within {timeout} s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            if not chunk:
                pytest.fail("the server closed stdout")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a well-formed request and return its response."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())
        reply = self.read()
        assert reply.get("id") == request_id, reply
        return reply

    def ping(self) -> None:
        """A ping answered next proves the server is alive and that nothing else was queued before it."""
        assert self.request("ping")["result"] == {}

    def rss_kib(self, field: str = "VmHWM") -> int:
        """The server's peak (or current) resident memory, from /proc."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        line = next(row for row in status.splitlines() if row.startswith(field + ":"))
        return int(line.split()[1])

    def close(self) -> None:
        """Close stdin (the server exits at end of input) and reap it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-tool catalogue compiled once for this module."""
    root = tmp_path_factory.mktemp("stdio")
    src = write_tree(
        root / "src",
        {
            "_node.yaml": {"title": "Tiny", "summary": "One tool for the stdio robustness tests."},
            "tiny/_node.yaml": {"title": "Tiny tools", "summary": "Arithmetic."},
            "tiny/tools.yaml": {
                "tools": [
                    {
                        "id": "tiny.math.eval",
                        "summary": "Evaluate an arithmetic expression exactly.",
                        "kind": "read",
                        "args_schema": {
                            "type": "object",
                            "properties": {"expression": {"type": "string"}},
                            "required": ["expression"],
                        },
                        "handler": "toolcat.examples.util:util_math_eval",
                    }
                ]
            },
        },
    )
    build(src, root / "build")
    return root / "build"


@pytest.fixture(scope="module")
def server(tiny_build: Path) -> Iterator[RawServer]:
    """One initialized server for the module's raw exchanges."""
    raw = RawServer(tiny_build)
    init = raw.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    )
    assert "result" in init, init
    raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield raw
    raw.close()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


ANSWERED = [
    (b"not json", None, PARSE_ERROR),
    (b"{", None, PARSE_ERROR),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', None, PARSE_ERROR),
    (b"\xff\xfe\x00binary\x01", None, PARSE_ERROR),
    (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', None, PARSE_ERROR),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', None, PARSE_ERROR),
    (b"[1,2]", None, INVALID_REQUEST),
    (b"[]", None, INVALID_REQUEST),
    (b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]', None, INVALID_REQUEST),
    (b"42", None, INVALID_REQUEST),
    (b'"ping"', None, INVALID_REQUEST),
    (b"null", None, INVALID_REQUEST),
    (b"{}", None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":7}', 7, INVALID_REQUEST),
    (b'{"jsonrpc":"1.0","id":8,"method":"ping"}', 8, INVALID_REQUEST),
    (b'{"id":"nine","method":"ping"}', "nine", INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":10,"method":5}', 10, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":11,"method":"nope/nope"}', 11, METHOD_NOT_FOUND),
    (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":"wrong"}', 12, INVALID_PARAMS),
    (b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":[1]}', 13, INVALID_PARAMS),
    (b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":5}}', 14, INVALID_PARAMS),
    (
        b'{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"a":' + _nested(200).encode() + b"}}",
        15,
        INVALID_REQUEST,
    ),
    (
        b'{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"a":' + _nested(10_000).encode() + b"}}",
        16,
        INVALID_REQUEST,
    ),
    (
        b'{"jsonrpc":"2.0","method":"tools/list","params":{"a":' + _nested(10_000).encode() + b'},"id":"late"}',
        "late",
        INVALID_REQUEST,
    ),
    (_nested(100_000).encode(), None, INVALID_REQUEST),
]


@pytest.mark.parametrize(
    ("line", "expected_id", "code"), ANSWERED, ids=[f"{i}-{case[0][:24]!r}" for i, case in enumerate(ANSWERED)]
)
def test_bad_line_gets_a_json_rpc_error_and_the_server_keeps_serving(
    server: RawServer, line: bytes, expected_id: Any, code: int
) -> None:
    """Garbage, batches, wrong shapes and deep nesting each get one error with the readable id; a ping then works."""
    server.send(line)
    reply = server.read()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == expected_id
    assert reply["error"]["code"] == code, reply
    assert reply["error"]["message"]
    server.ping()


SILENT = [
    b"",
    b"   \t\r",
    b'{"jsonrpc":"2.0","method":"tools/list"}',
    b'{"jsonrpc":"2.0","method":"notifications/unknown","params":"wrong"}',
    b'{"jsonrpc":"1.0","method":"notifications/cancelled"}',
    b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":' + _nested(500).encode() + b"}}",
    b'{"jsonrpc":"2.0","id":424242,"result":{}}',
    b'{"jsonrpc":"2.0","id":424243,"error":"not an object"}',
]


@pytest.mark.parametrize("line", SILENT, ids=[f"{i}-{line[:24]!r}" for i, line in enumerate(SILENT)])
def test_blank_lines_notifications_and_responses_get_no_reply(server: RawServer, line: bytes) -> None:
    """Per JSON-RPC nothing answers a notification or a response, even a bad one; the next request is answered."""
    server.send(line)
    server.ping()


def test_valid_requests_still_work_after_garbage(server: RawServer) -> None:
    """After a burst of garbage a tools/list and a tools/call with arguments nested 50 deep are answered normally."""
    for line, _, _ in ANSWERED[:6]:
        server.send(line)
    for _ in range(6):
        assert "error" in server.read()
    listed = server.request("tools/list")
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["tool_help", "tool_exec", "tool_batch"]
    deep: Any = "x"
    for _ in range(50):
        deep = [deep]
    called = server.request(
        "tools/call", {"name": "tool_exec", "arguments": {"tool_id": "tiny.math.eval", "args": {"expression": deep}}}
    )
    assert called["result"]["isError"] is True  # a VALIDATION_ERROR envelope, not a protocol error
    assert called["result"]["structuredContent"]["error"]["code"] == "VALIDATION_ERROR"


def test_a_line_longer_than_the_limit_is_refused_with_bounded_memory(tiny_build: Path) -> None:
    """A 64 MiB line is streamed away (peak RSS grows far less than 64 MiB) and answered with its id."""
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the server's peak memory from /proc")
    raw = RawServer(tiny_build)
    try:
        raw.ping()
        before = raw.rss_kib("VmRSS")
        assert raw.process.stdin is not None
        raw.process.stdin.write(
            b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"tool_help","arguments":{"path":"'
        )
        block = b"a" * (1 << 20)
        for _ in range(64):
            raw.process.stdin.write(block)
        raw.send(b'"}}}')
        reply = raw.read(timeout=30)
        assert reply["id"] == "big"
        assert reply["error"]["code"] == INVALID_REQUEST
        assert str(MAX_LINE_BYTES) in reply["error"]["message"]
        raw.ping()
        grown_mib = (raw.rss_kib("VmHWM") - before) / 1024
        assert grown_mib < 32, f"the server's peak RSS grew by {grown_mib:.0f} MiB for a 64 MiB line"
    finally:
        raw.close()


def test_end_of_input_in_the_middle_of_a_huge_line_ends_the_server(tiny_build: Path) -> None:
    """A line that never ends (8 MiB, then EOF) does not hang the server: it exits once stdin closes."""
    raw = RawServer(tiny_build)
    assert raw.process.stdin is not None
    raw.process.stdin.write(b"{" + b" " * (8 << 20))
    raw.process.stdin.flush()
    raw.process.stdin.close()
    assert raw.process.wait(30) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=12), st.data())
def test_framer_splits_any_chunking_like_split(pieces: list[bytes], data: st.DataObject) -> None:
    """However the bytes arrive, the framer yields the newline-separated lines (the last one at end of input)."""
    stream = b"".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    framer = LineFramer(max_bytes=30, prefix_bytes=5)
    lines: list[bytes | Oversize] = []
    for start, end in itertools.pairwise([0, *cuts, len(stream)]):
        lines.extend(framer.feed(stream[start:end]))
    lines.extend(framer.finish())
    expected = stream.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    assert len(lines) == len(expected)
    for got, want in zip(lines, expected, strict=True):
        if len(want) > 30:
            assert got == Oversize(want[:5], len(want))
        else:
            assert got == want


def test_top_level_id_is_found_only_at_depth_one() -> None:
    """The id of a too-deep or truncated message is read from the top-level object, never from a nested one."""
    assert top_level_id('{"params":{"id":1},"id":2}') == 2
    assert top_level_id('{"a":"\\"id\\":3","id":"x"}') == "x"
    assert top_level_id('{"id": 7, "params": {"a": [[[[') == 7
    assert top_level_id('{"params":' + "[" * 5000 + "]" * 5000 + ',"id":9}') == 9
    assert top_level_id('{"id":{"x":1}}') is None
    assert top_level_id('{"id":true}') is None
    assert top_level_id("[[[[") is None


def test_check_line_depth_limit_is_exact() -> None:
    """A message nested exactly MAX_DEPTH levels is passed on; one level more is refused with its id."""

    def message(depth: int) -> bytes:
        inner = _nested(depth - 2)  # the envelope and params add two levels
        return f'{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{inner}}}}}'.encode()

    assert not hasattr(check_line(message(MAX_DEPTH)), "code")
    refused = check_line(message(MAX_DEPTH + 1))
    assert getattr(refused, "code", None) == INVALID_REQUEST
    assert getattr(refused, "id", None) == 1

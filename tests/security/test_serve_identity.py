"""One client is one client (issue 36): who a client of `toolcat serve` is, what is scoped by it, and its fair share.

Each test pins a defect of the third attack pass: clients on one address shared replayed answers, a client
chose its scope with X-Forwarded-For, two servers with different sandboxes read each other's answers through
the default state file, free identities starved another client, a cut call kept its thread, slow headers
held file descriptors forever, and a loop of session opens evicted an old client's session.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from support import free_port, write_tree

from toolcat.build import build
from toolcat.mcp.fairness import FairShares

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
SLOW_MODULE = """
import time


def nap(args):
    time.sleep(float(args.get("seconds", 1)))
    return {"slept": args.get("seconds", 1)}
"""


@pytest.fixture(scope="module")
def slow_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalogue with a quick tool, a slow python tool and the file reader."""
    root = tmp_path_factory.mktemp("identity")
    write_tree(root / "py", {"slowmod.py": SLOW_MODULE})
    tools = [
        {
            "id": "quick.math.eval",
            "summary": "Evaluate an arithmetic expression.",
            "kind": "read",
            "args_schema": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
            "handler": "toolcat.examples.util:util_math_eval",
        },
        {
            "id": "quick.slow.nap",
            "summary": "Sleep for some seconds.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
            "handler": "slowmod:nap",
        },
        {
            "id": "quick.files.read",
            "summary": "Read a file of the sandbox.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "handler": "toolcat.examples.files:file_read",
        },
    ]
    tree = {
        "_node.yaml": {"title": "Identity", "summary": "Tools for the identity tests."},
        "quick/_node.yaml": {"title": "Quick", "summary": "Local tools."},
        "quick/tools.yaml": {"tools": tools},
    }
    out = root / "build"
    build(write_tree(root / "src", tree), out)
    return out


@contextlib.contextmanager
def serving(build_dir: Path, state_home: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``toolcat serve --transport http`` on a free port with its own state folder; yields (URL, process)."""
    port = free_port()
    env = {**os.environ, "XDG_STATE_HOME": str(state_home), "PYTHONPATH": str(build_dir.parent / "py")}
    argv = [TOOLCAT, "serve", "--build", str(build_dir), "--transport", "http", "--port", str(port)]
    argv += ["--drain-seconds", "1", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "listening on" in line:
                break
            if not line and proc.poll() is not None:
                pytest.fail(f"toolcat serve exited with {proc.returncode}")
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.terminate()
        proc.wait(15)


MODERN = "2026-07-28"


def _exchange(url: str, arguments: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[Any, str | None]:
    """One 2026-07-28 (stateless) tools/call of tool_exec on a new connection: its structured answer and Set-Cookie."""
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"_meta": meta, "name": "tool_exec", "arguments": arguments}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    sent = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "tool_exec",
        **(headers or {}),
    }
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request("POST", "/mcp", body, sent)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    assert response.status == 200, data[:300]
    return json.loads(data)["result"]["structuredContent"], response.getheader("set-cookie")


def _post(url: str, arguments: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One stateless tools/call of tool_exec on a new connection (no cookie unless given); its structured answer."""
    answer: dict[str, Any] = _exchange(url, arguments, headers)[0]
    return answer


def _keyed(expression: str, key: str = "same-key") -> dict[str, Any]:
    return {"op": "quick.math.eval", "args": {"expression": expression}, "idempotency_key": key}


def test_stateless_sdk_clients_on_one_address_never_share_a_replayed_answer(slow_build: Path, tmp_path: Path) -> None:
    """Two 2026-07-28 SDK clients on 127.0.0.1 sending one idempotency_key each get their own answer."""

    async def one(url: str, expression: str) -> dict[str, Any]:
        async with Client(url) as client:
            first = await client.call_tool("tool_exec", _keyed(expression))
            again = await client.call_tool("tool_exec", _keyed(expression))  # its own retry still replays
            assert isinstance(again.structured_content, dict)
            assert again.structured_content["meta"].get("replayed") is True, again.structured_content
            assert isinstance(first.structured_content, dict)
            return first.structured_content

    with serving(slow_build, tmp_path / "state") as (url, _):
        first = anyio.run(one, url, "1+1")
        second = anyio.run(one, url, "2+2")
    assert first["result"]["result"] == 2
    assert second["ok"] is True, second  # not CONFLICT naming the first client's call, not its answer
    assert second["result"]["result"] == 4


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy(slow_build: Path, tmp_path: Path) -> None:
    """A client writing X-Forwarded-For picks no scope; behind a proxy the host names, the header names the client."""
    forged = {"x-forwarded-for": "10.9.9.9"}
    with serving(slow_build, tmp_path / "state-a") as (url, _):
        assert _post(url, _keyed("1+1"), forged)["result"]["result"] == 2
        second = _post(url, _keyed("2+2"), forged)
    assert second["ok"] is True, second
    assert second["result"]["result"] == 4
    with serving(slow_build, tmp_path / "state-b", "--trusted-proxy", "127.0.0.1/32") as (url, _):
        assert _post(url, _keyed("1+1"), forged)["result"]["result"] == 2
        same_client = _post(url, _keyed("2+2"), forged)
        other_client = _post(url, _keyed("2+2"), {"x-forwarded-for": "10.9.9.10"})
    assert same_client["error"]["code"] == "CONFLICT", same_client  # the proxy said: the same client
    assert other_client["result"]["result"] == 4


def test_a_client_key_the_server_issued_keeps_one_client_across_connections(slow_build: Path, tmp_path: Path) -> None:
    """The toolcat_client cookie of a first answer makes the next connection the same client (its retry replays)."""
    with serving(slow_build, tmp_path / "state") as (url, _):
        _, offered = _exchange(url, _keyed("0+1", "warm-up"))
        cookie = offered or ""
        assert cookie.startswith("toolcat_client=")
        assert "HttpOnly" in cookie
        key = cookie.split(";", 1)[0]
        first = _post(url, _keyed("3+3"), {"cookie": key})
        retry = _post(url, _keyed("3+3"), {"cookie": key})
        stranger = _post(url, _keyed("3+3"), {"cookie": "toolcat_client=" + "f" * 32})
    assert first["result"]["result"] == 6
    assert retry["meta"]["replayed"] is True
    assert not stranger["meta"].get("replayed")


def test_servers_with_other_sandboxes_never_read_each_others_answers(slow_build: Path, tmp_path: Path) -> None:
    """Two servers of one catalogue on the default state file, with two --sandbox folders: B reads B's file."""
    for name in ("a", "b"):
        write_tree(tmp_path / name, {"note.txt": f"content of {name}\n"})
    client = {"cookie": "toolcat_client=" + "0" * 32}  # even one client key, sent to both
    arguments = {"op": "quick.files.read", "args": {"path": "note.txt"}, "idempotency_key": "read-note"}
    answers = []
    for name in ("a", "b"):
        with serving(slow_build, tmp_path / "state", "--sandbox", str(tmp_path / name)) as (url, _):
            answers.append(_post(url, arguments, client))
    assert answers[0]["result"]["content"] == "content of a\n"
    assert not answers[1]["meta"].get("replayed"), answers[1]
    assert answers[1]["result"]["content"] == "content of b\n"


def _threads(proc: subprocess.Popen[str]) -> int:
    return len(list(Path(f"/proc/{proc.pid}/task").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc (Linux)")
def test_calls_cut_at_their_limit_keep_their_slot_so_threads_stay_bounded(slow_build: Path, tmp_path: Path) -> None:
    """One session's 16 hanging calls, each cut at --call-timeout, never run more than --client-calls threads."""

    async def flood(url: str) -> list[dict[str, Any]]:
        answers: list[dict[str, Any]] = []
        async with Client(url, mode="legacy") as client, anyio.create_task_group() as group:

            async def one() -> None:
                out = await client.call_tool("tool_exec", {"op": "quick.slow.nap", "args": {"seconds": 20}})
                assert isinstance(out.structured_content, dict)
                answers.append(out.structured_content)

            for _ in range(16):
                group.start_soon(one)
        return answers

    with serving(slow_build, tmp_path / "state", "--call-timeout", "1", "--client-calls", "2") as (url, proc):
        before = _threads(proc)
        answers = anyio.run(flood, url)
        after = _threads(proc)
    assert len(answers) == 16
    assert all(a["error"]["code"] == "UNAVAILABLE" for a in answers)
    assert after - before <= 2 + 2, f"{before} -> {after} threads"  # 2 naps still asleep, and slack for the SDK


def test_a_connection_that_sends_no_headers_is_closed_and_does_not_lock_others_out(
    slow_build: Path, tmp_path: Path
) -> None:
    """Slow-header connections past the connection bound are shed oldest first, and each is closed at its limit."""
    limits = ("--header-timeout", "2", "--max-connections", "16")
    with serving(slow_build, tmp_path / "state", *limits) as (url, _):
        host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
        slow = []
        for _ in range(40):  # more than the bound, each sending part of a header and then nothing
            sock = socket.create_connection((host, int(port)), timeout=30)
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(sock)
        answer = _post(url, _keyed("5+5"))  # a new client is served at once
        assert answer["result"]["result"] == 10
        started = time.monotonic()
        last = slow[-1]
        last.settimeout(30)
        assert last.recv(1024) == b""  # closed by the server within its header limit, not kept forever
        assert time.monotonic() - started < 25
        for sock in slow:
            sock.close()


# -- the fair-share scheduler ----------------------------------------------------------------------------------
def test_a_new_identity_is_served_while_ten_identities_saturate_the_server() -> None:
    """Ten identities queue more calls than the server runs; an 11th is served at once, from the kept quarter."""

    async def scenario() -> tuple[list[str], int]:
        shares = FairShares(total=40, share=4)
        granted: list[str] = []
        finish = anyio.Event()

        async def call(identity: str) -> None:
            async with shares.slot(identity):
                granted.append(identity)
                if identity != "other":
                    await finish.wait()

        async with anyio.create_task_group() as group:
            for n in range(60):  # ten identities, six calls each
                group.start_soon(call, f"flood-{n % 10}")
            await anyio.sleep(0.05)
            busy = shares.in_use
            group.start_soon(call, "other")
            await anyio.sleep(0.05)
            finish.set()
        return granted, busy

    granted, busy = anyio.run(scenario)
    assert busy == 30  # the last quarter is kept for identities running nothing
    assert granted[30] == "other", granted


def test_when_every_slot_is_taken_the_next_free_one_goes_to_the_least_served() -> None:
    """With the kept slots taken too, the first slot that frees goes to the identity running nothing."""

    async def scenario() -> list[str]:
        shares = FairShares(total=8, share=4)
        granted: list[str] = []
        finish: dict[int, anyio.Event] = {}

        async def call(number: int, identity: str) -> None:
            finish[number] = anyio.Event()
            async with shares.slot(identity):
                granted.append(identity)
                if identity != "other":
                    await finish[number].wait()

        async with anyio.create_task_group() as group:
            owners = ["a", "a", "a", "b", "b", "b", "c", "d", "a", "b"]  # a and b fill 6, c and d the kept 2
            for n, owner in enumerate(owners):
                group.start_soon(call, n, owner)
                await anyio.sleep(0.001)
            await anyio.sleep(0.05)
            group.start_soon(call, 99, "other")
            await anyio.sleep(0.05)
            assert shares.in_use == 8
            assert "other" not in granted
            finish[0].set()
            await anyio.sleep(0.05)
            for event in finish.values():
                event.set()
        return granted

    granted = anyio.run(scenario)
    assert granted[8] == "other", granted


def test_a_cut_call_frees_its_running_slot_but_keeps_its_identitys_share() -> None:
    """A call cut while its thread runs on: another identity gets the slot; the cut one's share stays taken."""
    import threading  # noqa: PLC0415

    from toolcat.mcp import fairness  # noqa: PLC0415

    async def scenario() -> tuple[int, int, int]:
        shares = FairShares(total=1, share=1, max_abandoned=4)
        release = threading.Event()
        with anyio.move_on_after(0.2):
            async with shares.slot("hung"):
                await fairness.run_sync(release.wait)  # a thread that outlives its call
        after_cut = (shares.in_use, shares.abandoned, shares.running("hung"))
        with anyio.fail_after(5):
            async with shares.slot("other"):  # the running slot is free at once
                pass
        with anyio.move_on_after(0.2) as blocked:
            async with shares.slot("hung"):  # its share is still its hung thread's
                pass
        assert blocked.cancelled_caught
        release.set()
        with anyio.fail_after(5):
            async with shares.slot("hung"):  # once the thread ended, the share is back
                pass
        return after_cut

    assert anyio.run(scenario) == (0, 1, 1)


@settings(max_examples=60, deadline=None)
@given(
    total=st.integers(1, 6),
    share=st.integers(1, 4),
    steps=st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=1, max_size=60),
)
def test_fair_shares_never_exceed_their_bounds_and_serve_the_least_served(
    total: int, share: int, steps: list[tuple[bool, int]]
) -> None:
    """Any sequence of arrivals and completions keeps every bound, and each grant goes to a least-served waiter."""

    async def run() -> None:
        shares = FairShares(total=total, share=share)
        running: list[tuple[str, anyio.Event]] = []
        async with anyio.create_task_group() as group:

            async def call(identity: str, done: anyio.Event) -> None:
                async with shares.slot(identity):
                    running.append((identity, done))
                    await done.wait()

            for arrive, who in steps:
                if arrive:
                    group.start_soon(call, f"id{who}", anyio.Event())
                elif running:
                    _, done = running.pop(0)
                    done.set()
                    await anyio.lowlevel.checkpoint()
                await anyio.lowlevel.checkpoint()
                assert shares.in_use <= total
                assert all(count <= shares.share for count in shares.held.values())
                assert shares.in_use + shares.abandoned == sum(shares.held.values())
            for _, done in running:
                done.set()
            while shares.in_use or shares.waiting:
                for _, done in running:
                    done.set()
                await anyio.sleep(0.001)
        assert shares.held == {}

    anyio.run(run)


def _open_session(url: str) -> str:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        connection.request("POST", "/mcp", json.dumps(body), {**headers, "mcp-protocol-version": "2025-11-25"})
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.status == 200
    return str(response.getheader("mcp-session-id"))


def _ping(url: str, session: str) -> int:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": session,
    }
    try:
        connection.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}), headers)
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    return response.status


def test_a_loop_of_session_opens_evicts_its_own_newest_sessions_not_an_old_one(
    slow_build: Path, tmp_path: Path
) -> None:
    """Past --max-sessions, opens evict the newest idle sessions of the busiest opener: an old session survives."""
    with serving(slow_build, tmp_path / "state", "--max-sessions", "8") as (url, _):
        legitimate = _open_session(url)
        assert _ping(url, legitimate) == 200
        opened = [_open_session(url) for _ in range(30)]
        assert _ping(url, legitimate) == 200  # its working set is still there
        assert _ping(url, opened[-1]) == 200
        assert sum(_ping(url, s) == 404 for s in opened) == 30 - 7


def test_a_body_that_does_not_arrive_in_time_gets_408() -> None:
    """A request whose body stalls after its headers is answered 408 at the body deadline; a whole body passes."""
    from toolcat.mcp.http_guard import ReadDeadline  # noqa: PLC0415

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    async def run(stall: bool) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        parts = [{"type": "http.request", "body": b"{", "more_body": True}]
        if not stall:
            parts.append({"type": "http.request", "body": b"}", "more_body": False})

        async def receive() -> dict[str, Any]:
            if parts:
                return parts.pop(0)
            await anyio.sleep(3600)  # a client that never sends the rest
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        with anyio.fail_after(30):
            await ReadDeadline(app, seconds=0.3)({"type": "http", "method": "POST"}, receive, send)
        return sent

    stalled = anyio.run(run, True)
    assert stalled[0]["status"] == 408
    assert (b"connection", b"close") in stalled[0]["headers"]
    whole = anyio.run(run, False)
    assert whole[0]["status"] == 200
    assert whole[1]["body"] == b"{}"

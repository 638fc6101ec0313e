"""serve's default state, HTTP sessions versus stateless HTTP, and the namespaced dialect's working sets in the store.

The default is SQLite per user and catalogue over HTTP, memory over stdio (docs/deploy.md, "State").
"""

from __future__ import annotations

import http.client
import json
import logging
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fleet_support import REDIS, Replica, call, redis_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from toolcat.format.envelope import ReaderError
from toolcat.format.types import Json
from toolcat.mcp.discovery import WORKING_SET_SIZE, CatalogTool, catalog_tool
from toolcat.mcp.state import (
    StateStore,
    WorkingSets,
    default_state_path,
    http_stateless,
    open_state,
    state_spec,
)
from toolcat.mcp.state.base import ClientStates

needs_redis = pytest.mark.skipif(
    REDIS is None, reason="redis-server not installed (make fleet installs it where apt can)"
)


def _tool(n: int) -> CatalogTool:
    tool = catalog_tool({"tool_id": f"a.t{n}", "alias": f"a_t{n}", "summary": f"tool {n}", "args_schema": {}})
    assert tool is not None
    return tool


# -- the default store -----------------------------------------------------------------------------------------
def test_http_defaults_to_a_per_user_sqlite_file_named_after_the_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --state over HTTP: sqlite:$XDG_STATE_HOME/toolcat/serve-<hash>.sqlite, one file per catalogue location."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "build").mkdir()
    spec = state_spec(None, "build", "http")
    assert spec == f"sqlite:{default_state_path(str(tmp_path / 'build'))}"  # a relative path names the same file
    path = Path(spec.removeprefix("sqlite:"))
    assert path.parent == tmp_path / "state" / "toolcat"
    assert path.parent.is_dir()
    assert path.name.startswith("serve-")
    assert path.suffix == ".sqlite"
    assert state_spec(None, str(tmp_path / "other"), "http") != spec
    assert state_spec(None, "https://cdn.example.com/cat/", "http") != spec


def test_stdio_defaults_to_memory_and_an_explicit_state_wins(tmp_path: Path) -> None:
    """A stdio server (one client's private process) keeps memory; --state is used as given."""
    assert state_spec(None, str(tmp_path), "stdio") == "memory"
    assert state_spec("redis://127.0.0.1:6379/0", str(tmp_path), "http") == "redis://127.0.0.1:6379/0"
    assert state_spec("memory", str(tmp_path), "http") == "memory"


def test_an_unwritable_state_home_falls_back_to_memory_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """When the per-user folder cannot be created, serve still starts: memory, and a warning naming the fix."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    with caplog.at_level(logging.WARNING, logger="toolcat.mcp.state"):
        assert state_spec(None, str(tmp_path), "http") == "memory"
    assert "--state sqlite:PATH" in caplog.text


def test_a_state_file_inside_the_catalogue_folder_is_refused(tmp_path: Path) -> None:
    """--state sqlite: inside the served folder is an error with the fix: toolcat never writes into its catalogue."""
    with pytest.raises(ValueError, match="never writes into the catalogue") as caught:
        state_spec(f"sqlite:{tmp_path / 'build' / 'state.db'}", str(tmp_path / "build"), "http")
    assert "--state sqlite:/" in str(caught.value)
    assert not (tmp_path / "build").exists()


def test_http_keeps_sessions_unless_the_store_spans_hosts_or_the_operator_says(tmp_path: Path) -> None:
    """memory and sqlite are stateful by default, redis stateless; --stateless/--stateful override either way."""
    memory, sqlite = open_state("memory"), open_state(f"sqlite:{tmp_path / 's.db'}")
    assert http_stateless(None, memory) is False
    assert http_stateless(None, sqlite) is False
    assert http_stateless(True, sqlite) is True
    redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")
    assert redis is not None
    store = open_state("redis://127.0.0.1:1/0")  # not reached: the client connects on first use
    assert http_stateless(None, store) is True
    assert http_stateless(False, store) is False


# -- working sets in the store -----------------------------------------------------------------------------------
@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=needs_redis)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateStore]:
    """Each backend, empty."""
    if request.param == "redis":
        with redis_server() as server:
            yield open_state(server.url)
        return
    yield open_state("memory" if request.param == "memory" else f"sqlite:{tmp_path / 'state.db'}")


def test_a_working_set_is_bounded_and_the_least_recently_used_leaves_first(store: StateStore) -> None:
    """At most WORKING_SET_SIZE tools per client; a call keeps a tool; re-describing changes nothing; kept in the store."""
    sets = WorkingSets(store.clients, lambda: "v1", size=2)
    working = sets.of("http:s1")
    assert working.add(_tool(0))
    assert working.add(_tool(1))
    assert not working.add(_tool(1))  # already there: no list change
    assert working.get("a_t0") == _tool(0)  # used: now the most recent
    assert working.add(_tool(2))
    assert [t.name for t in working.tools()] == ["a_t0", "a_t2"]
    assert [r["name"] for r in store.clients.load("http:s1")] == ["a_t0", "a_t2"]  # what another process reads
    assert sets.of("http:s2").tools() == []
    assert WORKING_SET_SIZE == 32


def test_a_new_registry_version_hides_every_described_tool(store: StateStore) -> None:
    """After a reload a client's described tools of the old version are gone, with no wipe of the store."""
    version = {"v": "v1"}
    sets = WorkingSets(store.clients, lambda: version["v"])
    sets.of("stdio").add(_tool(0))
    version["v"] = "v2"
    assert sets.of("stdio").tools() == []
    assert sets.of("stdio").get("a_t0") is None
    assert sets.of("stdio").add(_tool(0))  # described again under v2: listed again
    assert [t.name for t in sets.of("stdio").tools()] == ["a_t0"]


def test_sqlite_keeps_the_newest_clients_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond MAX_CLIENTS the least recently changed client's working set leaves the shared file."""
    monkeypatch.setattr("toolcat.mcp.state.sqlite.MAX_CLIENTS", 2)
    store = open_state(f"sqlite:{tmp_path / 'state.db'}")
    sets = WorkingSets(store.clients, lambda: "v1")
    for n in range(3):
        sets.of(f"http:s{n}").add(_tool(n))
    assert sets.of("http:s0").tools() == []
    assert [t.name for t in sets.of("http:s2").tools()] == ["a_t2"]


class _Down(ClientStates):
    def load(self, client: str) -> list[Json]:
        raise ReaderError("UNAVAILABLE", f"serve's state store redis://h:1/0 cannot be reached ({client})")

    def save(self, client: str, records: list[Json]) -> None:
        self.load(f"{client}: {len(records)}")

    def clear_all(self) -> None:
        self.load("")


def test_an_unreachable_store_leaves_working_sets_empty_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    """The working set is a convenience: a store that is down reads as empty, an addition is skipped, one warning."""
    sets = WorkingSets(_Down(), lambda: "v1")
    with caplog.at_level(logging.WARNING, logger="toolcat.mcp.state.working"):
        assert sets.of("http:s1").add(_tool(0)) is False
        assert sets.of("http:s1").tools() == []
        assert sets.of("http:s1").get("a_t0") is None
    assert caplog.text.count("working sets unavailable") == 1


# -- through real servers ------------------------------------------------------------------------------------------
def _clients_rows(path: Path) -> list[tuple[str, list[Json]]]:
    with sqlite3.connect(path) as db:
        return [(str(c), json.loads(r)) for c, r in db.execute("SELECT client, records FROM clients")]


def _files(folder: Path) -> set[tuple[str, int]]:
    return {(str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_default_http_serve_keeps_sessions_and_the_working_set_in_the_per_user_file(
    example_build: Path, state_home: Path, tmp_path: Path
) -> None:
    """No --state: a handshake client gets a session, hears list_changed on describe, and its set is in the sqlite file."""
    served = tmp_path / "build"  # a catalogue of its own, so the default file is this test's alone
    shutil.copytree(example_build, served)
    before = _files(served)
    replica = Replica(served, None, "namespaced")
    notes: list[str] = []

    async def on_message(message: Any) -> None:
        notes.append(str(getattr(message, "method", "")))

    async def flow() -> list[str]:
        async with (
            streamable_http_client(replica.url) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            await session.initialize()
            described = await session.call_tool("tool_describe", {"name": "util.math.eval"})
            assert isinstance(described.structured_content, dict)
            with anyio.fail_after(10):
                while "notifications/tools/list_changed" not in notes:  # noqa: ASYNC110 - the callback fills it
                    await anyio.sleep(0.05)
            listed = await session.list_tools()
            return [t.name for t in listed.tools]

    try:
        replica.wait()
        names = anyio.run(flow)
    finally:
        replica.stop()
    assert "util_math_eval" in names
    path = default_state_path(str(served))
    assert path.is_relative_to(state_home)
    rows = [(client, [r["tool_id"] for r in records]) for client, records in _clients_rows(path)]
    assert len(rows) == 1
    namespace, _, client = rows[0][0].partition("/")  # the server's state namespace (catalogue, sandbox), then
    assert len(namespace) == 16
    assert client.startswith("http:")  # the client's Mcp-Session-Id
    assert rows[0][1] == ["util.math.eval"]
    assert _files(served) == before  # nothing written into the catalogue folder


def _initialize(url: str) -> http.client.HTTPResponse:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request(
        "POST",
        "/mcp",
        json.dumps(body),
        {"content-type": "application/json", "accept": "application/json, text/event-stream"},
    )
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_stateless_processes_on_one_sqlite_file_share_keys_and_keep_no_client_state(
    example_build: Path, tmp_path: Path
) -> None:
    """--stateless on one host: no Mcp-Session-Id; a keyed retry on another process replays; no client state is kept.

    A stateless request carries no session, so the namespaced dialect keeps nothing per client (the clients
    table stays empty) and a described tool is called by its alias all the same.
    """
    state = tmp_path / "state.db"
    dialects = ("gateway", "gateway", "namespaced")
    trio = [Replica(example_build, f"sqlite:{state}", dialect, "--stateless") for dialect in dialects]
    try:
        for replica in trio:
            replica.wait()
        response = _initialize(trio[0].url)
        keyed = {"op": "util.math.eval", "args": {"expression": "40 + 2"}, "idempotency_key": "one-host"}
        client = "0123456789abcdef0123456789abcdef"  # the client key a server issued (a cookie), sent to both
        first = call(trio[0].url, "tool_exec", keyed, client=client)["result"]["structuredContent"]
        retry = call(trio[1].url, "tool_exec", keyed, client=client)["result"]["structuredContent"]
        described = call(trio[2].url, "tool_describe", {"name": "util.math.eval"})["result"]["structuredContent"]
        by_alias = call(trio[2].url, described["alias"], {"expression": "6*7"})["result"]["structuredContent"]
    finally:
        for replica in trio:
            replica.stop()
    assert response.status == 200
    assert response.getheader("mcp-session-id") is None
    assert first["ok"] is True
    assert not first["meta"].get("replayed")
    assert retry["meta"]["replayed"] is True
    assert retry["result"] == first["result"]
    assert by_alias["result"]["result"] == 42
    assert _clients_rows(state) == []


def test_stdio_servers_sharing_a_state_file_share_no_idempotency_keys(example_build: Path, tmp_path: Path) -> None:
    """Two stdio servers on one --state file are two clients: the same key for different calls runs in each, no CONFLICT."""
    from test_mcp_server import stdio_session  # noqa: PLC0415 - the suite's stdio client

    state = f"sqlite:{tmp_path / 'state.db'}"

    async def keyed(expression: str) -> Json:
        async with stdio_session(example_build, "--state", state) as session:
            arguments = {"op": "util.math.eval", "args": {"expression": expression}, "idempotency_key": "k1"}
            answer = await session.call_tool("tool_exec", arguments)
            assert isinstance(answer.structured_content, dict)
            return answer.structured_content

    first, second = anyio.run(keyed, "1+1"), anyio.run(keyed, "2+2")
    assert first["result"]["result"] == 2
    assert second["ok"] is True, second
    assert second["result"]["result"] == 4
    assert len(open_state(state).idempotency) == 2  # both kept, each under its own process's scope

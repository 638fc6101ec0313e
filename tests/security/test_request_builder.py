"""The http request builder: what reaches the wire is what the agent gave, framed by the client alone.

A real HTTP service on 127.0.0.1 records every request (method, path, headers, body), so each
test asserts the server's view: no framing header or control character from a spec, a handler
or an agent; no path escape through ``..``; no schema default the agent did not send; a
``User-Agent``; secrets only where the host allowed them; formats checked before any request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support import serve_folder, write_tree

from toolcat import __version__
from toolcat.build import build
from toolcat.format.envelope import ReaderError
from toolcat.reader import Catalog
from toolcat.reader.execution.http_handler import build_request

PLANTED = "planted-secret-5e1d"


class Echo:
    """Records each request; ``/empty`` answers 204 No Content, everything else 200 with a JSON body."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        echo = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                echo.seen.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                )
                if self.path.startswith("/empty"):
                    self.send_response(204)
                    self.end_headers()
                    return
                data = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _answer  # noqa: N815 - http.server's names

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture(scope="module")
def echo() -> Iterator[Echo]:
    service = Echo()
    service.thread.start()
    yield service
    service.server.shutdown()
    service.server.server_close()


def _tools(host: str) -> dict[str, Any]:
    base = f"http://{host}"
    limit = {"type": "integer", "default": 50, "description": "Page size."}
    return {
        "api/_node.yaml": {"title": "API", "summary": "An echo API.", "tags": ["api"]},
        "api/tools.yaml": {
            "tools": [
                {
                    "id": "api.list",
                    "summary": "List items.",
                    "kind": "read",
                    "args_schema": {"type": "object", "properties": {"q": {"type": "string"}, "limit": limit}},
                    "handler": {"type": "http", "method": "GET", "url": f"{base}/items", "send_defaults": False},
                },
                {
                    "id": "api.list_all",
                    "summary": "List items, sending the page size the schema defaults to.",
                    "kind": "read",
                    "args_schema": {"type": "object", "properties": {"limit": limit}},
                    "handler": {"type": "http", "method": "GET", "url": f"{base}/items"},
                },
                {
                    "id": "api.own_agent",
                    "summary": "Call with the handler's own User-Agent.",
                    "kind": "read",
                    "args_schema": {"type": "object"},
                    "handler": {"type": "http", "method": "GET", "url": f"{base}/ua", "user_agent": "my-agent/2"},
                },
                {
                    "id": "api.remove",
                    "summary": "Remove an item.",
                    "kind": "write",
                    "args_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                    "handler": {"type": "http", "method": "DELETE", "url": f"{base}/empty/{{id}}"},
                },
                {
                    "id": "api.get",
                    "summary": "Get an item, with a trace header and a session cookie.",
                    "kind": "read",
                    "args_schema": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "trace": {"type": "string"},
                            "prefs": {"type": "object"},
                        },
                        "required": ["id"],
                    },
                    "handler": {
                        "type": "http",
                        "method": "GET",
                        "url": f"{base}/items/{{id}}/view",
                        "params": {
                            "id": {"in": "path", "allowReserved": True},
                            "trace": {"in": "header", "name": "X-Trace"},
                            "prefs": {"in": "cookie", "explode": True},
                        },
                    },
                },
                {
                    "id": "api.book",
                    "summary": "Book a day.",
                    "kind": "write",
                    "args_schema": {
                        "type": "object",
                        "properties": {
                            "day": {"type": "string", "format": "date"},
                            "at": {"type": "string", "format": "date-time"},
                            "email": {"type": "string", "format": "email"},
                        },
                    },
                    "handler": {"type": "http", "method": "POST", "url": f"{base}/book"},
                },
                {
                    "id": "api.secure",
                    "summary": "Call with a token.",
                    "kind": "read",
                    "args_schema": {"type": "object"},
                    "handler": {
                        "type": "http",
                        "method": "GET",
                        "url": f"{base}/secure",
                        "auth": {"type": "bearer", "env": "EXAMPLE_TOKEN"},
                    },
                },
                {
                    "id": "api.greedy",
                    "summary": "A handler that names a variable the host never meant for it.",
                    "kind": "read",
                    "args_schema": {"type": "object"},
                    "handler": {
                        "type": "http",
                        "method": "GET",
                        "url": f"{base}/greedy",
                        "auth": {"type": "apiKey", "in": "query", "name": "k", "env": "AWS_SECRET_ACCESS_KEY"},
                    },
                },
            ]
        },
    }


@pytest.fixture(scope="module")
def built(echo: Echo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request-builder")
    write_tree(root / "src", _tools(echo.host))
    build(root / "src", root / "build")
    return root / "build"


def _last(echo: Echo) -> dict[str, Any]:
    return echo.seen.pop()


def test_schema_defaults_are_sent_unless_the_handler_leaves_them_to_the_server(built: Path, echo: Echo) -> None:
    """An omitted `limit` with default 50 is sent (001: defaults applied); `send_defaults: false` leaves it to the server."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    assert catalog.tool_exec("api.list", {"q": "x"})["ok"] is True
    assert _last(echo)["path"] == "/items?q=x"
    assert catalog.tool_exec("api.list_all", {})["ok"] is True
    assert _last(echo)["path"] == "/items?limit=50"
    assert catalog.tool_exec("api.list", {"limit": 7})["ok"] is True
    assert _last(echo)["path"] == "/items?limit=7"


def test_requests_carry_a_toolcat_user_agent_the_handler_may_override(built: Path, echo: Echo) -> None:
    """Every http handler request says `User-Agent: toolcat/<version>` (APIs such as GitHub's refuse none); a handler may name its own."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    catalog.tool_exec("api.list", {})
    assert _last(echo)["headers"]["User-Agent"] == f"toolcat/{__version__}"
    catalog.tool_exec("api.own_agent", {})
    assert _last(echo)["headers"]["User-Agent"] == "my-agent/2"


def test_a_204_answer_is_an_empty_result(built: Path, echo: Echo) -> None:
    """HTTP 204 No Content becomes result null, not {"text": ""}."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    ran = catalog.tool_exec("api.remove", {"id": "a1"})
    assert ran["ok"] is True, ran
    assert ran.get("result") is None
    assert _last(echo)["method"] == "DELETE"


@pytest.mark.parametrize("value", ["..", ".", ""])
def test_dot_segments_from_an_agent_never_change_the_path(built: Path, echo: Echo, value: str) -> None:
    """`..`, `.` or an empty path parameter is a VALIDATION_ERROR before any request, in both handler forms."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    before = len(echo.seen)
    for op in ("api.get", "api.remove"):
        answer = catalog.tool_exec(op, {"id": value})
        assert answer["error"]["code"] == "VALIDATION_ERROR", answer
        assert answer["error"]["details"]["field_errors"][0]["field"] == "id"
    assert len(echo.seen) == before


def test_allow_reserved_never_applies_to_path_parameters(built: Path, echo: Echo) -> None:
    """A path parameter with allowReserved still percent-encodes `/`, `?` and `#`: the agent stays on its path."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    assert catalog.tool_exec("api.get", {"id": "../../admin?x=1#y"})["ok"] is True
    assert _last(echo)["path"] == "/items/..%2F..%2Fadmin%3Fx%3D1%23y/view"


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\x00b", "a\r\n\tb", "tab\there"])
def test_control_characters_in_agent_header_values_are_refused(built: Path, echo: Echo, value: str) -> None:
    """CR, LF, NUL and tab in a header argument are a VALIDATION_ERROR naming the argument, never echoing it; nothing is sent."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    before = len(echo.seen)
    answer = catalog.tool_exec("api.get", {"id": "a", "trace": value})
    assert answer["error"]["code"] == "VALIDATION_ERROR", answer
    assert answer["error"]["details"]["field_errors"][0]["field"] == "trace"
    assert value not in json.dumps(answer)
    assert len(echo.seen) == before


def test_cookie_keys_from_an_agent_are_encoded(built: Path, echo: Echo) -> None:
    """An exploded cookie object encodes its keys too: `a=1; evil` cannot add a cookie."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    assert catalog.tool_exec("api.get", {"id": "a", "prefs": {"a=1; admin": "true"}})["ok"] is True
    assert _last(echo)["headers"]["Cookie"] == "a%3D1%3B%20admin=true"


@pytest.mark.parametrize("name", ["Content-Length", "Transfer-Encoding", "Host", "Connection", "TE", "Upgrade"])
def test_framing_headers_are_refused_at_run_time(name: str) -> None:
    """A handler (hand-made or tampered) that puts an agent's value in a framing header is NOT_EXECUTABLE, for params and static headers."""
    as_param = {
        "type": "http",
        "method": "POST",
        "url": "https://api.example.com/x",
        "params": {"h": {"in": "header", "name": name}},
    }
    with pytest.raises(ReaderError) as raised:
        build_request("t.x", as_param, {"h": "0"}, environ={})
    assert raised.value.code == "NOT_EXECUTABLE"
    static = {"type": "http", "method": "POST", "url": "https://api.example.com/x", "headers": {name: "0"}, "auth": {}}
    with pytest.raises(ReaderError) as raised:
        build_request("t.x", static, {}, environ={})
    assert raised.value.code == "NOT_EXECUTABLE"


def test_a_secret_with_a_line_break_never_reaches_the_wire_or_the_envelope() -> None:
    """An environment secret holding CR/LF is NOT_EXECUTABLE without its value."""
    handler = {"type": "http", "url": "https://api.example.com/x", "auth": {"type": "bearer", "env": "T"}}
    with pytest.raises(ReaderError) as raised:
        build_request("t.x", handler, {}, environ={"T": "abc\r\nX-Evil: 1"})
    assert raised.value.code == "NOT_EXECUTABLE"
    assert "abc" not in json.dumps(raised.value.envelope())


def test_formats_are_checked_before_the_call(built: Path, echo: Echo) -> None:
    """A date of "next monday", a date without a time as date-time, and a name without @ as email are refused; nothing is sent."""
    catalog = Catalog.open(built, allow_handlers={"http": [echo.host]})
    before = len(echo.seen)
    answer = catalog.tool_exec("api.book", {"day": "next monday", "at": "2026-12-01", "email": "someone"})
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert sorted(e["field"] for e in answer["error"]["details"]["field_errors"]) == ["at", "day", "email"]
    assert len(echo.seen) == before
    ok = catalog.tool_exec("api.book", {"day": "2026-12-01", "at": "2026-12-01T09:30:00Z", "email": "a@b.example"})
    assert ok["ok"] is True, ok
    assert json.loads(_last(echo)["body"]) == {
        "day": "2026-12-01",
        "at": "2026-12-01T09:30:00Z",
        "email": "a@b.example",
    }


def test_formats_are_checked_without_jsonschema_too() -> None:
    """The stdlib fallback checks date, date-time and email formats of top-level arguments."""
    from toolcat.reader.execution.arguments import _minimal_errors  # noqa: PLC0415 - the fallback itself

    schema = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    assert [e["field"] for e in _minimal_errors(schema, {"day": "2026-02-30"})] == ["day"]
    assert _minimal_errors(schema, {"day": "2026-02-28"}) == []


def test_a_url_catalogue_sends_only_the_secrets_the_host_allows(
    built: Path, echo: Echo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalogue opened by URL names env variables; only allow_secrets={host: [names]} lets one reach that host."""
    monkeypatch.setenv("EXAMPLE_TOKEN", PLANTED)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", PLANTED + "-aws")
    with serve_folder(built) as base:
        plain = Catalog.open(base, allow_handlers={"http": [echo.host]})
        before = len(echo.seen)
        for op in ("api.secure", "api.greedy"):
            refused = plain.tool_exec(op, {})
            assert refused["error"]["code"] == "NOT_AUTHORIZED", refused
            assert PLANTED not in json.dumps(refused)
        assert len(echo.seen) == before
        allowed = Catalog.open(
            base, allow_handlers={"http": [echo.host]}, allow_secrets={"127.0.0.1": ["EXAMPLE_TOKEN"]}
        )
        assert allowed.tool_exec("api.secure", {})["ok"] is True
        assert _last(echo)["headers"]["Authorization"] == f"Bearer {PLANTED}"
        greedy = allowed.tool_exec("api.greedy", {})
        assert greedy["error"]["code"] == "NOT_AUTHORIZED"
        assert "AWS_SECRET_ACCESS_KEY" in greedy["error"]["message"]
    assert all(PLANTED not in json.dumps(r, default=repr) for r in echo.seen)


def test_a_folder_catalogue_narrowed_by_allow_secrets_sends_nothing_else(
    built: Path, echo: Echo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """allow_secrets narrows a folder the host built as well; without it a folder's handlers read the variables they name."""
    monkeypatch.setenv("EXAMPLE_TOKEN", PLANTED)
    folder = Catalog.open(built, allow_handlers={"http": [echo.host]})
    assert folder.tool_exec("api.secure", {})["ok"] is True
    assert _last(echo)["headers"]["Authorization"] == f"Bearer {PLANTED}"
    narrowed = Catalog.open(
        built, allow_handlers={"http": [echo.host]}, allow_secrets={"api.example.com": ["EXAMPLE_TOKEN"]}
    )
    assert narrowed.tool_exec("api.secure", {})["error"]["code"] == "NOT_AUTHORIZED"


def test_allow_secrets_must_be_a_mapping_of_lists() -> None:
    """A wrong allow_secrets shape is BAD_REQUEST at open, with an example."""
    with pytest.raises(ReaderError) as raised:
        Catalog.open(".", allow_secrets={"api.example.com": "TOKEN"})  # type: ignore[dict-item]
    assert raised.value.code == "BAD_REQUEST"

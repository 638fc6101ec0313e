"""Remote `$ref`s of `import openapi --allow-remote-refs` go through the handlers' network guard (issue 36)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolcat.cli import main
from toolcat.importers.openapi import refs

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


class _Site:
    """A local HTTP server answering from a table of paths: a body, or a redirect; it records what was asked."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.seen: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                site.seen.append(self.path)
                status, headers, body = site.routes.get(self.path, (404, {}, b""))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sites() -> Iterator[tuple[_Site, _Site]]:
    """Two local servers: the one a $ref names, and another host it may redirect to."""
    pair = (_Site(), _Site())
    yield pair
    for site in pair:
        site.close()


def _spec_file(tmp_path: Path, ref: str) -> Path:
    op = {
        "post": {
            "operationId": "makeThing",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": ref}}}},
            "responses": {"200": {"description": "ok"}},
        }
    }
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Demo", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/things": op},
    }
    path = tmp_path / "api.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def _import(tmp_path: Path, spec: Path, *extra: str) -> Any:
    argv = ["import", "openapi", str(spec), "--namespace", "demo", "--out", str(tmp_path / "src" / "demo"), *extra]
    return CliRunner().invoke(main, argv)


def test_a_remote_ref_to_a_private_address_is_refused_and_never_requested(
    tmp_path: Path, sites: tuple[_Site, _Site]
) -> None:
    """With --allow-remote-refs, a $ref to a loopback server is refused by the guard: no request reaches it."""
    inner, _ = sites
    inner.routes["/schema.json"] = (200, {"Content-Type": "application/json"}, json.dumps(SCHEMA).encode())
    spec = _spec_file(tmp_path, f"{inner.base}/schema.json")
    refused = _import(tmp_path, spec, "--allow-remote-refs")
    assert refused.exit_code == 1, refused.output
    assert "loopback" in refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)
    assert inner.seen == []
    off = _import(tmp_path, spec)  # and without the flag, remote refs are not fetched at all
    assert off.exit_code == 1
    assert "--allow-remote-refs" in off.output


def test_a_remote_ref_follows_redirects_only_within_its_origin(
    tmp_path: Path, sites: tuple[_Site, _Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A same-origin redirect is followed; one to another host (here another port) is refused before any request."""
    inner, other = sites
    monkeypatch.setattr(refs, "REF_PRIVATE_HOSTS", (f"127.0.0.1:{inner.port}", f"127.0.0.1:{other.port}"))
    inner.routes["/moved.json"] = (302, {"Location": "/schema.json"}, b"")
    inner.routes["/schema.json"] = (200, {"Content-Type": "application/json"}, json.dumps(SCHEMA).encode())
    inner.routes["/away.json"] = (302, {"Location": f"{other.base}/internal.json"}, b"")
    other.routes["/internal.json"] = (200, {}, json.dumps({"type": "string", "description": "internal"}).encode())

    followed = _import(tmp_path, _spec_file(tmp_path, f"{inner.base}/moved.json"), "--allow-remote-refs")
    assert followed.exit_code == 0, followed.output
    assert inner.seen == ["/moved.json", "/schema.json"]

    away = _import(tmp_path / "b", _spec_file(tmp_path, f"{inner.base}/away.json"), "--allow-remote-refs")
    assert away.exit_code == 1, away.output
    assert "another host" in away.output
    assert other.seen == []

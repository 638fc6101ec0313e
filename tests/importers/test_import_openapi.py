"""``toolcat import openapi``: specs become sources that compile, whose http handlers send the right requests."""

from __future__ import annotations

import json
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from support import TESTS

from toolcat.build import build
from toolcat.cli import main
from toolcat.importers.common import ImporterError
from toolcat.importers.openapi.operations import import_openapi
from toolcat.reader.execution.http_handler import build_request
from toolcat.reader.folder import BuildFolder

DATA = TESTS / "data" / "openapi"
SHOP = DATA / "shop31.yaml"
PETS = DATA / "petstore20.json"


def _import(spec: Path | str, out: Path, *extra: str) -> Any:
    result = CliRunner().invoke(main, ["import", "openapi", str(spec), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result


def _built(tmp_path: Path, *specs: tuple[Path, str, tuple[str, ...]]) -> dict[str, dict[str, Any]]:
    for spec, ns, extra in specs:
        _import(spec, tmp_path / "src" / ns, "--namespace", ns, *extra)
    build(tmp_path / "src", tmp_path / "build")
    return BuildFolder(tmp_path / "build").specs()


def test_openapi31_spec_becomes_flat_tools_with_nodes_from_tags(tmp_path: Path) -> None:
    """Path-level and $ref'd (also external-file) parameters, a $ref'd body, 3.1 types, tags as nodes, text and kinds."""
    result = _import(SHOP, tmp_path / "src" / "shop", "--namespace", "shop")
    assert "imported 7 tool(s)" in result.output
    build(tmp_path / "src", tmp_path / "build")
    specs = BuildFolder(tmp_path / "build").specs()
    assert set(specs) == {
        "shop.list_items",
        "shop.create_item",
        "shop.replace_item",
        "shop.get_store",
        "shop.create_category_tree",
        "shop.head_ping",
        "shop.delete_stores_store_id_items_item_id",
    }
    listing = specs["shop.list_items"]
    assert listing["kind"] == "read"
    assert listing["path"] == ["shop", "items"]
    assert listing["summary"] == "List the items of a store, newest first."
    props = listing["args_schema"]["properties"]
    assert set(props) == {"store_id", "X-Trace", "limit", "tag", "colour", "filter", "session"}  # no Accept
    assert props["limit"] == {
        "description": "At most this many items.",
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
    }
    assert props["store_id"]["pattern"] == "^[a-z0-9-]+$"
    assert props["colour"]["items"]["enum"] == ["red", "green", "blue"]
    assert listing["args_schema"]["required"] == ["store_id"]
    assert listing["errors"] == [
        {"code": "404", "when": "The store does not exist. Check the id."}
    ]  # the whole description
    created = specs["shop.create_item"]
    assert created["kind"] == "write"
    body = created["args_schema"]["properties"]
    assert "id" not in body  # readOnly properties are not sent
    assert body["sku"] == {"type": ["string", "null"], "format": "uuid"}
    assert body["price"] == {"type": "number", "exclusiveMinimum": 0}
    assert body["dimensions"]["properties"]["width_cm"] == {"type": "number", "minimum": 0}
    assert created["args_schema"]["required"] == ["store_id", "name", "price"]
    assert created["handler"]["body"] == {"encoding": "json"}
    replaced = specs["shop.replace_item"]  # the query parameter 'name' collides with the body's 'name'
    assert replaced["args_schema"]["properties"]["body"]["required"] == ["name", "price"]
    assert replaced["handler"]["body"] == {"encoding": "json", "arg": "body"}
    assert replaced["handler"]["url"] == "http://shop.example.com/api/v2/stores/{store_id}/items/{item_id}"
    assert replaced["handler"]["params"]["item_id"] == {"in": "path", "name": "item-id"}
    deleted = specs["shop.delete_stores_store_id_items_item_id"]
    assert deleted["deprecated"] is True
    assert deleted["errors"] == [{"code": "default", "when": "Something went wrong."}]
    tree = specs["shop.create_category_tree"]["args_schema"]["properties"]
    assert tree["children"]["items"]["type"] == "object"  # the recursion is cut at its first re-entry
    assert "recursive" in tree["children"]["items"]["description"]
    assert "auth" not in specs["shop.create_category_tree"]["handler"]  # security: [] opts out
    assert specs["shop.head_ping"]["kind"] == "read"
    assert specs["shop.head_ping"]["handler"]["auth"] == {"type": "basic", "env": "SHOP_BASIC_AUTH", "optional": True}
    assert specs["shop.get_store"]["handler"]["auth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Api-Key",
        "env": "SHOP_API_KEY",
    }
    node = yaml.safe_load((tmp_path / "src" / "shop" / "stores" / "_node.yaml").read_text())
    assert node == {"title": "Stores", "summary": "Stores and their settings.", "tags": ["shop", "openapi"]}
    assert "recursive $ref cut" in result.output
    assert "body properties collide" in result.output


def test_swagger2_collection_formats_form_bodies_and_nullable(tmp_path: Path) -> None:
    """Swagger 2.0: csv/multi arrays, formData as a form body, a body parameter flattened, x-nullable, boolean bounds."""
    specs = _built(tmp_path, (PETS, "pets", ()))
    listing = specs["pets.pets_list"]
    assert listing["handler"]["url"] == "https://pets.example.com/v1/pets"
    assert listing["handler"]["params"] == {
        "ids": {"in": "query", "style": "form", "explode": False},
        "kinds": {"in": "query"},
        "q": {"in": "query"},
    }
    assert listing["args_schema"]["properties"]["q"] == {"type": ["string", "null"], "minLength": 2}
    added = specs["pets.pets_add"]
    assert added["handler"]["body"] == {"encoding": "form"}
    assert added["args_schema"]["properties"]["age"] == {"type": "integer", "exclusiveMinimum": 0}
    assert specs["pets.pets_replace"]["args_schema"]["required"] == ["id", "name"]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]]

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.seen.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": dict(self.headers.items()),
                "body": self.rfile.read(length).decode() if length else None,
            }
        )
        payload = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _record  # noqa: N815 - http.server's names

    def log_message(self, *_args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A live HTTP server on 127.0.0.1 that records every request it receives."""
    seen: list[dict[str, Any]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _send(spec: dict[str, Any], args: dict[str, Any], env: dict[str, str]) -> None:
    method, url, body, headers = build_request(spec["tool_id"], spec["handler"], args, environ=env)
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=5) as response:
        response.read()


def test_requests_reach_a_live_server_with_every_location_right(
    tmp_path: Path, server: tuple[str, list[dict[str, Any]]]
) -> None:
    """Method, path (escaped), query (form, explode false, deepObject), header, cookie, JSON body and auth arrive."""
    host, seen = server
    specs = _built(
        tmp_path,
        (SHOP, "shop", ("--server-var", f"host={host}", "--server-var", "version=v1")),
        (PETS, "pets", ("--server", f"http://{host}/v1")),
    )
    env = {"SHOP_TOKEN": "tok-123", "SHOP_API_KEY": "key-9", "PETS_API_KEY": "pk", "SHOP_BASIC_AUTH": "me:pw"}
    _send(
        specs["shop.list_items"],
        {
            "store_id": "main st/1",
            "X-Trace": "t1",
            "limit": 5,
            "tag": ["a b", "c"],
            "colour": ["red", "blue"],
            "filter": {"brand": "acme", "min_price": 2.5},
            "session": "s1",
        },
        env,
    )
    got = seen.pop()
    assert got["method"] == "GET"
    assert got["path"] == (
        "/api/v1/stores/main%20st%2F1/items?colour=red,blue&filter%5Bbrand%5D=acme"
        "&filter%5Bmin_price%5D=2.5&limit=5&tag=a%20b&tag=c"
    )  # in the (sorted) params' order
    assert got["headers"]["X-Trace"] == "t1"
    assert got["headers"]["Cookie"] == "session=s1"
    assert got["headers"]["Authorization"] == "Bearer tok-123"
    assert got["body"] is None
    _send(
        specs["shop.create_item"],
        {"store_id": "s", "name": "Lamp", "price": 9.5, "sku": None, "dimensions": {"width_cm": 3}},
        env,
    )
    got = seen.pop()
    assert (got["method"], got["path"]) == ("POST", "/api/v1/stores/s/items")
    assert got["headers"]["Content-Type"] == "application/json"
    assert json.loads(got["body"]) == {"name": "Lamp", "price": 9.5, "sku": None, "dimensions": {"width_cm": 3}}
    _send(
        specs["shop.replace_item"],
        {"store_id": "s", "item_id": 7, "name": "q", "body": {"name": "Lamp 2", "price": 1}},
        env,
    )
    got = seen.pop()
    assert (got["method"], got["path"]) == ("PUT", "/api/v1/stores/s/items/7?name=q")
    assert json.loads(got["body"]) == {"name": "Lamp 2", "price": 1}
    _send(specs["shop.get_store"], {"store_id": "s"}, env)
    got = seen.pop()
    assert got["headers"]["X-Api-Key"] == "key-9"
    assert "Authorization" not in got["headers"]
    _send(specs["shop.head_ping"], {}, {})  # optional security, no secret set: sent without credentials
    got = seen.pop()
    assert got["method"] == "HEAD"
    assert "Authorization" not in got["headers"]
    _send(specs["shop.head_ping"], {}, env)
    assert seen.pop()["headers"]["Authorization"] == "Basic bWU6cHc="
    _send(specs["pets.pets_list"], {"ids": [1, 2], "kinds": ["cat", "dog"], "q": "fl"}, env)
    assert seen.pop()["path"] == "/v1/pets?ids=1,2&kinds=cat&kinds=dog&q=fl&api_key=pk"
    _send(specs["pets.pets_add"], {"name": "Rex & co", "age": 3}, env)
    got = seen.pop()
    assert got["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert got["body"] == "name=Rex%20%26%20co&age=3"
    assert got["path"] == "/v1/pets?api_key=pk"


def test_a_missing_secret_is_refused_and_never_written(tmp_path: Path) -> None:
    """Sources hold env var names only; a call without the variable set is NOT_AUTHORIZED naming the variable."""
    from toolcat.reader import ReaderError  # noqa: PLC0415

    specs = _built(tmp_path, (SHOP, "shop", ()))
    text = "".join(p.read_text() for p in (tmp_path / "src").rglob("*.yaml"))
    assert "SHOP_TOKEN" in text
    with pytest.raises(ReaderError) as caught:
        build_request("shop.get_store", specs["shop.get_store"]["handler"], {"store_id": "s"}, environ={})
    assert caught.value.code == "NOT_AUTHORIZED"
    assert "SHOP_API_KEY" in caught.value.message
    shown = build_request(
        "shop.get_store", specs["shop.get_store"]["handler"], {"store_id": "s"}, environ={}, reveal_secrets=False
    )
    assert shown[3]["X-Api-Key"] == "<from $SHOP_API_KEY>"


def test_reimport_keeps_ids_updates_tools_and_applies_overrides(tmp_path: Path) -> None:
    """A re-run over an edited spec rewrites the generated files; _import/overrides.yaml survives and is applied."""
    spec = tmp_path / "spec" / "shop31.yaml"
    spec.parent.mkdir()
    shutil.copy(SHOP, spec)
    shutil.copy(DATA / "common.yaml", spec.parent / "common.yaml")
    out = tmp_path / "src" / "shop"
    first = import_openapi(str(spec), namespace="shop", out=out)
    (out / "_import" / "overrides.yaml").write_text(
        "tools:\n  shop.get_store:\n    summary: Look up one store by id\n    when_to_use: Before editing a store.\n"
        "    tags: [shop, stores]\nnodes:\n  items:\n    title: Shop items\n"
    )
    text = spec.read_text().replace(
        "  /ping:\n",
        "  /health:\n    get:\n      operationId: health\n"
        "      responses:\n        '200': {description: ok}\n  /ping:\n",
    )
    text = text.replace(
        "operationId: createCategoryTree\n", "operationId: createCategoryTree\n      deprecated: true\n"
    )
    spec.write_text(text)
    second = import_openapi(str(spec), namespace="shop", out=out)
    assert set(second.tool_ids) == {*first.tool_ids, "shop.health"}
    build(tmp_path / "src", tmp_path / "build")
    specs = BuildFolder(tmp_path / "build").specs()
    assert specs["shop.get_store"]["summary"] == "Look up one store by id"
    assert specs["shop.get_store"]["when_to_use"] == "Before editing a store."
    assert specs["shop.create_category_tree"]["deprecated"] is True
    assert yaml.safe_load((out / "items" / "_node.yaml").read_text())["title"] == "Shop items"
    assert (out / "_import" / "overrides.yaml").is_file()
    third = import_openapi(str(spec), namespace="shop", out=out)
    assert third.tool_ids == second.tool_ids
    assert (out / "stores" / "tools.yaml").read_text() == (out / "stores" / "tools.yaml").read_text()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("paths:\n", "paths: [\n", 1), r"shop31\.yaml:\d+:\d+: not valid YAML"),
        (
            lambda t: t.replace('"#/components/schemas/Item"}', '"#/components/schemas/Itme"}', 1),
            (
                r"shop31\.yaml: at /paths/~1stores~1\{store_id\}~1items~1\{item-id\}/put/requestBody/content/"
                r"application~1json/schema: \$ref '#/components/schemas/Itme' does not resolve"
            ),
        ),
        (
            lambda t: t.replace("operationId: getStore", "operationId: listItems"),
            (
                r"at /paths/~1stores~1\{store_id\}/get/operationId: duplicate operationId 'listItems' \(also at "
                r"/paths/~1stores~1\{store_id\}~1items/get/operationId\)"
            ),
        ),
        (lambda t: t.replace("openapi: 3.1.0", "openapi: 4.0.0"), r"at /openapi: unsupported version '4.0.0'"),
        (
            lambda t: t.replace('"common.yaml#/parameters/Limit"', '"https://example.com/common.yaml#/p"'),
            (
                r"at /paths/~1stores~1\{store_id\}~1items/get/parameters/0: \$ref .*remote document; it is not fetched "
                r"unless you pass --allow-remote-refs"
            ),
        ),
        (
            lambda t: t.replace('"common.yaml#/parameters/Limit"', '"missing.yaml#/parameters/Limit"'),
            r"cannot read .*missing\.yaml",
        ),
    ],
)
def test_malformed_specs_are_located_errors_and_nothing_is_written(tmp_path: Path, edit: Any, message: str) -> None:
    """Bad YAML, an unresolvable or remote $ref, a duplicate operationId, a wrong version: one clear error, --out kept."""
    spec = tmp_path / "spec" / "shop31.yaml"
    spec.parent.mkdir()
    shutil.copy(DATA / "common.yaml", spec.parent / "common.yaml")
    spec.write_text(SHOP.read_text())
    out = tmp_path / "src" / "shop"
    import_openapi(str(spec), namespace="shop", out=out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    spec.write_text(edit(SHOP.read_text()))
    with pytest.raises(ImporterError, match=message):
        import_openapi(str(spec), namespace="shop", out=out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["shop"]  # no temporary folder left
    result = CliRunner().invoke(main, ["import", "openapi", str(spec), "--out", str(tmp_path / "new")])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert not (tmp_path / "new").exists()


def test_out_folder_not_written_by_an_import_is_refused(tmp_path: Path) -> None:
    """An --out holding other files is not replaced unless --force says so."""
    out = tmp_path / "src" / "shop"
    out.mkdir(parents=True)
    (out / "mine.yaml").write_text("tools: []\n")
    result = CliRunner().invoke(main, ["import", "openapi", str(SHOP), "--out", str(out)])
    assert result.exit_code == 1
    assert "--force" in result.output
    assert (out / "mine.yaml").is_file()
    _import(SHOP, out, "--force")
    assert not (out / "mine.yaml").exists()


CORPUS_SPECS = [
    ("box-platform-api.openapi.json", "box", 296),
    ("slack-web-api.swagger2.json", "slack", 174),
    ("spotify-web-api.openapi.yaml", "spotify", 97),
]


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize(("name", "ns", "operations"), CORPUS_SPECS)
def test_corpus_specs_import_and_build_one_tool_per_operation(
    corpus: Path, tmp_path: Path, name: str, ns: str, operations: int
) -> None:
    """Box (OpenAPI 3.0), Slack (Swagger 2.0) and Spotify (OpenAPI 3.0) compile with one tool per operation."""
    result = import_openapi(str(corpus / "tools" / "openapi" / name), namespace=ns, out=tmp_path / "src" / ns)
    assert result.count == operations
    build(tmp_path / "src", tmp_path / "build")  # raises on any error
    specs = BuildFolder(tmp_path / "build").specs()
    assert len(specs) == operations
    assert all(s["handler"]["type"] == "http" for s in specs.values())


def test_catalog_tool_exec_sends_imported_operations_and_dry_runs_hide_secrets(
    tmp_path: Path, server: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through Catalog.tool_exec (validation, trust policy, checked_request) the live server gets the right request."""
    from toolcat.reader import Catalog  # noqa: PLC0415

    host, seen = server
    _built(
        tmp_path, (SHOP, "shop", ("--server-var", f"host={host}")), (PETS, "pets", ("--server", f"http://{host}/v1"))
    )
    monkeypatch.setenv("SHOP_TOKEN", "tok-secret")
    monkeypatch.setenv("PETS_API_KEY", "pk-secret")
    catalog = Catalog.open(tmp_path / "build", allow_handlers={"http": [host]})
    ran = catalog.tool_exec("shop.list_items", {"store_id": "a", "tag": ["x"], "filter": {"brand": "b"}})
    assert ran["ok"] is True, ran
    assert ran["result"] == {"ok": True}
    got = seen.pop()
    # schema defaults reach the request (issue 34: what is sent is what a dry run shows)
    assert got["path"] == "/api/v2/stores/a/items?filter%5Bbrand%5D=b&limit=20&tag=x"
    assert got["headers"]["Authorization"] == "Bearer tok-secret"
    bad = catalog.tool_exec("shop.list_items", {"store_id": "a", "limit": 500})
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    dry = catalog.tool_exec("pets.pets_list", {"ids": [1, 2]}, dry_run=True)
    assert dry["would_run"]["url"] == f"http://{host}/v1/pets?ids=1,2&api_key=%3Cfrom%20%24PETS_API_KEY%3E"
    assert "pk-secret" not in json.dumps(dry)
    dry = catalog.tool_exec("pets.pets_add", {"name": "Rex"}, dry_run=True)
    assert dry["would_run"]["body"] == "name=Rex"
    assert not seen
    monkeypatch.delenv("SHOP_TOKEN")
    refused = catalog.tool_exec("shop.list_items", {"store_id": "a"})
    assert refused["error"]["code"] == "NOT_AUTHORIZED"
    assert "SHOP_TOKEN" in refused["error"]["message"]
    assert not seen

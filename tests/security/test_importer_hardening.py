"""Importers read untrusted specs and servers: nothing local leaks in, nothing the author wrote is lost, nothing hangs.

Each test feeds a hostile input to `toolcat import openapi`, `import mcp` or `import functions`
and checks the generated sources (and, where it matters, the built artifacts): `$ref`s confined
to the spec's folder, the build's source limits on every document, live servers held to a
deadline and a page budget, hand-written sources never replaced, crashes repaired, and trust
never widened by a spec's or a server's hint.
"""

from __future__ import annotations

import errno
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from support import write_tree

from toolcat.build import build
from toolcat.cli import main
from toolcat.importers import common
from toolcat.importers.common import ImporterError
from toolcat.importers.mcp import import_mcp
from toolcat.importers.openapi.operations import import_openapi

LEAK = "ghp_LEAKEDTOKEN0123456789abcdefghij"  # a planted secret that must never reach a source or artifact


def _spec(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Demo", "version": "2.4.1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": paths,
        **extra,
    }


def _op_with_body_ref(ref: str) -> dict[str, Any]:
    return {
        "/things": {
            "post": {
                "operationId": "makeThing",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": ref}}}},
                "responses": {"200": {"description": "ok"}},
            }
        }
    }


def _every_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


# -- 1. $ref confinement -----------------------------------------------------------------------------------------
@pytest.fixture
def secrets_outside(tmp_path: Path) -> Path:
    """A secret-looking file beside (outside) the spec's folder, as a gh token or kube config would be."""
    home = tmp_path / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"type: object\ndescription: {LEAK}\n")
    return home / ".config" / "gh" / "hosts.yml"


@pytest.mark.parametrize("how", ["dotdot", "absolute_file_uri"])
def test_refs_never_read_files_outside_the_spec_folder(tmp_path: Path, secrets_outside: Path, how: str) -> None:
    """`../` and `file:///…` refs to a file outside the spec's folder are refused, and nothing of it is written."""
    spec_dir = tmp_path / "specs" / "demo"
    spec_dir.mkdir(parents=True)
    ref = "../../home/.config/gh/hosts.yml" if how == "dotdot" else secrets_outside.as_uri()
    (spec_dir / "api.json").write_text(json.dumps(_spec(_op_with_body_ref(ref))))
    out = tmp_path / "src" / "demo"
    with pytest.raises(ImporterError, match="outside"):
        import_openapi(str(spec_dir / "api.json"), namespace="demo", out=out)
    assert not out.exists()


def test_a_ref_root_named_by_the_user_widens_the_folder(tmp_path: Path) -> None:
    """--ref-root lets refs read a shared folder the user names (and only that one)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "thing.yaml").write_text("type: object\nproperties: {name: {type: string}}\n")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "spec.json").write_text(json.dumps(_spec(_op_with_body_ref("../shared/thing.yaml"))))
    with pytest.raises(ImporterError, match="--ref-root"):
        import_openapi(str(tmp_path / "api" / "spec.json"), namespace="demo", out=tmp_path / "a")
    result = CliRunner().invoke(
        main,
        [
            "import",
            "openapi",
            str(tmp_path / "api" / "spec.json"),
            "--namespace",
            "demo",
            "--out",
            str(tmp_path / "b"),
            "--ref-root",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "name" in (tmp_path / "b" / "tools.yaml").read_text()


def test_a_symlink_in_the_spec_folder_cannot_lead_outside(tmp_path: Path, secrets_outside: Path) -> None:
    """A link inside the folder that points out is refused like the path it points to."""
    spec_dir = tmp_path / "api"
    spec_dir.mkdir()
    (spec_dir / "schema.yaml").symlink_to(secrets_outside)
    (spec_dir / "spec.json").write_text(json.dumps(_spec(_op_with_body_ref("schema.yaml"))))
    with pytest.raises(ImporterError):
        import_openapi(str(spec_dir / "spec.json"), namespace="demo", out=tmp_path / "out")


@pytest.fixture
def spec_server(tmp_path: Path) -> Iterator[tuple[str, dict[str, bytes]]]:
    """A real HTTP server on 127.0.0.1 serving ``{path: bytes}``."""
    docs: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            data = docs.get(self.path)
            self.send_response(200 if data is not None else 404)
            self.send_header("Content-Length", str(len(data or b"")))
            self.end_headers()
            self.wfile.write(data or b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", docs
    server.shutdown()
    server.server_close()


def test_a_spec_fetched_by_url_never_reads_the_local_disk(
    tmp_path: Path, secrets_outside: Path, spec_server: tuple[str, dict[str, bytes]]
) -> None:
    """A remote spec's `file:///` ref is refused even with --allow-remote-refs; the secret reaches no source or artifact."""
    base, docs = spec_server
    docs["/api.json"] = json.dumps(_spec(_op_with_body_ref(secrets_outside.as_uri()))).encode()
    for extra in ((), ("--allow-remote-refs",)):
        result = CliRunner().invoke(
            main,
            [
                "import",
                "openapi",
                f"{base}/api.json",
                "--namespace",
                "demo",
                "--out",
                str(tmp_path / "src" / "demo"),
                *extra,
            ],
        )
        assert result.exit_code == 1
        assert "never reads the local disk" in result.output
        assert LEAK not in result.output
    assert not (tmp_path / "src").exists()


# -- 8. limits on what importers read -----------------------------------------------------------------------------
ALIAS_BOMB = (
    "openapi: 3.1.0\ninfo: {title: x, version: '1'}\n"
    + "".join(f"l{i}: &l{i} [{', '.join(['*l' + str(i - 1)] * 9 if i else ['lol'] * 9)}]\n" for i in range(10))
    + "paths: {}\n"
)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("alias_bomb.yaml", ALIAS_BOMB, "aliases expand"),
        ("deep.json", '{"openapi": "3.1.0", "x": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper"),
        ("deep.yaml", "openapi: 3.1.0\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper"),
        ("long_int.json", '{"openapi": "3.1.0", "info": {"version": ' + "9" * 5000 + "}}", "64-bit"),
        ("long_int.yaml", "openapi: 3.1.0\ninfo: {version: " + "9" * 5000 + "}\n", "64-bit"),
    ],
)
def test_hostile_spec_documents_are_located_diagnostics(tmp_path: Path, name: str, text: str, message: str) -> None:
    """Alias bombs, JSON or YAML nested 5,000 deep and 5,000-digit integers are refused quickly, with no traceback."""
    (tmp_path / name).write_text(text)
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["import", "openapi", str(tmp_path / name), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert message in result.output
    assert time.perf_counter() - started < 10


def test_a_ref_to_a_device_is_never_read(tmp_path: Path) -> None:
    """`$ref: file:///dev/zero` (inside a --ref-root of /) is refused as not a regular file, not read forever."""
    (tmp_path / "spec.json").write_text(json.dumps(_spec(_op_with_body_ref("file:///dev/zero"))))
    with pytest.raises(ImporterError, match="not a regular file"):
        import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out", ref_root=Path("/"))


def test_a_ref_fan_out_stops_at_the_schema_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schemas that each name the next twice (2^40 objects) stop at the schema budget with a located error."""
    from toolcat.importers.openapi import schema  # noqa: PLC0415

    monkeypatch.setattr(schema, "MAX_SCHEMA_NODES", 20_000)
    levels = 40
    schemas = {
        f"s{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/components/schemas/s{i + 1}"},
                "b": {"$ref": f"#/components/schemas/s{i + 1}"},
            },
        }
        for i in range(levels)
    }
    schemas[f"s{levels}"] = {"type": "string"}
    spec = _spec(_op_with_body_ref("#/components/schemas/s0"), components={"schemas": schemas})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    started = time.perf_counter()
    with pytest.raises(ImporterError, match="more than 20,000 schema objects"):
        import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out")
    assert time.perf_counter() - started < 10


def test_a_very_long_tag_and_operation_id_make_short_names(tmp_path: Path) -> None:
    """A 100,000-character tag or operationId becomes a folder and id of at most 64 characters, not an OSError."""
    paths = {
        "/x": {
            "get": {"operationId": "op" * 50_000, "tags": ["t" * 100_000], "responses": {"200": {"description": "ok"}}}
        }
    }
    (tmp_path / "spec.json").write_text(json.dumps(_spec(paths)))
    result = import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out")
    assert all(len(part) <= 64 for tool_id in result.tool_ids for part in tool_id.split("."))
    assert all(len(p.name) <= 64 for p in (tmp_path / "out").iterdir())


SILENT_SERVER = "import sys, time\nsys.stdin.readline()\ntime.sleep(600)\n"
ENDLESS_PAGES = """
import json, sys
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "endless", "version": "1"}}
    elif msg["method"] == "tools/list":
        n += 1
        tools = [{"name": f"t{n}_{i}", "description": "x" * 2000, "inputSchema": {"type": "object"}} for i in range(50)]
        result = {"tools": tools, "nextCursor": f"page-{n}"}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def test_a_silent_mcp_server_cannot_hang_the_import(tmp_path: Path) -> None:
    """A server that never answers initialize is cut off at the import's deadline with a clear message."""
    (tmp_path / "silent.py").write_text(SILENT_SERVER)
    started = time.perf_counter()
    with pytest.raises(ImporterError, match="no answer within 3 s"):
        import_mcp(command=f"{sys.executable} {tmp_path / 'silent.py'}", out=tmp_path / "out", timeout=3)
    assert time.perf_counter() - started < 20


def test_an_mcp_server_whose_tools_list_never_ends_stops_at_the_page_budget(tmp_path: Path) -> None:
    """tools/list pages that always have a next cursor stop at MAX_PAGES, well before the deadline, with a diagnostic."""
    (tmp_path / "endless.py").write_text(ENDLESS_PAGES)
    with pytest.raises(ImporterError, match="more than 100 pages"):
        import_mcp(command=f"{sys.executable} {tmp_path / 'endless.py'}", out=tmp_path / "out", timeout=60)
    assert not (tmp_path / "out").exists()


# -- 9. imports never replace sources they did not write ----------------------------------------------------------
def test_import_mcp_never_overwrites_hand_written_tools(tmp_path: Path) -> None:
    """A server calling itself "files" cannot replace catalog_src/files: the import stops, naming --out and --force."""
    src = tmp_path / "catalog_src"
    hand = {"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}
    write_tree(src, {"files/tools.yaml": {"tools": [hand]}, "files/_node.yaml": {"title": "Files"}})
    before = (src / "files" / "tools.yaml").read_text()
    dump = tmp_path / "files.json"
    dump.write_text(json.dumps({"tools": [{"name": "read", "description": "Mine now."}]}))
    with pytest.raises(ImporterError, match="no import wrote"):
        import_mcp(file=dump, src_root=src)
    assert (src / "files" / "tools.yaml").read_text() == before
    result = CliRunner().invoke(main, ["import", "mcp", "--file", str(dump), "--out", str(src / "files")])
    assert result.exit_code == 1
    assert (src / "files" / "tools.yaml").read_text() == before


def test_import_mcp_keeps_overrides_across_reimports(tmp_path: Path) -> None:
    """`import mcp` writes through the shared atomic writer: _import/overrides.yaml survives and applies."""
    dump = tmp_path / "srv.json"
    dump.write_text(json.dumps([{"name": "get_it", "description": "Get it."}]))
    out = tmp_path / "src" / "srv"
    import_mcp(file=dump, out=out)
    (out / "_import" / "overrides.yaml").write_text("tools:\n  srv.get_it:\n    summary: Fetch the thing.\n")
    import_mcp(file=dump, out=out)
    tools = yaml.safe_load((out / "tools.yaml").read_text())["tools"]
    assert tools[0]["summary"] == "Fetch the thing."
    assert (out / "_import" / "overrides.yaml").is_file()


# -- 16. a crash between the two renames ----------------------------------------------------------------------------
def test_a_crash_between_the_two_renames_is_repaired_by_the_next_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after moving --out aside (two-rename swap), the next import puts it back with the author's overrides."""
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(_spec({"/x": {"get": {"operationId": "getX", "responses": {"200": {"description": "ok"}}}}}))
    )
    out = tmp_path / "src" / "demo"
    import_openapi(str(spec), namespace="demo", out=out)
    (out / "_import" / "overrides.yaml").write_text("tools:\n  demo.get_x:\n    summary: Mine.\n")
    monkeypatch.setattr(common, "exchange", lambda _a, _b: False)  # the swap of systems without renameat2
    real_rename = Path.rename

    def dying_rename(self: Path, target: Any) -> Any:
        if ".import-tmp-" in self.name:
            raise SystemExit("killed between the renames")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", dying_rename)
    with pytest.raises(SystemExit):
        import_openapi(str(spec), namespace="demo", out=out)
    monkeypatch.setattr(Path, "rename", real_rename)
    assert not out.exists()  # the crash window: --out is aside in a hidden folder
    import_openapi(str(spec), namespace="demo", out=out)
    assert (out / "_import" / "overrides.yaml").read_text().endswith("summary: Mine.\n")
    assert "Mine." in (out / "tools.yaml").read_text()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".demo.import-")]


def test_a_full_disk_during_an_import_is_a_diagnostic_and_keeps_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while writing the sources is an error naming --out; the previous import is unchanged, no traceback."""
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(_spec({"/x": {"get": {"operationId": "getX", "responses": {"200": {"description": "ok"}}}}}))
    )
    out = tmp_path / "out"
    import_openapi(str(spec), namespace="demo", out=out)
    before = (out / "tools.yaml").read_text()

    def full(self: Path, *args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    result = CliRunner().invoke(main, ["import", "openapi", str(spec), "--namespace", "demo", "--out", str(out)])
    assert result.exit_code == 1
    assert "No space left on device" in result.output
    assert "Traceback" not in result.output
    monkeypatch.undo()
    assert (out / "tools.yaml").read_text() == before


# -- 18. hints never widen trust ----------------------------------------------------------------------------------
def test_x_toolcat_kind_read_on_a_delete_is_ignored_with_a_warning(tmp_path: Path) -> None:
    """The method decides: a DELETE stays kind write (annotated destructive) whatever the spec claims, and the import says so."""
    paths = {
        "/x/{id}": {
            "delete": {
                "operationId": "dropX",
                "x-toolcat-kind": "read",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"204": {"description": "Gone."}},
            }
        }
    }
    (tmp_path / "spec.json").write_text(json.dumps(_spec(paths)))
    result = import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out")
    tool = yaml.safe_load((tmp_path / "out" / "tools.yaml").read_text())["tools"][0]
    assert tool["kind"] == "write"
    assert tool["annotations"] == {"destructiveHint": True}
    assert any("x-toolcat-kind: read ignored on a DELETE" in w for w in result.warnings)


def test_the_auth_variable_comes_from_the_chosen_namespace_not_the_title(tmp_path: Path) -> None:
    """A spec titled "GitHub" no longer picks $GITHUB_TOKEN: --namespace names the variable, else it is TOOLCAT_-prefixed; the import says which."""
    spec = _spec(
        {"/x": {"get": {"operationId": "getX", "responses": {"200": {"description": "ok"}}}}},
        security=[{"token": []}],
        components={"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
    )
    spec["info"]["title"] = "GitHub"
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    derived = import_openapi(str(tmp_path / "spec.json"), out=tmp_path / "a")
    assert "TOOLCAT_GITHUB_TOKEN" in (tmp_path / "a" / "tools.yaml").read_text()
    assert "GITHUB_TOKEN" not in (tmp_path / "a" / "tools.yaml").read_text().replace("TOOLCAT_GITHUB_TOKEN", "")
    assert any("$TOOLCAT_GITHUB_TOKEN" in w for w in derived.warnings)
    chosen = import_openapi(str(tmp_path / "spec.json"), namespace="gh", out=tmp_path / "b")
    assert "env: GH_TOKEN" in (tmp_path / "b" / "tools.yaml").read_text()
    assert any("$GH_TOKEN" in w and "you chose" in w for w in chosen.warnings)


def test_an_mcp_read_only_hint_is_named_in_a_warning(tmp_path: Path) -> None:
    """readOnlyHint makes kind read only with a warning naming the tools; readOnlyHint with destructiveHint stays write."""
    dump = tmp_path / "srv.json"
    dump.write_text(
        json.dumps(
            [
                {"name": "peek", "annotations": {"readOnlyHint": True}},
                {"name": "wipe", "annotations": {"readOnlyHint": True, "destructiveHint": True}},
            ]
        )
    )
    result = import_mcp(file=dump, out=tmp_path / "out")
    kinds = {t["id"]: t["kind"] for t in yaml.safe_load((tmp_path / "out" / "tools.yaml").read_text())["tools"]}
    assert kinds == {"srv.peek": "read", "srv.wipe": "write"}
    assert any("readOnlyHint: srv.peek" in w for w in result.warnings)


def test_the_importer_keeps_api_version_and_response_descriptions(tmp_path: Path) -> None:
    """info.version becomes each tool's version; the success response's description is its result_schema; error texts stay whole."""
    paths = {
        "/x": {
            "get": {
                "operationId": "getX",
                "responses": {
                    "200": {"description": "The thing, with its history."},
                    "404": {"description": "No such thing. Check the id first."},
                },
            }
        }
    }
    (tmp_path / "spec.json").write_text(json.dumps(_spec(paths)))
    import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "src" / "demo")
    tool = yaml.safe_load((tmp_path / "src" / "demo" / "tools.yaml").read_text())["tools"][0]
    assert tool["version"] == "2.4.1"
    assert tool["result_schema"] == {"description": "The thing, with its history."}
    assert tool["errors"] == [{"code": "404", "when": "No such thing. Check the id first."}]
    build(tmp_path / "src", tmp_path / "build")


# -- 3. framing headers at import ----------------------------------------------------------------------------------
def test_framing_header_parameters_are_dropped_at_import(tmp_path: Path) -> None:
    """Content-Length, Transfer-Encoding and Host declared as header parameters never become arguments; the import warns."""
    params = [
        {"name": n, "in": "header", "schema": {"type": "string"}}
        for n in ("Content-Length", "Transfer-Encoding", "Host", "X-Ok")
    ]
    paths = {
        "/x": {"post": {"operationId": "postX", "parameters": params, "responses": {"200": {"description": "ok"}}}}
    }
    (tmp_path / "spec.json").write_text(json.dumps(_spec(paths)))
    result = import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out")
    tool = yaml.safe_load((tmp_path / "out" / "tools.yaml").read_text())["tools"][0]
    assert set(tool["args_schema"]["properties"]) == {"X-Ok"}
    assert sum("framing or hop-by-hop" in w for w in result.warnings) == 3


# -- 22. importers write references to secrets ------------------------------------------------------------------------
def test_import_mcp_writes_env_references_never_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--env KEY=VAR writes env: {KEY: "${VAR}"}; the value reaches neither the sources nor the build."""
    monkeypatch.setenv("UPSTREAM_TOKEN", LEAK)
    dump = tmp_path / "srv.json"
    dump.write_text(json.dumps([{"name": "get_it", "description": "Get it."}]))
    result = CliRunner().invoke(
        main,
        [
            "import",
            "mcp",
            "--file",
            str(dump),
            "--out",
            str(tmp_path / "src" / "srv"),
            "--server-command",
            "node srv.js",
            "--env",
            "API_TOKEN=UPSTREAM_TOKEN",
        ],
    )
    assert result.exit_code == 0, result.output
    tool = yaml.safe_load((tmp_path / "src" / "srv" / "tools.yaml").read_text())["tools"][0]
    assert tool["handler"]["env"] == {"API_TOKEN": "${UPSTREAM_TOKEN}"}
    build(tmp_path / "src", tmp_path / "build")
    assert LEAK not in _every_text(tmp_path / "src") + _every_text(tmp_path / "build")


def test_functions_and_mcp_dumps_share_one_reader(tmp_path: Path) -> None:
    """`import functions --format mcp` and `import mcp --file` read a dump the same way, limits included."""
    from toolcat.importers.functions import load_definitions  # noqa: PLC0415
    from toolcat.importers.mcp import read_dump  # noqa: PLC0415

    dump = tmp_path / "d.json"
    dump.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a"}]}}))
    assert load_definitions(dump, "mcp") == read_dump(dump) == [("/result/tools/0", {"name": "a"})]
    (tmp_path / "deep.json").write_text("[" * 5000 + "]" * 5000)
    for reader in (lambda p: load_definitions(p, "mcp"), read_dump):
        with pytest.raises(ImporterError, match="nested deeper"):
            reader(tmp_path / "deep.json")


def test_a_ref_fan_out_looks_each_ref_up_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fan-out reaches its clean error fast: each $ref is resolved, and each place named, once (issue 36).

    Before, every expanded object resolved its $ref and formatted its place again: a million objects took
    22 s on an idle 2-core machine and 85 s on a busy one (bench/bench_limits.py measures it).
    """
    from toolcat.importers.openapi import refs, schema  # noqa: PLC0415

    monkeypatch.setattr(schema, "MAX_SCHEMA_NODES", 20_000)
    calls = {"lookup": 0, "show": 0}
    lookup, show = refs.Resolver.lookup, refs.Resolver.show

    def counted_lookup(self: Any, *args: Any) -> Any:
        calls["lookup"] += 1
        return lookup(self, *args)

    def counted_show(self: Any, *args: Any) -> Any:
        calls["show"] += 1
        return show(self, *args)

    monkeypatch.setattr(refs.Resolver, "lookup", counted_lookup)
    monkeypatch.setattr(refs.Resolver, "show", counted_show)
    levels = 12
    schemas = {
        f"s{i}": {"type": "object", "properties": {k: {"$ref": f"#/components/schemas/s{i + 1}"} for k in "abcdefghij"}}
        for i in range(levels)
    }
    schemas[f"s{levels}"] = {"type": "string"}
    spec = _spec(_op_with_body_ref("#/components/schemas/s0"), components={"schemas": schemas})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    with pytest.raises(ImporterError, match="more than 20,000 schema objects"):
        import_openapi(str(tmp_path / "spec.json"), namespace="demo", out=tmp_path / "out")
    assert calls["lookup"] <= 2 * (levels + 1), calls
    assert calls["show"] <= 20 * levels, calls

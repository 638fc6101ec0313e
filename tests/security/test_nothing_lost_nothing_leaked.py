"""Nothing lost, nothing leaked: the build's output folder, secrets in sources, the audit log, idempotency keys.

`toolcat build --out` never empties a folder that is not a build and never deletes a file it did
not write; a literal secret in a handler stops the build before it reaches an artifact or the site;
the audit log stays parseable whatever an agent sends; one client's idempotency keys are invisible
to another; a full disk and malformed schemas are diagnostics, not tracebacks.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat.build import build
from toolcat.build.errors import SourceError
from toolcat.cli import main
from toolcat.reader import Catalog
from toolcat.reader.audit import AuditLog, read_audit
from toolcat.reader.execution.idempotency import IdempotencyStore, client_scope

TOKEN = "ghp_PLANTEDtoken0123456789abcdefghijkl"  # noqa: S105 - a planted literal the build must refuse


def _src(root: Path, handler: dict[str, Any] | None = None) -> Path:
    tool: dict[str, Any] = {"id": "demo.ping", "summary": "Ping.", "args_schema": {"type": "object"}}
    if handler is not None:
        tool["handler"] = handler
    return write_tree(root, {"demo/tools.yaml": {"tools": [tool]}, "demo/_node.yaml": {"title": "Demo"}})


# -- 21. the output folder -------------------------------------------------------------------------------------
def test_build_refuses_to_replace_a_folder_that_is_not_a_build(tmp_path: Path) -> None:
    """--out pointing at a folder with important.txt and assets/app.js is an error; both files stay."""
    _src(tmp_path / "src")
    out = write_tree(tmp_path / "site", {"important.txt": "keep me", "assets/app.js": "console.log(1)"})
    result = CliRunner().invoke(main, ["build", str(tmp_path / "src"), "--out", str(out)])
    assert result.exit_code == 1
    assert "not a toolcat build" in result.output
    assert (out / "important.txt").read_text() == "keep me"
    assert (out / "assets" / "app.js").read_text() == "console.log(1)"


def test_build_keeps_files_it_did_not_write(tmp_path: Path) -> None:
    """A file put into a build folder (setuptools' build/lib, a README) survives the next build; toolcat's own old files go."""
    _src(tmp_path / "src")
    out = tmp_path / "build"
    build(tmp_path / "src", out)
    write_tree(out, {"lib/toolcat/__init__.py": "# setuptools put me here", "README.txt": "mine"})
    (tmp_path / "src" / "demo" / "tools.yaml").write_text(
        "tools:\n  - {id: demo.pong, summary: Pong., args_schema: {type: object}}\n"
    )
    build(tmp_path / "src", out, force=True)
    assert (out / "lib" / "toolcat" / "__init__.py").read_text() == "# setuptools put me here"
    assert (out / "README.txt").read_text() == "mine"
    assert Catalog.open(out).tool_describe("demo.pong")["ok"] is True


def test_setuptools_builds_outside_the_catalogue_build_folder() -> None:
    """pyproject.toml sends setuptools' build_base to .setuptools-build, so `pip install .` never writes into build/."""
    import tomllib  # noqa: PLC0415

    from support import REPO  # noqa: PLC0415

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert config["tool"]["distutils"]["build"]["build_base"] == ".setuptools-build"


def test_a_full_disk_during_build_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while writing artifacts is a one-line error naming the folder; the previous build stays; no traceback."""
    _src(tmp_path / "src")
    out = tmp_path / "build"
    build(tmp_path / "src", out)
    before = (out / "catalog.json").read_bytes()
    (tmp_path / "src" / "demo" / "tools.yaml").write_text(
        "tools:\n  - {id: demo.pong, summary: Pong., args_schema: {type: object}}\n"
    )

    def full(self: Path, *args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    monkeypatch.setattr(Path, "write_text", full)
    result = CliRunner().invoke(main, ["build", str(tmp_path / "src"), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output
    assert not isinstance(result.exception, OSError)
    monkeypatch.undo()
    assert (out / "catalog.json").read_bytes() == before


# -- 22. secrets in handlers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "handler",
    [
        {"type": "mcp", "command": ["node", "srv.js"], "env": {"GITHUB_TOKEN": TOKEN}},
        {"type": "mcp", "command": ["node", "srv.js"], "env": {"API_KEY": "s3cr3t-value-42"}},
        {"type": "http", "url": "https://api.example.com/x", "headers": {"Authorization": f"Bearer {TOKEN}"}},
    ],
    ids=["token_prefix", "secret_name", "auth_header"],
)
def test_literal_secrets_in_handlers_stop_the_build_and_are_never_shown(
    tmp_path: Path, handler: dict[str, Any]
) -> None:
    """A literal secret in env or headers is an error naming the field and the ${NAME} fix, never the value; nothing is written."""
    _src(tmp_path / "src", handler)
    result = CliRunner().invoke(main, ["build", str(tmp_path / "src"), "--out", str(tmp_path / "build")])
    assert result.exit_code == 1
    assert "looks like a secret" in result.output
    assert TOKEN not in result.output
    assert "s3cr3t-value-42" not in result.output
    assert not (tmp_path / "build").exists()


def test_secret_references_build_and_only_the_name_is_published(tmp_path: Path) -> None:
    """env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"} builds; the artifacts hold the reference, and settings that are not secrets pass."""
    handler = {
        "type": "mcp",
        "command": ["node", "srv.js"],
        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug"},
    }
    _src(tmp_path / "src", handler)
    build(tmp_path / "src", tmp_path / "build")
    _, spec = Catalog.open(tmp_path / "build").store.spec("demo.ping")
    assert spec["handler"]["env"] == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug"}


def test_the_mcp_handler_reads_references_from_the_host_environment() -> None:
    """${NAME} in a handler's env is read from the host's environment when the server starts; a missing one is NOT_AUTHORIZED."""
    from toolcat.format.envelope import ReaderError  # noqa: PLC0415
    from toolcat.reader.execution.policy import env_values  # noqa: PLC0415

    assert env_values({"T": "${UP}", "L": "debug"}, "t.x", {"UP": "v"}) == {"T": "v", "L": "debug"}
    with pytest.raises(ReaderError) as raised:
        env_values({"T": "${UP}"}, "t.x", {})
    assert raised.value.code == "NOT_AUTHORIZED"


@pytest.mark.parametrize("header", ["Content-Length", "Transfer-Encoding", "Host"])
def test_framing_headers_in_handlers_stop_the_build(tmp_path: Path, header: str) -> None:
    """A handler that sets a framing header, statically or as a parameter, is a located build error."""
    for handler in (
        {"type": "http", "url": "https://api.example.com/x", "headers": {header: "0"}},
        {"type": "http", "url": "https://api.example.com/x", "params": {"h": {"in": "header", "name": header}}},
    ):
        root = tmp_path / f"src-{len(list(tmp_path.iterdir()))}"
        _src(root, handler)
        with pytest.raises(SourceError, match="framing or hop-by-hop"):
            build(root, tmp_path / "build")


# -- 15. malformed schema keywords -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "$schema": 5},
        {"type": "object", "$id": [1]},
        {"type": "object", "properties": {"p": {"$id": 7}}},
    ],
    ids=["schema_int", "id_list", "nested_id_int"],
)
def test_non_string_schema_and_id_are_diagnostics(tmp_path: Path, schema: dict[str, Any]) -> None:
    """A non-string $schema or $id is a located error (the fuzzer found a traceback), at build and in the reader."""
    write_tree(
        tmp_path / "src", {"demo/tools.yaml": {"tools": [{"id": "demo.x", "summary": "X.", "args_schema": schema}]}}
    )
    result = CliRunner().invoke(main, ["build", str(tmp_path / "src"), "--out", str(tmp_path / "build")])
    assert result.exit_code == 1
    assert "must be a string" in result.output
    from toolcat.engines.schemaguard import analyse  # noqa: PLC0415

    assert any(p.code == "keyword_type" for p in analyse(schema))


# -- 14. the audit log -------------------------------------------------------------------------------------------------
def test_audit_lines_stay_parseable_whatever_an_agent_sends(tmp_path: Path) -> None:
    """U+2028, U+2029, U+0085, NUL and a lone surrogate in an op name never split a line or lose the log."""
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, "s1")
    for name in ("a\u2028b", "c\u2029d", "e\u0085f", "g\x00h", "i\ud800j", "plain"):
        log.record(op="exec", target=name, outcome="ok", latency_ms=1, trace_id="t", registry_version="r")
    records = read_audit(path)
    assert [r["target"] for r in records] == ["a\u2028b", "c\u2029d", "e\u0085f", "g\x00h", "i\ud800j", "plain"]
    assert len(path.read_bytes().split(b"\n")) == 7


def test_an_old_log_with_raw_line_separators_still_reads(tmp_path: Path) -> None:
    """A log written before the fix (raw U+2028 inside a value) reads whole: lines end at a newline only."""
    path = tmp_path / "audit.jsonl"
    lines = [json.dumps({"op": "exec", "target": "x\u2028y"}, ensure_ascii=False), json.dumps({"op": "list"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [r["op"] for r in read_audit(path)] == ["exec", "list"]


# -- 13. idempotency keys per client -------------------------------------------------------------------------------------
def test_idempotency_keys_are_scoped_per_client() -> None:
    """Client B reusing client A's key neither replays A's answer nor learns A's tool from a CONFLICT."""
    store = IdempotencyStore()
    with client_scope("client-a"):
        store.put("k1", "billing.charge", "d1", {"result": {"charged": 100}}, [])
        assert store.get("k1", "billing.charge", "d1") == {"result": {"charged": 100}}
    with client_scope("client-b"):
        assert store.get("k1", "billing.charge", "d1") is None
        assert store.get("k1", "notes.read", "d2") is None  # no CONFLICT naming billing.charge
        store.put("k1", "notes.read", "d2", {"result": "b"}, [])
    with client_scope("client-a"):
        assert store.get("k1", "billing.charge", "d1") == {"result": {"charged": 100}}


def test_the_mcp_server_gives_each_client_its_own_scope() -> None:
    """toolcat serve scopes idempotency keys per client: its session (handshake era), else its network address."""
    from types import SimpleNamespace  # noqa: PLC0415

    from toolcat.mcp.server import CatalogServer  # noqa: PLC0415

    server = CatalogServer.__new__(CatalogServer)

    def ctx(version: str, session: str | None = None, host: str | None = None) -> Any:
        headers = {"mcp-session-id": session} if session else {}
        request = SimpleNamespace(headers=headers, client=SimpleNamespace(host=host) if host else None)
        return SimpleNamespace(protocol_version=version, request=request)

    legacy = "2025-11-25"
    first = server.client_id(ctx(legacy, session="s1"))
    assert first == server.client_id(ctx(legacy, session="s1"))
    assert first != server.client_id(ctx(legacy, session="s2"))
    modern = "2026-07-28"
    assert server.client_id(ctx(modern, host="10.0.0.1")) != server.client_id(ctx(modern, host="10.0.0.2"))
    assert server.client_id(ctx(modern, session="s1", host="10.0.0.1")) == server.client_id(
        ctx(modern, host="10.0.0.1")
    )


def test_a_full_disk_during_the_site_build_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while `toolcat site` writes its pages is a one-line error, not a traceback."""
    _src(tmp_path / "src")
    build(tmp_path / "src", tmp_path / "build")

    def full(self: Path, *args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    monkeypatch.setattr(Path, "write_bytes", full)
    result = CliRunner().invoke(main, ["site", "--build", str(tmp_path / "build")])
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output
    assert not isinstance(result.exception, OSError)


@pytest.mark.parametrize("tagged", ["!!timestamp null", "!!int ''"])
def test_a_yaml_tag_pyyaml_cannot_construct_is_a_located_diagnostic(tmp_path: Path, tagged: str) -> None:
    """`!!timestamp null` and `!!int ''` (found by the importer fuzzer) are located errors in sources and imported specs."""
    write_tree(tmp_path / "src", {"a/tools.yaml": f"tools:\n  - id: a.x\n    summary: {tagged}\n"})
    result = CliRunner().invoke(main, ["build", str(tmp_path / "src"), "--out", str(tmp_path / "build")])
    assert result.exit_code == 1
    assert "a/tools.yaml:3:" in result.output
    (tmp_path / "spec.yaml").write_text(f"openapi: 3.1.0\ninfo: {tagged}\n")
    result = CliRunner().invoke(main, ["import", "openapi", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "not valid YAML" in result.output


# -- 20. an mcp handler's command line -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "handler",
    [
        {"type": "mcp", "command": ["python", "/srv/up.py", "--token", "tok-SECRET-123"], "tool": "ping"},
        {"type": "mcp", "url": "https://mcp.example.com/mcp?key=tok-SECRET-123", "tool": "ping"},
    ],
)
def test_an_mcp_handlers_arguments_never_show_in_errors_or_dry_runs(tmp_path: Path, handler: dict[str, Any]) -> None:
    """A token passed as an argument (or in a URL query) is in neither the NOT_AUTHORIZED answer nor the dry-run plan."""
    build(_src(tmp_path / "src", handler), tmp_path / "build")
    catalog = Catalog.open(tmp_path / "build", allow_handlers={"mcp": []})
    refused = catalog.tool_exec("demo.ping", {})
    planned = catalog.tool_exec("demo.ping", {}, dry_run=True)
    described = catalog.tool_describe("demo.ping")
    assert refused["error"]["code"] == "NOT_AUTHORIZED", refused
    for answer in (refused, planned, described):
        assert "tok-SECRET-123" not in json.dumps(answer), answer
    shown = refused["error"]["details"]["target"]
    assert shown in ("stdio server python (+3 args)", "https://mcp.example.com/mcp"), shown

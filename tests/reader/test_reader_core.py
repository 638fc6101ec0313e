"""The runtime reader over a real build folder: every dialect, execution, policy, audit, errors."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support import REPO, write_tree

from toolcat.build import build
from toolcat.reader import ERROR_CODES, Catalog, ReaderError, is_error
from toolcat.reader.audit import read_audit

HANDLER_MODULE = """
from __future__ import annotations
CALLS = {"put": 0}

def echo(args):
    return {"text": args["text"] * args["times"], "times": args["times"]}

def fail(args):
    mode = args["mode"]
    if mode == "perm":
        raise PermissionError("outside the sandbox")
    if mode == "missing":
        raise LookupError("no task T-9")
    if mode == "value":
        raise ValueError("cannot honour that")
    if mode == "exists":
        raise FileExistsError("already there")
    raise RuntimeError("kaboom")

def put(args):
    CALLS["put"] += 1
    return {"stored": args["key"], "calls": CALLS["put"]}

def not_json(args):
    return {"value": object()}
"""


class _Api(BaseHTTPRequestHandler):
    """A tiny JSON API on 127.0.0.1 for the http handler."""

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/items/missing"):
            self._send(404, {"error": "no such item"})
        elif self.path.startswith("/items/crash"):
            self._send(503, {"error": "down"})
        else:
            self._send(200, {"path": self.path, "method": "GET"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self._send(201, {"path": self.path, "method": "POST", "body": json.loads(self.rfile.read(length))})


def _tools(api: str) -> dict:
    obj = {"type": "object"}
    return {
        "_node.yaml": {"title": "Reader test", "summary": "A small catalogue for the reader tests."},
        "demo/_node.yaml": {"title": "Demo", "summary": "Demo tools.", "tags": ["demo"]},
        "demo/tools.yaml": {
            "tools": [
                {
                    "id": "demo.echo",
                    "summary": "Echo some text a number of times",
                    "description": "Echo.",
                    "tags": ["text", "echo"],
                    "kind": "read",
                    "handler": "reader_test_handlers:echo",
                    "args_schema": {
                        **obj,
                        "properties": {
                            "text": {"type": "string", "minLength": 1},
                            "times": {"type": "integer", "minimum": 1, "default": 1},
                        },
                        "required": ["text"],
                        "additionalProperties": False,
                    },
                    "examples": [{"description": "twice", "args": {"text": "hi", "times": 2}}],
                    "policy": {
                        "do": ["Keep it short."],
                        "dont": ["Don't echo secrets."],
                        "edge_cases": ["Empty text is refused."],
                    },
                },
                {
                    "id": "demo.fail",
                    "summary": "Fail in a chosen way",
                    "description": "Raises.",
                    "kind": "read",
                    "handler": "reader_test_handlers:fail",
                    "args_schema": {**obj, "properties": {"mode": {"type": "string"}}, "required": ["mode"]},
                },
                {
                    "id": "demo.store.put",
                    "summary": "Store a value under a key",
                    "description": "Writes.",
                    "kind": "write",
                    "handler": "reader_test_handlers:put",
                    "tags": ["store"],
                    "args_schema": {**obj, "properties": {"key": {"type": "string"}}, "required": ["key"]},
                },
                {
                    "id": "demo.store.weird",
                    "summary": "Return something that is not JSON",
                    "description": "Bug.",
                    "handler": "reader_test_handlers:not_json",
                    "args_schema": obj,
                },
                {
                    "id": "demo.host_only",
                    "summary": "A tool the host runs itself",
                    "description": "No handler.",
                    "args_schema": obj,
                },
                {
                    "id": "demo.old_echo",
                    "summary": "Echo, the old way",
                    "description": "Old.",
                    "deprecated": "use demo.echo",
                    "handler": "reader_test_handlers:echo",
                    "args_schema": {
                        **obj,
                        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}},
                    },
                },
                {
                    "id": "demo.missing_module",
                    "summary": "Handler module is not installed",
                    "description": "x",
                    "handler": "no_such_module_xyz:fn",
                    "args_schema": obj,
                },
            ]
        },
        "web/_node.yaml": {"title": "Web", "summary": "HTTP tools."},
        "web/tools.yaml": {
            "tools": [
                {
                    "id": "web.item.get",
                    "summary": "Fetch one item over HTTP",
                    "description": "GET.",
                    "kind": "read",
                    "handler": {"type": "http", "method": "GET", "url": f"{api}/items/{{item_id}}"},
                    "args_schema": {
                        **obj,
                        "properties": {"item_id": {"type": "string"}, "verbose": {"type": "boolean", "default": False}},
                        "required": ["item_id"],
                    },
                },
                {
                    "id": "web.item.create",
                    "summary": "Create an item over HTTP",
                    "description": "POST.",
                    "kind": "write",
                    "handler": {"type": "http", "method": "POST", "url": f"{api}/items"},
                    "args_schema": {**obj, "properties": {"name": {"type": "string"}}, "required": ["name"]},
                },
            ]
        },
        "bulk/_node.yaml": {"title": "Bulk", "summary": "Many tools in one node, to test paging."},
        "bulk/tools.yaml": {
            "tools": [
                {
                    "id": f"bulk.t{i:03d}",
                    "summary": f"Bulk tool number {i}",
                    "description": "Bulk.",
                    "tags": ["even"] if i % 2 == 0 else ["odd"],
                    "args_schema": obj,
                }
                for i in range(120)
            ]
        },
        "skills/_node.yaml": {"title": "Skills", "summary": "Agent skills."},
        "skills/code-reviewer/SKILL.md": (
            "---\nname: code-reviewer\ndescription: Review code changes for bugs. "
            "Use when asked to review a diff.\n---\n# Code reviewer\n\n"
            "Read references/checklist.md before reviewing.\n"
        ),
        "skills/code-reviewer/references/checklist.md": "# Checklist\n\n- tests pass\n",
    }


@pytest.fixture(scope="module")
def api() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, api: str) -> Path:
    root = tmp_path_factory.mktemp("reader")
    (root / "reader_test_handlers.py").write_text(HANDLER_MODULE)
    sys.path.insert(0, str(root))
    src = write_tree(root / "src", _tools(api))
    build(src, root / "build")
    yield root / "build"
    sys.path.remove(str(root))
    sys.modules.pop("reader_test_handlers", None)


@pytest.fixture
def cat(built: Path, api: str) -> Catalog:
    # http handlers reach 127.0.0.1 only when the host lists it (tests/test_trust_handlers.py)
    return Catalog.open(built, allow_handlers={"http": [api.removeprefix("http://")]})


# -- opening -----------------------------------------------------------------------------------
def test_open_missing_folder_raises_unavailable(tmp_path):
    """Opening a folder without catalog.json raises UNAVAILABLE naming the file."""
    with pytest.raises(ReaderError) as info:
        Catalog.open(tmp_path / "nothing")
    assert info.value.code == "UNAVAILABLE"
    assert "catalog.json" in info.value.message


def test_open_rejects_other_format_version(built, tmp_path):
    """A catalog.json with a newer format_version is refused with an upgrade hint."""
    copy = tmp_path / "b"
    shutil.copytree(built, copy)
    entry = json.loads((copy / "catalog.json").read_text())
    entry["format_version"] = 99
    (copy / "catalog.json").write_text(json.dumps(entry))
    with pytest.raises(ReaderError) as info:
        Catalog.open(copy)
    assert info.value.code == "UNAVAILABLE"
    assert "format_version" in info.value.message


def test_unknown_pinned_version_lists_the_available_ones(built):
    """Pinning a registry_version that is not published is a clear error listing what is."""
    with pytest.raises(ReaderError) as info:
        Catalog.open(built, version="0000000000000000")
    assert info.value.details["available"]


def test_tampered_file_in_folder_is_integrity_error(built, tmp_path):
    """A tool spec edited after the build answers INTEGRITY and is never used."""
    copy = tmp_path / "b"
    shutil.copytree(built, copy)
    spec = next((copy / "tools").glob("demo.echo.*.json"))
    spec.write_bytes(spec.read_bytes().replace(b"Echo some text", b"Evil some text"))
    catalog = Catalog.open(copy)
    out = catalog.expand_tool("demo.echo")
    assert out["error"]["code"] == "INTEGRITY"
    assert "Evil" not in json.dumps(out)


# -- spec dialect ----------------------------------------------------------------------------
def test_root_list_fetches_only_entry_manifest_and_root(cat):
    """list() at the root reads catalog.json, the manifest and the root shard: three files."""
    out = cat.list()
    assert out["ok"]
    assert out["path"] == []
    assert {n["name"] for n in out["nodes"]} == {"bulk", "demo", "skills", "web"}
    assert cat.stats()["requests"] == 3


def test_list_accepts_every_path_spelling(cat):
    """A node path may be a list, 'a/b', 'a.b'; '', None and 'root' mean the root."""
    assert cat.list(["demo"])["path"] == ["demo"]
    assert cat.list("demo")["tools"][0]["tool_id"].startswith("demo.")
    assert cat.list("root")["path"] == cat.list("")["path"] == cat.list(None)["path"] == []


def test_list_pointers_never_carry_schemas(cat):
    """Pointers from list() have ids, summaries and tags but no args_schema and no internal ref."""
    tools = cat.list("demo", limit=50)["tools"]
    assert tools
    assert all("args_schema" not in t and "spec" not in t for t in tools)


def test_list_pages_through_a_big_node_with_cursors(cat):
    """120 tools in one node come back in pages of at most 50, each exactly once, across node pages."""
    seen: list[str] = []
    cursor = None
    while True:
        out = cat.list("bulk", limit=50, cursor=cursor)
        seen += [t["tool_id"] for t in out["tools"]]
        cursor = out["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"bulk.t{i:03d}" for i in range(120)]


def test_list_limit_is_capped_at_50(cat):
    """A limit above 50 is capped."""
    assert len(cat.list("bulk", limit=500)["tools"]) == 50


def test_list_with_tags_filters_the_subtree(cat):
    """tags= keeps only tools carrying every tag, searching below the node."""
    out = cat.list("", tags=["even"], limit=50)
    assert out["tools"]
    assert all("even" in t["tags"] for t in out["tools"])
    assert out["total_tools"] == 60


def test_list_bad_cursor_is_bad_request(cat):
    """A cursor the reader did not produce is BAD_REQUEST, not a crash."""
    assert cat.list("bulk", cursor="zzz")["error"]["code"] == "BAD_REQUEST"


def test_unknown_node_path_suggests_the_closest(cat):
    """An unknown node answers UNKNOWN_PATH with the closest child and a next_action to list its parent."""
    out = cat.list("dem")
    assert out["error"]["code"] == "UNKNOWN_PATH"
    assert "demo" in out["error"]["details"]["suggestions"]
    assert out["error"]["next_action"]["op"] == "list"


def test_expand_tool_returns_the_full_spec(cat):
    """expand_tool gives id, path, summary, the args schema, examples and policy, lean: no empty fields, no token counts."""
    out = cat.expand_tool("demo.echo")
    for key in ("tool_id", "path", "summary", "args_schema", "examples", "policy"):
        assert key in out
    for key in ("result_schema", "errors", "aliases", "tokens", "categories"):  # null, empty or internal
        assert key not in out
    assert out["args_schema"]["required"] == ["text"]
    assert out["next_action"] == {
        "op": "call_tool",
        "args": {"tool_id": "demo.echo", "args": {"text": "hi", "times": 2}},
    }


def test_expand_by_alias(cat):
    """A provider alias resolves to the canonical tool."""
    assert cat.expand_tool("demo_store_put")["tool_id"] == "demo.store.put"
    assert cat.resolve("demo_echo") == "demo.echo"
    assert cat.resolve("code-reviewer") == "task.code_reviewer"
    assert cat.resolve("nope") is None


def test_unknown_tool_suggests_names(cat):
    """A misspelt tool id answers TOOL_NOT_FOUND with suggestions and a next_action."""
    out = cat.expand_tool("demo.ecko")
    assert out["error"]["code"] == "TOOL_NOT_FOUND"
    assert "demo.echo" in out["error"]["details"]["suggestions"]
    assert out["error"]["next_action"]


def test_call_tool_runs_python_handler_with_defaults(cat):
    """call_tool validates, applies the schema default (times=1) and runs the python handler."""
    out = cat.call_tool("demo.echo", {"text": "ab"})
    assert out["ok"]
    assert out["result"] == {"text": "ab", "times": 1}
    assert out["meta"]["trace_id"]
    assert out["meta"]["latency_ms"] >= 0


# -- gateway dialect --------------------------------------------------------------------------
def test_help_root_lists_groups(cat):
    """tool_help('root') and tool_help('') list the namespaces as groups."""
    out = cat.tool_help("root")
    assert [g["name"] for g in out["groups"]] == ["bulk", "demo", "task", "web"]
    assert cat.tool_help("")["groups"] == out["groups"]


def test_help_group_and_subgroup(cat):
    """A group lists its subgroups and direct operations; a subgroup lists its operations."""
    demo = cat.tool_help("demo")
    assert [g["path"] for g in demo["groups"]] == ["demo.store"]
    assert "demo.echo" in [o["op"] for o in demo["operations"]]
    store = cat.tool_help("demo.store")
    assert [o["op"] for o in store["operations"]] == ["demo.store.put", "demo.store.weird"]


def test_help_operation_detail(cat):
    """Op-level help has summary, usage, args with type/required/default, notes, examples and policy."""
    out = cat.tool_help("demo.echo", format="full")
    assert out["level"] == "operation"
    args = {a["name"]: a for a in out["args"]}
    assert args["text"]["required"] is True
    assert args["times"]["type"] == "integer"
    assert args["times"]["default"] == 1
    assert args["times"]["rules"] == "1 ≤ value"
    assert "Empty text is refused." in out["notes"]
    assert out["examples"][0]["args"] == {"text": "hi", "times": 2}
    assert out["policy"]["dont"] == ["Don't echo secrets."]
    assert "args_schema" not in out
    assert "args_schema" in cat.tool_help("demo.echo", include_schemas=True)
    assert "examples" not in cat.tool_help("demo.echo", include_examples=False)


def test_help_unknown_path_suggests(cat):
    """An unknown help path answers UNKNOWN_PATH with the closest groups/ops and a next_action."""
    out = cat.tool_help("demo.stor")
    assert out["error"]["code"] == "UNKNOWN_PATH"
    assert "demo.store" in out["error"]["details"]["suggestions"]
    assert out["error"]["next_action"] == {
        "op": "tool_help",
        "args": {"path": out["error"]["details"]["suggestions"][0]},
    }
    assert cat.tool_help("nonexistent")["error"]["code"] == "UNKNOWN_PATH"


def test_exec_returns_every_field_error(cat):
    """All field errors come back at once, each with field, message and expected."""
    out = cat.tool_exec("demo.echo", {"times": 0, "extra": 1})
    assert out["ok"] is False
    assert out["op"] == "demo.echo"
    errors = {e["field"]: e for e in out["error"]["details"]["field_errors"]}
    assert set(errors) == {"text", "times", "extra"}
    assert errors["times"]["expected"] == "minimum 1"
    assert out["error"]["help_path"] == "demo.echo"


def test_exec_args_must_be_an_object(cat):
    """Non-object args are a VALIDATION_ERROR naming '$'."""
    out = cat.tool_exec("demo.echo", ["x"])
    assert out["error"]["code"] == "VALIDATION_ERROR"
    assert out["error"]["details"]["field_errors"][0]["field"] == "$"


def test_validation_without_jsonschema_falls_back(cat, monkeypatch):
    """Without jsonschema, required fields and types are still checked, and a warning says so."""
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    bad = cat.tool_exec("demo.echo", {"times": "x"})
    assert {e["field"] for e in bad["error"]["details"]["field_errors"]} == {"text", "times"}
    good = cat.tool_exec("demo.echo", {"text": "a"})
    assert good["ok"]
    assert any("jsonschema" in w for w in good["meta"]["warnings"])


def test_dry_run_runs_nothing(cat):
    """dry_run validates, applies defaults and describes the call without running the handler."""
    before = cat.tool_exec("demo.store.put", {"key": "k0"})["result"]["calls"]
    out = cat.tool_exec("demo.store.put", {"key": "k1"}, dry_run=True)
    assert out["ok"]
    assert out["dry_run"]
    assert out["result"] is None
    assert out["would_run"]["target"] == "reader_test_handlers:put"
    after = cat.tool_exec("demo.store.put", {"key": "k2"})["result"]["calls"]
    assert after == before + 1


def test_dry_run_of_http_tool_shows_the_url(cat, api):
    """A dry run of an http tool shows the filled, URL-encoded URL and its query string, schema defaults included (001)."""
    out = cat.tool_exec("web.item.get", {"item_id": "a b/c"}, dry_run=True)
    assert out["would_run"]["url"] == f"{api}/items/a%20b%2Fc?verbose=false"
    out = cat.tool_exec("web.item.get", {"item_id": "a b/c", "verbose": True}, dry_run=True)
    assert out["would_run"]["url"] == f"{api}/items/a%20b%2Fc?verbose=true"


def test_idempotency_key_replays_and_conflicts(cat):
    """The same key and call replays the first result; the same key with other args is CONFLICT."""
    first = cat.tool_exec("demo.store.put", {"key": "x"}, idempotency_key="k-1")
    again = cat.tool_exec("demo.store.put", {"key": "x"}, idempotency_key="k-1")
    assert again["result"] == first["result"]
    assert again["meta"]["replayed"] is True
    clash = cat.tool_exec("demo.store.put", {"key": "y"}, idempotency_key="k-1")
    assert clash["error"]["code"] == "CONFLICT"


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("perm", "NOT_AUTHORIZED"),
        ("missing", "NOT_FOUND"),
        ("value", "VALIDATION_ERROR"),
        ("exists", "CONFLICT"),
        ("boom", "INTERNAL"),
    ],
)
def test_handler_exceptions_become_envelopes(cat, mode, code):
    """Each exception type raised by a handler maps to its code, with the message and no traceback."""
    out = cat.tool_exec("demo.fail", {"mode": mode})
    assert out["error"]["code"] == code
    assert "Traceback" not in json.dumps(out)


def test_non_json_result_is_internal(cat):
    """A handler returning something that is not JSON answers INTERNAL."""
    assert cat.tool_exec("demo.store.weird", {})["error"]["code"] == "INTERNAL"


def test_tool_without_handler_is_not_executable(cat):
    """A tool without a handler answers NOT_EXECUTABLE saying the host must run it."""
    out = cat.tool_exec("demo.host_only", {})
    assert out["error"]["code"] == "NOT_EXECUTABLE"
    assert "host" in out["error"]["message"]


def test_missing_handler_module_is_not_executable(cat):
    """A python handler whose module is not installed answers NOT_EXECUTABLE."""
    assert cat.tool_exec("demo.missing_module", {})["error"]["code"] == "NOT_EXECUTABLE"


def test_deprecated_tool_warns(cat):
    """Executing a deprecated tool warns with what to use instead."""
    out = cat.tool_exec("demo.old_echo", {"text": "a"})
    assert out["ok"]
    assert any("use demo.echo" in w for w in out["meta"]["warnings"])


def test_http_handler_get_and_post(cat):
    """The http handler fills the URL, sends GET args as a query and POST args as a JSON body."""
    got = cat.tool_exec("web.item.get", {"item_id": "i-1", "verbose": True})
    assert got["result"] == {"path": "/items/i-1?verbose=true", "method": "GET"}
    made = cat.tool_exec("web.item.create", {"name": "n"})
    assert made["result"]["body"] == {"name": "n"}
    assert made["result"]["method"] == "POST"


def test_http_handler_error_statuses(cat):
    """A 404 from the endpoint is NOT_FOUND and a 503 UNAVAILABLE, both with the status."""
    missing = cat.tool_exec("web.item.get", {"item_id": "missing"})
    assert missing["error"]["code"] == "NOT_FOUND"
    assert missing["error"]["details"]["status"] == 404
    assert cat.tool_exec("web.item.get", {"item_id": "crash"})["error"]["code"] == "UNAVAILABLE"


def test_read_only_session_refuses_writes(built):
    """read_only=True refuses kind=write tools with PERMISSION_DENIED (001's code) and still runs reads."""
    catalog = Catalog.open(built, read_only=True)
    assert catalog.tool_exec("demo.store.put", {"key": "a"})["error"]["code"] == "PERMISSION_DENIED"
    assert catalog.tool_exec("demo.echo", {"text": "a"})["ok"]


def test_allowed_namespaces(built):
    """allowed_namespaces limits which operations run."""
    catalog = Catalog.open(built, allowed_namespaces=["web"])
    out = catalog.tool_exec("demo.echo", {"text": "a"})
    assert out["error"]["code"] == "NOT_AUTHORIZED"
    assert out["error"]["details"]["allowed_namespaces"] == ["web"]


def test_require_expand(built):
    """require_expand refuses a tool never described this session, then runs it once described."""
    catalog = Catalog.open(built, require_expand=True)
    out = catalog.tool_exec("demo.echo", {"text": "a"})
    assert out["error"]["code"] == "NOT_AUTHORIZED"
    assert out["error"]["next_action"] == {"op": "tool_help", "args": {"path": "demo.echo"}}  # the gateway's describe
    catalog.tool_describe("demo_echo")
    assert catalog.tool_exec("demo.echo", {"text": "a"})["ok"]


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
def test_tool_batch(cat, mode):
    """A batch runs each item and reports per-item envelopes in order."""
    out = cat.tool_batch([{"op": "demo.echo", "args": {"text": "a"}}, {"op": "nope.nope"}, "junk"], mode=mode)
    assert out["count"] == 3
    codes = [r["error"]["code"] if r["status"] == "failed" else r["status"] for r in out["results"]]
    if mode == "parallel":
        assert out["failed"] == 2
        assert codes == ["ok", "TOOL_NOT_FOUND", "BAD_REQUEST"]
    else:  # sequential stops at the first failure
        assert (out["failed"], out["not_run"]) == (1, 1)
        assert codes == ["ok", "TOOL_NOT_FOUND", "not_run"]


# -- namespaced dialect -------------------------------------------------------------------------
def test_tool_list_metadata_only(cat):
    """tool_list gives names and aliases (no schemas), optionally for one namespace or tags."""
    out = cat.tool_list()
    assert out["count"] == 131  # with the generated task.list
    assert all("args_schema" not in t for t in out["tools"])
    web = cat.tool_list("web")
    assert [(t["name"], t["alias"]) for t in web["tools"]] == [
        ("web.item.create", "web_item_create"),
        ("web.item.get", "web_item_get"),
    ]
    assert cat.tool_list("demo", tags=["store"])["count"] == 1
    assert cat.tool_list("wbe")["error"]["code"] == "UNKNOWN_PATH"


def test_skill_levels(cat):
    """A skill: describe gives the body (level 2) and resource list; a resource is read on request (level 3)."""
    described = cat.tool_describe("task.code_reviewer")
    assert "Read references/checklist.md" in described["skill"]["body"]
    assert [r["path"] for r in described["skill"]["resources"]] == ["references/checklist.md"]
    body = cat.tool_exec("task.code_reviewer", {})
    assert body["result"]["type"] == "skill"
    assert body["result"]["instructions"].startswith("# Code reviewer")
    res = cat.tool_exec("task.code_reviewer", {"resource": "references/checklist.md"})
    assert res["result"]["content"].startswith("# Checklist")
    assert cat.read_skill_resource("code-reviewer", "references/checklist.md")["level"] == 3
    assert cat.read_skill_resource("task.code_reviewer", "references/nope.md")["error"]["code"] == "UNKNOWN_PATH"


def test_search_operations(cat):
    """find_tool, search_nodes, search_tool_by_category and list(query=) rank with the search index."""
    found = cat.find_tool("echo some text")
    assert found["ok"]
    assert found["matches"][0]["name"] == "demo.echo"
    assert cat.search_nodes("http tools")["ok"]
    assert cat.search_tool_by_category("item", "web")["ok"]
    ranked = cat.list("", query="store a value")
    assert ranked["tools"][0]["tool_id"] == "demo.store.put"
    assert "confidence" in ranked["tools"][0]


def test_no_match_in_category(cat):
    """A query with no match under a category answers NO_MATCH_IN_CATEGORY."""
    out = cat.search_tool_by_category("echo text", "web")
    assert out["error"]["code"] == "NO_MATCH_IN_CATEGORY"


def test_every_error_code_is_known(cat):
    """Every code the reader answered in these calls is a documented ERROR_CODES entry (or a tool-level NOT_FOUND)."""
    calls = [
        cat.list("x"),
        cat.expand_tool("x.y"),
        cat.tool_exec("demo.fail", {"mode": "boom"}),
        cat.tool_help("q"),
        cat.list(cursor=5),
    ]
    for out in calls:
        assert is_error(out)
        assert out["error"]["code"] in ERROR_CODES
        assert {"hints", "next_action", "help_path"} <= set(out["error"])


# -- audit ----------------------------------------------------------------------------------------
def test_audit_log_records_the_trail(built, tmp_path):
    """search → expand → exec are recorded as JSON Lines with trace id, outcome, latency and version."""
    log = tmp_path / "audit.jsonl"
    catalog = Catalog.open(built, audit=log)
    catalog.find_tool("echo")
    catalog.expand_tool("demo.echo")
    result = catalog.tool_exec("demo.echo", {"text": "a"})
    catalog.tool_exec("demo.echo", {})
    records = read_audit(log)
    assert [r["op"] for r in records] == ["open", "find_tool", "expand", "exec", "exec"]
    assert [r["outcome"] for r in records][-2:] == ["ok", "VALIDATION_ERROR"]
    assert records[3]["trace_id"] == result["meta"]["trace_id"]
    assert {r["session_id"] for r in records} == {catalog.session_id}
    assert all(r["registry_version"] == catalog.registry_version and r["latency_ms"] >= 0 for r in records)


# -- import discipline ------------------------------------------------------------------------------
def _absolute(node: ast.ImportFrom) -> str:
    """The absolute module an import in toolcat/reader/ names (the source folder ships as ``toolcat``)."""
    if node.level == 0:
        return node.module or ""
    base = ["toolcat", "reader"][: 3 - node.level]
    return ".".join([*base, *([node.module] if node.module else [])])


def test_importing_the_reader_loads_nothing_heavy():
    """import toolcat.reader loads neither sklearn, jinja2, yaml, click nor jsonschema."""
    code = (
        "import sys, toolcat.reader; heavy = [m for m in ('sklearn', 'jinja2', 'yaml', 'click', 'jsonschema', "
        "'numpy', 're2', 'referencing') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""

"""Schemas and regexes from catalogues and agents: nothing is retrieved, nothing recurses forever, nothing backtracks.

Build-time checks run through the real CLI on a temporary source tree. Runtime checks open
a real build with ``Catalog.open``; a hostile catalogue (one whose builder skipped the
checks, as a hostile host could serve) is made by building with the schema check switched
off. Anything that hung before the fix runs in a subprocess with a generous timeout, so a
regression fails instead of freezing the suite.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import REPO, write_tree

from toolcat.build import build
from toolcat.build.sources import tools as check_tools
from toolcat.cli import main
from toolcat.engines import regex, schemaguard
from toolcat.format.envelope import ReaderError
from toolcat.reader.catalog import Catalog
from toolcat.reader.execution import arguments

#: Far above what the fixed code needs (about a second, mostly imports); far below "forever".
BOUND_S = 30
MARKER = "TOOLCAT_SECRET_MARKER_7f3a"

BASE: dict[str, Any] = {
    "_node.yaml": {"title": "Test catalogue", "summary": "Schema safety tests."},
    "x/_node.yaml": {"title": "X", "summary": "Tools under test."},
}


def tree_with(schema: dict[str, Any], examples: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A source tree with one tool ``x.t`` whose args_schema is ``schema``."""
    tool: dict[str, Any] = {"id": "x.t", "summary": "Tool under test.", "kind": "read", "args_schema": schema}
    if examples:
        tool["examples"] = examples
    return {**BASE, "x/tools.yaml": {"tools": [tool]}}


def line_of(path: Path, needle: str) -> int:
    """The 1-based line of ``path`` on which ``needle`` first appears."""
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def run_cli(*args: str) -> Any:
    """Invoke the toolcat CLI; a traceback would show as a non-SystemExit exception."""
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def http_spy() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request and would serve a schema."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = json.dumps({"enum": [MARKER]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A local JSON file that a retrieving validator would read (its enum carries the marker)."""
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"enum": [MARKER], "description": MARKER}), encoding="utf-8")
    return path


@pytest.fixture
def hostile_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, Any]], Catalog]:
    """Open a catalogue whose tool x.t has ``schema``, built with the schema checks switched off."""

    def make(schema: dict[str, Any]) -> Catalog:
        with monkeypatch.context() as patch:
            patch.setattr(check_tools._Checker, "schema", lambda _self, value, _path, *, root_object: True)  # noqa: ARG005
            src = write_tree(tmp_path / "hostile-src", tree_with(schema))
            build(src, tmp_path / "hostile-build")
        return Catalog.open(tmp_path / "hostile-build")

    return make


def run_bounded(code: str, env: dict[str, str] | None = None) -> Any:
    """Run ``code`` in a fresh interpreter; what it prints as JSON (a hang fails after BOUND_S)."""
    import os  # noqa: PLC0415

    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=BOUND_S,
            cwd=REPO,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {BOUND_S} s: catastrophic backtracking")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- defect 4: no schema keyword ever retrieves anything ------------------------------------------
@pytest.mark.parametrize("keyword", ["$ref", "$dynamicRef"])
def test_build_never_retrieves_a_remote_reference(
    make_tree: Callable[[dict[str, Any]], Path], http_spy: tuple[str, list[str]], keyword: str
) -> None:
    """A $ref/$dynamicRef to http: is an error naming file, line, path and URI, and the server gets no request."""
    url, hits = http_spy
    src = make_tree(
        tree_with(
            {"type": "object", "properties": {"p": {keyword: f"{url}/schema.json"}}},
            examples=[{"description": "e", "args": {"p": "v"}}],
        )
    )
    result = run_cli("validate", str(src))
    assert result.exit_code == 1
    line = line_of(src / "x/tools.yaml", keyword)
    assert f"x/tools.yaml:{line}:" in result.output
    assert f'$.tools[0].args_schema.properties.p["{keyword}"]' in result.output
    assert f"remote {keyword} '{url}/schema.json' is not allowed" in result.output
    assert "inline it" in result.output
    assert hits == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"p": {"$dynamicRef": "FILE"}}},
        {"type": "object", "properties": {"p": {"$ref": "FILE"}}},
        {"$id": "DIR/", "type": "object", "properties": {"p": {"$ref": "secret.json"}}},
    ],
    ids=["dynamicRef", "ref", "relative_to_id"],
)
def test_build_never_reads_a_local_file(
    make_tree: Callable[[dict[str, Any]], Path], secret_file: Path, schema: dict[str, Any]
) -> None:
    """A reference to file: (directly or through $id) is an error, and the file's content never shows."""
    text = json.dumps(schema).replace("FILE", secret_file.as_uri()).replace("DIR", secret_file.parent.as_uri())
    src = make_tree(tree_with(json.loads(text), examples=[{"description": "e", "args": {"p": "v"}}]))
    result = run_cli("validate", str(src))
    assert result.exit_code == 1
    assert "is not allowed: it points outside this schema" in result.output
    assert MARKER not in result.output


@pytest.mark.parametrize("keyword", ["$dynamicRef", "$ref"])
def test_runtime_never_reads_a_local_file(
    hostile_catalog: Callable[[dict[str, Any]], Catalog], secret_file: Path, keyword: str
) -> None:
    """A served schema whose $dynamicRef/$ref names a local file gets an INTERNAL envelope without its content."""
    catalog = hostile_catalog({"type": "object", "properties": {"p": {keyword: secret_file.as_uri()}}})
    for dry_run in (True, False):
        envelope = catalog.tool_exec("x.t", {"p": "v"}, dry_run=dry_run)
        assert envelope["ok"] is False
        assert envelope["error"]["code"] == "INTERNAL"
        assert "toolcat never retrieves schemas" in envelope["error"]["message"]
        assert MARKER not in json.dumps(envelope)


def test_runtime_never_fetches_a_remote_reference(
    hostile_catalog: Callable[[dict[str, Any]], Catalog], http_spy: tuple[str, list[str]]
) -> None:
    """A served schema whose $dynamicRef or $ref (via $id) points at an http server: no request is made."""
    url, hits = http_spy
    for schema in (
        {"type": "object", "properties": {"p": {"$dynamicRef": f"{url}/s.json"}}},
        {"$id": f"{url}/root.json", "type": "object", "properties": {"p": {"$ref": "other.json"}}},
    ):
        envelope = hostile_catalog(schema).tool_exec("x.t", {"p": "v"}, dry_run=True)
        assert envelope["error"]["code"] == "INTERNAL", envelope
        assert MARKER not in json.dumps(envelope)
    assert hits == []


def test_the_validator_registry_refuses_every_uri() -> None:
    """Even a validator asked to resolve a remote URI directly raises instead of retrieving it."""
    import referencing.exceptions  # noqa: PLC0415

    resolver = schemaguard.refusing_registry().resolver()
    for uri in ("http://127.0.0.1:9/x.json", "file:///etc/passwd", "urn:anything"):
        with pytest.raises(referencing.exceptions.Unresolvable):
            resolver.lookup(uri)


# -- defect 11: $ref cycles, dangling refs and depth -------------------------------------------------
CYCLES: dict[str, dict[str, Any]] = {
    "two_defs": {
        "type": "object",
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "properties": {"p": {"$ref": "#/$defs/a"}},
    },
    "root_self": {"type": "object", "$ref": "#"},
    "through_anyOf": {
        "type": "object",
        "$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}},
        "properties": {"p": {"$ref": "#/$defs/a"}},
    },
}


@pytest.mark.parametrize("name", sorted(CYCLES))
def test_ref_cycle_is_a_build_error(make_tree: Callable[[dict[str, Any]], Path], name: str) -> None:
    """A $ref loop that never descends into the value is a diagnostic with file and line, not a traceback."""
    src = make_tree(tree_with(CYCLES[name], examples=[{"description": "e", "args": {"p": 1}}]))
    result = run_cli("validate", str(src))
    assert result.exit_code == 1
    assert "$ref cycle that never moves into the value" in result.output
    assert "x/tools.yaml:" in result.output
    assert "Break the loop" in result.output


@pytest.mark.parametrize("name", ["two_defs", "root_self"])
def test_ref_cycle_is_an_envelope_at_runtime(hostile_catalog: Callable[[dict[str, Any]], Catalog], name: str) -> None:
    """A served schema with a $ref loop answers INTERNAL naming the loop and the fix, never RecursionError."""
    envelope = hostile_catalog(CYCLES[name]).tool_exec("x.t", {"p": 1})
    assert envelope["error"]["code"] == "INTERNAL", envelope
    assert "$ref cycle" in envelope["error"]["message"]
    assert "RecursionError" not in json.dumps(envelope)
    assert any("toolcat build --strict" in hint for hint in envelope["error"]["hints"])


def test_ref_cycle_through_a_combinator_is_refused_by_the_reader() -> None:
    """A loop through anyOf (the build's prompt stage cannot even render it) is INTERNAL in the reader too."""
    with pytest.raises(ReaderError) as caught:
        arguments.validate_args(CYCLES["through_anyOf"], {"p": 1}, [])
    assert caught.value.code == "INTERNAL"
    assert "#/$defs/a → #/$defs/a/anyOf/1 → #/$defs/a" in caught.value.message


def test_dangling_ref_is_a_build_error_and_an_envelope(
    make_tree: Callable[[dict[str, Any]], Path], hostile_catalog: Callable[[dict[str, Any]], Catalog]
) -> None:
    """A $ref to a missing definition fails the build with its line, and answers INTERNAL at runtime."""
    schema = {"type": "object", "properties": {"p": {"$ref": "#/$defs/missing"}}}
    src = make_tree(tree_with(schema))
    result = run_cli("validate", str(src))
    assert result.exit_code == 1
    assert f"x/tools.yaml:{line_of(src / 'x/tools.yaml', '$ref')}:" in result.output
    assert "$ref '#/$defs/missing' points to nothing in this schema" in result.output
    envelope = hostile_catalog(schema).tool_exec("x.t", {"p": 1})
    assert envelope["error"]["code"] == "INTERNAL"
    assert "points to nothing" in envelope["error"]["message"]


TREE = {
    "type": "object",
    "required": ["root"],
    "properties": {"root": {"$ref": "#/$defs/node"}},
    "$defs": {
        "node": {
            "type": "object",
            "required": ["value"],
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        }
    },
}


def nested_tree(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """A tree node ``levels`` deep whose innermost value is ``leaf``."""
    node: dict[str, Any] = {"value": leaf}
    for _ in range(levels):
        node = {"value": 1, "children": [node]}
    return node


def test_recursive_schema_still_builds_and_validates(tmp_path: Path) -> None:
    """A legal recursive schema (children.items refs the node) builds, and nested values validate."""
    src = write_tree(
        tmp_path / "src", tree_with(TREE, examples=[{"description": "e", "args": {"root": nested_tree(3)}}])
    )
    result = run_cli("build", str(src), "--out", str(tmp_path / "build"), "--strict")
    assert result.exit_code == 0, result.output
    catalog = Catalog.open(tmp_path / "build")
    assert catalog.tool_exec("x.t", {"root": nested_tree(20)}, dry_run=True)["ok"] is True
    bad = catalog.tool_exec("x.t", {"root": nested_tree(5, leaf="x")}, dry_run=True)
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    assert bad["error"]["details"]["field_errors"][0]["field"] == "root" + ".children.0" * 5 + ".value"


def test_deep_and_cyclic_args_are_validation_errors(tmp_path: Path) -> None:
    """Args nested past the limit, or containing themselves, are a VALIDATION_ERROR naming the field and limit."""
    src = write_tree(tmp_path / "src", tree_with(TREE))
    build(src, tmp_path / "build")
    catalog = Catalog.open(tmp_path / "build")
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    cyclic: dict[str, Any] = {"value": 1}
    cyclic["children"] = [cyclic]
    for args in ({"root": nested_tree(200)}, {"root": deep}, {"root": cyclic}):
        envelope = catalog.tool_exec("x.t", args)
        assert envelope["error"]["code"] == "VALIDATION_ERROR", envelope
        error = envelope["error"]["details"]["field_errors"][0]
        assert error["field"] == "root"
        assert str(schemaguard.MAX_ARGS_DEPTH) in error["message"]


def test_defaults_are_filled_without_recursion() -> None:
    """apply_defaults walks a schema far deeper than the recursion limit without a RecursionError."""
    schema: dict[str, Any] = {"type": "string", "default": "leaf"}
    for _ in range(3000):
        schema = {"type": "object", "properties": {"a": schema}, "default": {}}
    filled = arguments.apply_defaults(schema, {})
    depth = 0
    while isinstance(filled, dict) and "a" in filled:
        filled, depth = filled["a"], depth + 1
    assert depth == schemaguard.MAX_ARGS_DEPTH  # filled to the limit, then left alone
    envelope_errors = arguments.validate_args(schema, arguments.apply_defaults(schema, {}), [])
    assert envelope_errors
    assert "64 levels" in envelope_errors[0]["message"]


def test_deep_schema_is_refused_before_validation() -> None:
    """A schema nested past the limit is an INTERNAL error from the reader, not a RecursionError."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(500):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(ReaderError) as caught:
        arguments.validate_args(schema, {"a": {}}, [])
    assert caught.value.code == "INTERNAL"
    assert f"deeper than {schemaguard.MAX_SCHEMA_DEPTH} levels" in caught.value.message


def test_nested_dialect_switch_is_refused() -> None:
    """A nested $schema (which would make jsonschema use its stock, backtracking validator there) is an error."""
    problems = schemaguard.analyse(
        {
            "type": "object",
            "properties": {"p": {"$schema": "http://json-schema.org/draft-07/schema#", "pattern": "^(a+)+$"}},
        }
    )
    assert [p.code for p in problems if p.severity == "error"] == ["nested_schema"]


# -- defect 11 and 2: regexes in schemas at build ---------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ({"type": "object", "properties": {"p": {"type": "string", "pattern": "(["}}}, "pattern"),
        ({"type": "object", "patternProperties": {"([": {"type": "string"}}}, "(["),
    ],
)
def test_invalid_pattern_fails_validate_and_build(
    make_tree: Callable[[dict[str, Any]], Path], schema: dict[str, Any], needle: str
) -> None:
    """pattern "([" (or such a patternProperties key) is an error with file, line and JSON path."""
    src = make_tree(tree_with(schema))
    for command in (["validate", str(src), "--strict"], ["validate", str(src)]):
        result = run_cli(*command)
        assert result.exit_code == 1, result.output
        assert f"x/tools.yaml:{line_of(src / 'x/tools.yaml', needle)}:" in result.output
        assert "'([' is not a valid regular expression" in result.output
        assert "$.tools[0].args_schema." in result.output


BACKTRACKING = [r"^(a+)+$", r"(a*)*b", r"^(a|a)*$", r"^(\w+\s?)+$", r"^(([a-z])+.)+[A-Z]([a-z])+$", r"(a|aa)+$"]
SAFE = [
    r"^[a-z0-9]+(-[a-z0-9]+)*$",
    r"^\d{10}\.\d{6}$",
    r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$",
    r"^(\w+\s)+$",
    r"^https?://.*",
    r"^[UW][A-Z0-9]{8,}$|^$",
    r"(\d+\.)+\d+",
]


@pytest.mark.parametrize("pattern", BACKTRACKING)
def test_backtracking_pattern_warns_and_fails_strict(make_tree: Callable[[dict[str, Any]], Path], pattern: str) -> None:
    """A ReDoS-shaped pattern is a warning with line and rewrite hint, and an error under --strict."""
    src = make_tree(tree_with({"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}}))
    relaxed = run_cli("validate", str(src))
    assert relaxed.exit_code == 0, relaxed.output
    location = f"x/tools.yaml:{line_of(src / 'x/tools.yaml', 'pattern')}:"
    assert f"{location}" in relaxed.output
    assert "warning: $.tools[0].args_schema.properties.p.pattern:" in relaxed.output
    assert "exponential time in backtracking regex engines" in relaxed.output
    assert "hint: toolcat runs it in RE2" in relaxed.output
    strict = run_cli("validate", str(src), "--strict")
    assert strict.exit_code == 1
    assert location in strict.output


@pytest.mark.parametrize("pattern", SAFE)
def test_ordinary_patterns_do_not_warn(pattern: str) -> None:
    """Common unambiguous patterns (slugs, ids, e-mails, dotted numbers) raise no backtracking warning."""
    assert regex.backtracking_risk(pattern) is None
    assert regex.check(pattern) is None


def test_lookahead_pattern_warns_at_build_and_refuses_only_calls_that_need_it(tmp_path: Path) -> None:
    """A lookahead pattern RE2 cannot run: a build warning; the reader refuses a call that sets that field."""
    schema = {
        "type": "object",
        "properties": {"flag": {"type": "string", "pattern": "^(?!-)"}, "n": {"type": "integer"}},
    }
    src = write_tree(tmp_path / "src", tree_with(schema))
    result = run_cli("build", str(src), "--out", str(tmp_path / "build"))
    assert result.exit_code == 0, result.output
    assert "uses negative lookahead (?!...), which RE2 does not support" in result.output
    assert "not: {pattern: X}" in result.output
    assert run_cli("validate", str(src), "--strict").exit_code == 1
    catalog = Catalog.open(tmp_path / "build")
    assert catalog.tool_exec("x.t", {"n": 1}, dry_run=True)["ok"] is True
    refused = catalog.tool_exec("x.t", {"flag": "--exec=x"}, dry_run=True)
    assert refused["error"]["code"] == "INTERNAL"
    assert "negative lookahead" in refused["error"]["message"]


def test_verify_flags_an_invalid_pattern_in_built_artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """toolcat verify reports a tool spec whose args_schema holds an invalid regex or a $ref cycle."""
    schema = {
        "type": "object",
        "properties": {"p": {"type": "string", "pattern": "(["}, "q": {"$ref": "#"}},
        "$defs": {"a": {"$ref": "#/$defs/a"}},
    }
    with monkeypatch.context() as patch:
        patch.setattr(check_tools._Checker, "schema", lambda _self, value, _path, *, root_object: True)  # noqa: ARG005
        build(write_tree(tmp_path / "src", tree_with(schema)), tmp_path / "build")
    result = run_cli("verify", str(tmp_path / "build"))
    assert result.exit_code == 1
    assert "$.args_schema.properties.p.pattern: '([' is not a valid regular expression" in result.output
    assert "$ref cycle" in result.output


# -- defect 2: regexes at runtime run in RE2 --------------------------------------------------------
RUNTIME_REDOS = r"""
import json, time
from toolcat.reader.execution import arguments
evil = "a" * 5000 + "!"
cases = {
    "pattern": ({"type": "object", "properties": {"p": {"type": "string", "pattern": "^(a+)+$"}}}, {"p": evil}),
    "patternProperties": ({"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}}, {evil: 1}),
    "additionalProperties": ({"type": "object", "patternProperties": {"^(a+)+$": {}},
                              "additionalProperties": False}, {evil: 1}),
    "unevaluatedProperties": ({"type": "object", "patternProperties": {"^(a+)+$": {}},
                               "unevaluatedProperties": False}, {evil: 1}),
}
out = {}
for name, (schema, args) in cases.items():
    out[name] = [e["message"][:40] for e in arguments.validate_args(schema, args, [])]
print(json.dumps(out))
"""


def test_schema_regexes_run_in_linear_time() -> None:
    """pattern, patternProperties, additionalProperties and unevaluatedProperties check (a+)+ on 5,000 chars at once."""
    out = run_bounded(RUNTIME_REDOS)
    assert len(out["pattern"]) == 1  # does not match: one error
    assert out["pattern"][0].startswith('got "aaaa')
    assert out["patternProperties"] == []
    assert len(out["additionalProperties"]) == 1
    assert len(out["unevaluatedProperties"]) == 1


def test_schema_regex_semantics_are_kept() -> None:
    r"""RE2 keeps JSON Schema's search semantics: unanchored match, \uXXXX escapes, patternProperties."""
    schema = {
        "type": "object",
        "properties": {"p": {"type": "string", "pattern": "b\\u00e9"}, "q": {"type": "string", "pattern": "^[a-z]+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert arguments.validate_args(schema, {"p": "abéc", "q": "abc", "x-n": 1}, []) == []
    errors = arguments.validate_args(schema, {"p": "abc", "q": "ab1", "x-n": "one", "y": 1}, [])
    assert [e["field"] for e in errors] == ["p", "q", "x-n", "y"]
    assert arguments.validate_args(schema, {"q": "ab\ud800"}, [])[0]["field"] == "q"  # a lone surrogate: no crash


FILE_SEARCH = r"""
import json, os
from toolcat.examples.files import file_search
result = file_search({"pattern": "(-+)+y", "path": "."})
found = file_search({"pattern": "(-+)+Y", "path": ".", "case_sensitive": False})
print(json.dumps({"plain": len(result["matches"]), "found": [m["line"] for m in found["matches"]]}))
"""


def test_file_search_pattern_cannot_freeze_the_gateway(tmp_path: Path) -> None:
    """file.search with (-+)+y over a long '# ----' line returns at once; flags still work."""
    (tmp_path / "notes.txt").write_text("# " + "-" * 5000 + "\n" + "-" * 40 + "y\n", encoding="utf-8")
    out = run_bounded(FILE_SEARCH, env={"TOOLCAT_SANDBOX": str(tmp_path)})
    assert out == {"plain": 1, "found": [2]}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A sandbox root with one text file, for the file.* tools."""
    (tmp_path / "src.py").write_text("def Alpha():\n    return alpha_value\n", encoding="utf-8")
    monkeypatch.setenv("TOOLCAT_SANDBOX", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_file_search_refuses_lookaround_with_a_rewrite_hint(example_build: Path, workspace: Path) -> None:
    """A lookahead or backreference pattern is a VALIDATION_ERROR on 'pattern' that says how to rewrite it."""
    catalog = Catalog.open(example_build)
    for pattern, reason in (("alpha(?=_value)", "lookahead"), (r"(a)\1", "backreference")):
        envelope = catalog.tool_exec("file.search", {"pattern": pattern})
        assert envelope["error"]["code"] == "VALIDATION_ERROR", envelope
        assert reason in envelope["error"]["message"]
        assert envelope["error"]["details"]["field_errors"][0]["field"] == "pattern"
        assert "fixed_string: true" in envelope["error"]["hints"][0]
    assert workspace.is_dir()


def test_file_search_keeps_case_and_literal_options(example_build: Path, workspace: Path) -> None:
    """Case-insensitive by default, case_sensitive and fixed_string still work under RE2."""
    catalog = Catalog.open(example_build)
    folded = catalog.tool_exec("file.search", {"pattern": "alpha"})["result"]["matches"]
    exact = catalog.tool_exec("file.search", {"pattern": "alpha", "case_sensitive": True})["result"]["matches"]
    literal = catalog.tool_exec("file.search", {"pattern": "Alpha()", "fixed_string": True})["result"]["matches"]
    assert [m["line"] for m in folded] == [1, 2]
    assert [(m["line"], m["column"]) for m in exact] == [(2, 12)]
    assert [(m["line"], m["column"]) for m in literal] == [(1, 5)]
    assert workspace.is_dir()


# -- the real corpus ---------------------------------------------------------------------------------
def _patterns(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "pattern" and isinstance(item, str):
                yield item
            if key == "patternProperties" and isinstance(item, dict):
                yield from item
            yield from _patterns(item)
    elif isinstance(value, list):
        for item in value:
            yield from _patterns(item)


def test_corpus_patterns_all_run_in_re2(corpus: Path) -> None:
    """Every pattern in the corpus's MCP lists and OpenAPI specs compiles in RE2 and raises no ReDoS warning."""
    import yaml  # noqa: PLC0415

    found: list[str] = []
    for path in sorted((corpus / "tools").rglob("*")):
        if path.suffix == ".json":
            found.extend(_patterns(json.loads(path.read_text(encoding="utf-8"))))
        elif path.suffix in (".yaml", ".yml"):
            found.extend(_patterns(yaml.safe_load(path.read_text(encoding="utf-8"))))
    assert len(found) >= 30  # 37 occurrences, 31 distinct, when this test was written
    assert [p for p in found if regex.check(p) is not None] == []
    assert [p for p in found if regex.backtracking_risk(p)] == []

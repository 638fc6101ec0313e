"""Provider exports: every definition meets its provider's documented rules; names map back to ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema.validators import Draft202012Validator

from toolcat.build import compile_catalog
from toolcat.build.contributors.exports.definitions import (
    PROVIDER_NAMES,
    definition,
    export_dialect,
    export_specs,
    openai_strict_args,
    restore_args,
    to_canonical,
    validate_definition,
)
from toolcat.cli import main
from toolcat.format.aliases import PROVIDER_RULES
from toolcat.format.dialects import DIALECT_NAMES, dialect_tools
from toolcat.importers.mcp import arguments_schema
from toolcat.reader.folder import BuildFolder


def _docker_schema(tool: dict) -> dict:
    """Docker's flattened ``arguments`` list (or nothing) as a JSON Schema, as an importer would read it."""
    return tool["inputSchema"] if "inputSchema" in tool else arguments_schema(tool.get("arguments", []))


def _corpus_tools(corpus: Path) -> list[tuple[str, str, dict]]:
    tools: list[tuple[str, str, dict]] = []
    for path in sorted((corpus / "tools/mcp/github-mcp-server/toolsnaps").glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        tools.append((f"github/{path.stem}", raw.get("description", ""), raw["inputSchema"]))
    for path in sorted((corpus / "tools/mcp/docker-mcp-registry/servers").glob("*/tools.json")):
        tools.extend(
            (f"{path.parent.name}/{raw['name']}", raw.get("description", ""), _docker_schema(raw))
            for raw in json.loads(path.read_text(encoding="utf-8"))
        )
    return tools


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:60]


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_example_catalogue_exports_meet_provider_rules(example_build, provider):
    """Every catalogue tool of the example build, exported for the provider, passes that provider's constraints."""
    folder = BuildFolder(example_build)
    specs = folder.specs()
    export = export_specs(provider, specs.values())
    assert len(export.definitions) == len(specs)
    for item in export.definitions:
        assert validate_definition(provider, item) == [], item
    aliases = folder.aliases(provider)["to_alias"]
    assert set(export.names) == {aliases[i] for i in specs}


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
@pytest.mark.parametrize("dialect", [d for d in DIALECT_NAMES if dialect_tools(d)])  # direct: the catalogue export
def test_dialect_exports_meet_provider_rules(provider, dialect):
    """The discovery tools of each dialect are valid definitions for each provider."""
    export = export_dialect(provider, dialect)
    assert export.definitions
    for item in export.definitions:
        assert validate_definition(provider, item) == []


@pytest.mark.corpus
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_corpus_tool_lists_meet_provider_rules(corpus, provider):
    """The GitHub MCP server's 117 tools and the Docker registry's tools all export validly; losses are warned."""
    tools = _corpus_tools(corpus)
    assert sum(1 for name, _, _ in tools if name.startswith("github/")) == 117
    warnings = []
    for name, description, schema in tools:
        item = definition(provider, _safe(name), description or name, schema, name, warnings)
        problems = validate_definition(provider, item)
        assert problems == [], (name, problems)
    assert all(w.tool and w.json_path.startswith(("$", "description")) for w in warnings)
    if provider == "gemini":
        assert any("oneOf became anyOf" in w.message for w in warnings)


def test_openai_strict_round_trip_of_examples(example_build):
    """Each authored example, with nulls for the optionals it leaves out, validates against the strict schema and restores exactly."""
    checked = 0
    for spec in BuildFolder(example_build).specs().values():
        item = export_specs("openai", [spec]).definitions[0]["function"]
        if not item["strict"]:
            continue
        for example in spec["examples"]:
            args = example.get("args", {})
            filled = openai_strict_args(args, spec["args_schema"])
            errors = list(Draft202012Validator(item["parameters"]).iter_errors(filled))
            assert not errors, (spec["tool_id"], [e.message for e in errors])
            restored = restore_args("openai", filled, spec["args_schema"])
            # a null for a nullable optional cannot be told from an omission; both mean "no value"
            assert {k: v for k, v in restored.items() if v is not None or k in args} == args
            checked += 1
    assert checked >= 20


def test_openai_adaptation_rules():
    """Optional properties become null unions, every object closes, and dropped keywords are warned with tool and path."""
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "string", "minLength": 2},
            "b": {"type": "integer", "default": 3, "enum": [1, 3]},
            "c": {"type": "object", "properties": {"d": {"type": "boolean"}}},
            "e": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
    }
    warnings = []
    fn = definition("openai", "t_x", "T.", schema, "t.x", warnings)["function"]
    params = fn["parameters"]
    assert fn["strict"] is True
    assert params["additionalProperties"] is False
    assert params["required"] == ["a", "b", "c", "e"]
    assert params["properties"]["b"]["type"] == ["integer", "null"]
    assert params["properties"]["b"]["enum"] == [1, 3, None]
    assert params["properties"]["c"]["type"] == ["object", "null"]
    assert params["properties"]["c"]["additionalProperties"] is False
    assert params["properties"]["e"]["anyOf"][-1] == {"type": "null"}
    assert "at least 2 characters" in params["properties"]["a"]["description"].lower()
    rendered = {w.render() for w in warnings}
    assert (
        "openai t.x $.properties.a.minLength: dropped 'minLength' (not supported in strict mode); kept in the description"
        in rendered
    )
    assert any(w.json_path == "$.properties.e" and "oneOf" in w.message for w in warnings)


def test_openai_free_form_object_turns_strict_off():
    """A schema strict mode cannot express is exported non-strict, with a warning saying where."""
    warnings = []
    fn = definition(
        "openai", "t_x", "T.", {"type": "object", "properties": {"meta": {"type": "object"}}}, "t.x", warnings
    )["function"]
    assert fn["strict"] is False
    assert validate_definition("openai", {"type": "function", "function": fn}) == []
    assert any("strict mode off: $.properties.meta" in w.message for w in warnings)


def test_gemini_adaptation_rules():
    """Gemini gets $ref inlined, type arrays as nullable, string-only enums, and no additionalProperties."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["when"],
        "$defs": {"span": {"type": "object", "properties": {"start": {"type": "string", "format": "date-time"}}}},
        "properties": {
            "when": {"$ref": "#/$defs/span"},
            "note": {"type": ["string", "null"], "format": "uri"},
            "level": {"type": "integer", "enum": [1, 2]},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    warnings = []
    decl = definition("gemini", "t_x", "T.", schema, "t.x", warnings)
    params = decl["parameters"]
    assert validate_definition("gemini", decl) == []
    assert params["properties"]["when"]["properties"]["start"] == {"type": "string", "format": "date-time"}
    assert params["properties"]["note"]["type"] == "string"
    assert params["properties"]["note"]["nullable"] is True
    assert "enum" not in params["properties"]["level"]
    assert "one of 1, 2" in params["properties"]["level"]["description"].lower()
    assert params["properties"]["maybe"] == {"type": "string", "nullable": True}
    paths = {w.json_path for w in warnings}
    assert {"$.properties.note.format", "$.properties.level.enum"} <= paths


def test_gemini_tool_without_arguments_has_no_parameters():
    """A tool that takes nothing is declared without parameters (Gemini rejects an empty object)."""
    decl = definition("gemini", "ping", "Ping.", {"type": "object", "properties": {}}, "x.ping", [])
    assert "parameters" not in decl
    assert validate_definition("gemini", decl) == []


def test_anthropic_drops_top_level_combinators():
    """Anthropic's input_schema keeps JSON Schema but loses a top-level anyOf, with a warning."""
    warnings = []
    item = definition(
        "anthropic",
        "t_x",
        "T.",
        {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]},
        "t.x",
        warnings,
    )
    assert "anyOf" not in item["input_schema"]
    assert validate_definition("anthropic", item) == []
    assert [w.json_path for w in warnings] == ["$.anyOf"]


def test_validator_catches_broken_definitions():
    """The constraint checker rejects bad names, open objects in strict mode and non-string Gemini enums."""
    bad_openai = {
        "type": "function",
        "function": {
            "name": "file.read",
            "description": "",
            "strict": True,
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
    problems = validate_definition("openai", bad_openai)
    assert any("name 'file.read'" in p for p in problems)
    assert any("additionalProperties must be false" in p for p in problems)
    assert any("every property must be required" in p for p in problems)
    bad_gemini = {"name": "x", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "enum": [1]}}}}
    assert any("enum must be strings" in p for p in validate_definition("gemini", bad_gemini))


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_alias_round_trip(example_build, provider):
    """Every tool's provider alias maps back to its canonical id, from the build folder and from the alias map."""
    folder = BuildFolder(example_build)
    to_alias = folder.aliases(provider)["to_alias"]
    rule = PROVIDER_RULES[provider]
    for tool_id, alias in to_alias.items():
        assert rule.pattern.match(alias)
        assert to_canonical(provider, alias, example_build) == tool_id
        assert to_canonical(provider, tool_id, folder) == tool_id
    with pytest.raises(KeyError, match="not an alias or id"):
        to_canonical(provider, "no_such_tool", folder)


def test_alias_round_trip_from_compiled_catalog(example_src_copy):
    """to_canonical also takes the compiled Catalog model."""
    catalog, _ = compile_catalog(example_src_copy)
    tool = next(iter(catalog.tools.values()))
    assert to_canonical("gemini", tool.aliases["gemini"], catalog) == tool.id


def test_build_writes_provider_files(example_build):
    """The build holds each provider's whole-catalogue and dialect definitions, referenced from the manifest."""
    folder = BuildFolder(example_build)
    entry = folder.manifest["providers"]
    for provider in PROVIDER_NAMES:
        whole = folder.fetch_json(entry[provider]["catalog"])
        tools = whole["tools"][0]["functionDeclarations"] if provider == "gemini" else whole["tools"]
        assert len(tools) == len(folder.specs())
        assert set(entry[provider]["dialects"]) == set(DIALECT_NAMES)
        assert entry[provider]["warnings"] == len(whole["warnings"])


def test_tampered_file_is_refused(example_build, tmp_path):
    """BuildFolder refuses a file whose bytes do not match the hash its parent holds."""
    copy = tmp_path / "build"
    shutil.copytree(example_build, copy)
    folder = BuildFolder(copy)
    ref = folder.manifest["providers"]["openai"]["catalog"]
    (copy / ref["path"]).write_bytes(b"[]")
    with pytest.raises(ValueError, match="sha256 does not match"):
        folder.fetch_json(ref)


def test_cli_export_gates_tools(example_build, tmp_path):
    """`toolcat export --tools` writes only the named tools (by id or alias) under their provider aliases."""
    folder = BuildFolder(example_build)
    first, second = sorted(folder.specs())[:2]
    alias = folder.aliases("anthropic")["to_alias"][second]
    out = tmp_path / "tools.json"
    result = CliRunner().invoke(
        main,
        [
            "export",
            "--provider",
            "anthropic",
            "--tools",
            f"{first},{alias}",
            "--build",
            str(example_build),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    names = [t["name"] for t in json.loads(out.read_text())]
    assert names == sorted([folder.aliases("anthropic")["to_alias"][first], alias])


def test_cli_export_dialect_and_errors(example_build, tmp_path):
    """`--dialect gateway` gives its three tools (seed 001), the pinned ones only with --pinned; errors are clean."""
    runner = CliRunner()
    no_build = ["--build", str(tmp_path / "no-build")]  # never the working directory's build/, which may exist
    result = runner.invoke(main, ["export", "--provider", "gemini", "--dialect", "gateway", *no_build])
    assert result.exit_code == 1, "without a build the pinned tools would be left out silently"
    assert "no build at" in result.output
    assert "toolcat build" in result.output
    assert not result.stdout.lstrip().startswith("[")
    always = [e["alias"] for e in BuildFolder(example_build).manifest.get("always_load", [])]
    assert always, "the example catalogue has always-loaded tools"
    gateway = ["export", "--provider", "gemini", "--dialect", "gateway", "--build", str(example_build)]
    result = runner.invoke(main, gateway)
    assert result.exit_code == 0
    declarations = json.loads(result.stdout)[0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["tool_help", "tool_exec", "tool_batch"], "as MCP lists them"
    result = runner.invoke(main, [*gateway, "--pinned"])
    assert result.exit_code == 0
    declarations = json.loads(result.stdout)[0]["functionDeclarations"]
    assert [d["name"] for d in declarations][:3] == ["tool_help", "tool_exec", "tool_batch"]
    assert sorted(d["name"] for d in declarations[3:]) == sorted(always)
    bad = runner.invoke(
        main, ["export", "--provider", "openai", "--tools", "nope.nothing", "--build", str(example_build)]
    )
    assert bad.exit_code == 1
    assert "'nope.nothing' is not an alias or id" in bad.output

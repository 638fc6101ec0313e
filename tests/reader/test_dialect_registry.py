"""One registry of dialects: DIALECTS maps each name to the module that carries its protocol row."""

from __future__ import annotations

import ast

from jsonschema import Draft202012Validator
from support import REPO

from toolcat.format.dialects import DIALECT_NAMES, dialect_tools, discovery_tool, input_help
from toolcat.reader.dialects import DIALECTS, PROTOCOL
from toolcat.reader.dialects.protocol import OPS

DIALECT_DIR = REPO / "compiler" / "reader" / "dialects"


def test_registry_names_are_the_format_names():
    """DIALECTS lists exactly format.dialects.DIALECT_NAMES, in order, and each module knows its own name."""
    assert tuple(DIALECTS) == DIALECT_NAMES
    assert all(name == module.NAME for name, module in DIALECTS.items())


def test_each_module_carries_its_operations_and_protocol_row():
    """Each dialect module names its discovery tools, renders every abstract op and names a tool for each hint."""
    for name, module in DIALECTS.items():
        assert tuple(t.name for t in dialect_tools(name)) == module.OPERATIONS
        assert set(module.PROTOCOL_ROW) == set(OPS) == set(module.HINT_NAMES)
        # a dialect without discovery tools (direct) names what the agent has in words, never a tool it lacks
        worded = {n for n in module.HINT_NAMES.values() if " " in n} if not module.OPERATIONS else set()
        assert set(module.HINT_NAMES.values()) - worded <= set(module.OPERATIONS), name
        assert PROTOCOL[name] is module.PROTOCOL_ROW


def test_no_dialect_module_imports_another():
    """spec.py, gateway.py and namespaced.py import only shared.py and protocol.py of their package."""
    for name in DIALECT_NAMES:
        tree = ast.parse((DIALECT_DIR / f"{name}.py").read_text(encoding="utf-8"))
        siblings = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
        assert not siblings & (set(DIALECT_NAMES) - {name}), name
        assert {n for n in siblings if n in {*DIALECT_NAMES, "shared", "protocol"}} <= {"shared", "protocol"}, name


def test_cli_choices_come_from_the_one_list():
    """serve --dialect and export --dialect offer DIALECT_NAMES (no literal copy of the names)."""
    for module in ("serve.py", "export.py"):
        text = (REPO / "compiler" / "commands" / module).read_text(encoding="utf-8")
        assert '"spec", "gateway", "namespaced"' not in text, module
        assert "DIALECT_NAMES" in text, module


def test_input_help_is_a_call_of_the_same_dialect():
    """After a discovery tool refuses its input, input_help names a tool of its dialect with args its schema accepts."""
    for name in DIALECT_NAMES:
        for tool in dialect_tools(name):
            action = input_help(tool)
            target = discovery_tool(action["op"], name)
            assert target is not None, (tool.name, action)
            assert list(Draft202012Validator(target.input_schema).iter_errors(action["args"])) == []


def test_every_dialect_declares_its_traits_and_is_served_exported_and_prompted(example_build):
    """Each registered dialect has traits, a prompt template, an export and an MCP server that lists its tools."""
    from toolcat.build.contributors.exports.definitions import export_dialect  # noqa: PLC0415 - the [build] extra
    from toolcat.format.dialects import TRAITS  # noqa: PLC0415 - kept beside the one test that reads it
    from toolcat.mcp.server import ServeOptions, make_server  # noqa: PLC0415 - the [mcp] extra

    assert tuple(TRAITS) == DIALECT_NAMES, "declare the new dialect's traits in toolcat.format.dialects.TRAITS"
    for name in DIALECT_NAMES:
        assert (REPO / "templates" / "prompts" / "system" / f"{name}.md.j2").is_file(), name
        expected = {t.name for t in dialect_tools(name)}
        server = make_server(ServeOptions(location=str(example_build), dialect=name, transport="stdio"))
        listed = {tool["name"] for tool in server.listed_tools()}
        assert expected <= listed, name
        assert bool(server.direct) == TRAITS[name].catalogue_tools, name
        if not TRAITS[name].catalogue_tools:  # direct: the catalogue's own tools, exported by export_specs
            exported = {v.split(":", 1)[-1] for v in export_dialect("openai", name).names.values()}
            assert expected <= exported, name

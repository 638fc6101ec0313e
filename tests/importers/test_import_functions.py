"""``toolcat import functions``: provider definitions become sources; export then import gives back the args_schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import REPO

from toolcat.build import build
from toolcat.build.contributors.exports.definitions import export_specs
from toolcat.cli import main
from toolcat.importers.common import ImporterError, snake
from toolcat.importers.functions import import_functions, split_description, undo_openai_strict
from toolcat.reader.folder import BuildFolder

PROVIDERS = ("openai", "anthropic", "gemini")


def _open_objects(node: Any) -> Any:
    """``node`` without ``additionalProperties: false`` (OpenAI strict always adds it, Gemini always drops it).

    ``anyOf [X, null]`` as X with null in its type (Gemini's rewriting), ``required`` is compared as a set (strict mode lists it in property order) and an empty
    ``properties`` or ``required`` as absent (the OpenAI and Anthropic exports add it to a bare object).
    """
    if isinstance(node, list):
        return [_open_objects(v) for v in node]
    if isinstance(node, dict):
        branches = node.get("anyOf")
        if (
            isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches and "type" not in node
        ):  # Gemini writes anyOf [X, null] as X with nullable
            other = next(b for b in branches if b != {"type": "null"})
            if isinstance(other, dict) and isinstance(other.get("type"), str):
                rest = {k: v for k, v in node.items() if k != "anyOf"}
                node = {**other, **rest, "type": [other["type"], "null"]}
        return {
            k: sorted(v) if k == "required" and isinstance(v, list) else _open_objects(v)
            for k, v in node.items()
            if not (k == "additionalProperties" and v is False) and not (k in ("properties", "required") and not v)
        }
    return node


def _invoke(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output


def _round_trip(build_dir: Path, tmp_path: Path) -> dict[str, tuple[int, int]]:
    """Export every tool for each provider, import it back, rebuild, and compare; returns {provider: (same, lossy)}."""
    original = BuildFolder(build_dir).specs()
    figures = {}
    for provider in PROVIDERS:
        exported = tmp_path / f"{provider}.json"
        _invoke("export", "--provider", provider, "--build", str(build_dir), "--out", str(exported))
        first = export_specs(provider, original.values())
        lossy = {w.tool for w in first.warnings}
        src, out = tmp_path / provider / "src", tmp_path / provider / "build"
        _invoke(
            "import", "functions", str(exported), "--format", provider, "--namespace", "rt", "--out", str(src / "rt")
        )
        build(src, out)
        again = BuildFolder(out).specs()
        by_name = {spec["aliases"][provider]: spec for spec in again.values()}
        assert len(again) == len(original)
        same = 0
        for tool_id, spec in original.items():
            back = by_name[spec["aliases"][provider]]
            if tool_id in lossy:
                continue
            if provider == "anthropic" and spec["args_schema"].get("properties"):
                assert back["args_schema"] == spec["args_schema"], tool_id
            else:
                assert _open_objects(back["args_schema"]) == _open_objects(spec["args_schema"]), tool_id
            assert back["summary"] == spec["summary"], tool_id
            same += 1
        second = export_specs(provider, again.values())  # what was lost stays lost, nothing more: a fixed point

        def by_name(definitions: list[Any]) -> dict[str, Any]:
            return {json.dumps(d, sort_keys=True): None for d in definitions}

        assert by_name(second.definitions) == by_name(first.definitions)
        figures[provider] = (same, len(lossy))
    return figures


def test_example_catalogue_round_trips_through_every_provider(tmp_path: Path) -> None:
    """catalog_src exported for OpenAI, Anthropic and Gemini and imported back keeps every unadapted args_schema."""
    build(REPO / "catalog_src", tmp_path / "build")
    figures = _round_trip(tmp_path / "build", tmp_path)
    total = len(BuildFolder(tmp_path / "build").specs())
    assert figures["anthropic"] == (total, 0)
    assert figures["gemini"][0] > 0
    assert figures["openai"][0] > 0


@pytest.mark.corpus
@pytest.mark.slow
def test_corpus_mcp_lists_import_and_round_trip(corpus: Path, tmp_path: Path) -> None:
    """The GitHub toolsnaps and the Docker registry's inputSchema lists import exactly, and survive export + import."""
    mcp = corpus / "tools" / "mcp"
    sources = {"github": mcp / "github-mcp-server" / "toolsnaps"}
    for server in ("alfresco", "okta-mcp-server", "vectra-ai-rux-mcp-server", "keboola-mcp"):
        sources[server.replace("-", "_")] = mcp / "docker-mcp-registry" / "servers" / server / "tools.json"
    expected: dict[str, Any] = {}
    for ns, path in sources.items():
        _invoke(
            "import", "functions", str(path), "--format", "mcp", "--namespace", ns, "--out", str(tmp_path / "src" / ns)
        )
        items = (
            [json.loads(p.read_text()) for p in sorted(path.glob("*.json"))]
            if path.is_dir()
            else json.loads(path.read_text())
        )
        for item in items:
            if "inputSchema" in item:
                expected[f"{ns}.{snake(item['name'])}"] = item["inputSchema"]
    build(tmp_path / "src", tmp_path / "build")
    specs = BuildFolder(tmp_path / "build").specs()
    assert len(specs) == 117 + 10 + 108 + 25 + 33
    for tool_id, schema in expected.items():
        assert specs[tool_id]["args_schema"] == {**schema, "type": schema.get("type", "object")}, tool_id
    figures = _round_trip(tmp_path / "build", tmp_path / "rt")
    assert figures["anthropic"][0] >= len(specs) - 5


def test_openai_strict_is_undone_and_descriptions_split(tmp_path: Path) -> None:
    """Strict mode's null-for-optional and all-required are undone; summary, description, when_to_use come apart."""
    strict = {
        "type": "object",
        "additionalProperties": False,
        "required": ["a", "b", "c"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": ["integer", "null"]},
            "c": {
                "anyOf": [
                    {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
                    {"type": "null"},
                ]
            },
        },
    }
    assert undo_openai_strict(strict) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer"},
            "c": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }
    assert split_description("Read a file.\n\nLong text.\n\nMore.\n\nWhen to use: reading.", "x") == (
        "Read a file.",
        "Long text.\n\nMore.",
        "reading.",
    )
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {"name": "getWeather", "description": "Weather.", "parameters": strict, "strict": True},
                }
            ]
        )
    )
    result = import_functions(tools, fmt="openai", namespace="w", out=tmp_path / "src" / "w")
    assert result.tool_ids == ("w.get_weather",)
    build(tmp_path / "src", tmp_path / "build")
    spec = BuildFolder(tmp_path / "build").specs()["w.get_weather"]
    assert spec["aliases"]["openai"] == "getWeather"
    assert spec["args_schema"]["required"] == ["a"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"tools\.json:1:2: not valid JSON"),
        ('{"x": 1}', r"expected a list of anthropic definitions"),
        ('[{"description": "no name"}]', r"at /0: a function definition needs a 'name'"),
        ('[{"name": "a_b"}, {"name": "A-b"}]', r"at /1: 'A-b' and 'a_b' both become the id t\.a_b"),
    ],
)
def test_bad_definition_files_are_located_errors(tmp_path: Path, content: str, message: str) -> None:
    """Unreadable JSON, a wrong shape, a nameless or colliding definition: one error, nothing written."""
    tools = tmp_path / "tools.json"
    tools.write_text(content)
    with pytest.raises(ImporterError, match=message):
        import_functions(tools, fmt="anthropic", namespace="t", out=tmp_path / "out")
    assert not (tmp_path / "out").exists()

"""SRC/toolcat.yaml (or toolcat.yml) configures the build: read once, checked, never read as a tools file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat.build import build
from toolcat.build.config import configured_embedder, read_config
from toolcat.build.errors import Severity, SourceError
from toolcat.build.pipeline import compile_catalog
from toolcat.cli import main


def test_toolcat_yaml_at_the_root_is_not_a_tools_file(tmp_path: Path) -> None:
    """A catalogue with toolcat.yaml (search: {embedder: none}) builds, and no tool comes from that file."""
    tree = {
        "_node.yaml": {"title": "C", "summary": "Config test."},
        "toolcat.yaml": {"search": {"embedder": "none"}},
        "files/_node.yaml": {"title": "Files", "summary": "File tools."},
        "files/tools.yaml": {
            "tools": [{"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}]
        },
    }
    result = build(write_tree(tmp_path / "src", tree), tmp_path / "build")
    assert result.counts["tools"] == 1
    assert not [w for w in result.warnings if "toolcat.yaml" in w.file]


# -- one config: SRC/toolcat.yaml or SRC/toolcat.yml, read once through parse_file -------------------------

TREE: dict[str, object] = {
    "_node.yaml": {"title": "C", "summary": "Config test."},
    "files/tools.yaml": {"tools": [{"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}]},
}


def test_toolcat_yml_is_read_like_toolcat_yaml(tmp_path: Path) -> None:
    """toolcat.yml is the settings file when it is the only one: its embedder is used, not silently ignored."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yml": "search: {embedder: static-minilm}\n"})
    config = read_config(src)
    assert (config.embedder, config.file, config.diagnostics) == ("static-minilm", "toolcat.yml", ())


def test_an_unknown_embedder_in_toolcat_yml_fails_the_build_at_its_line(tmp_path: Path) -> None:
    """search.embedder naming no model is a located error of toolcat.yml, and nothing is built."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yml": "# settings\nsearch:\n  embedder: no-such-model\n"})
    result = CliRunner().invoke(main, ["build", str(src), "--out", str(tmp_path / "build")])
    assert result.exit_code == 1
    assert "toolcat.yml:3:3: error: $.search.embedder: unknown embedder 'no-such-model'" in result.output
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("spec", ["minilm-tools", "minilm-onnx", "minilm-onnx-f32", "terms", "onnx:/models/x#cls"])
def test_every_named_embedder_the_docs_offer_is_accepted(tmp_path: Path, spec: str) -> None:
    """search.embedder may name the default (minilm-tools), the base model (minilm-onnx) or an onnx: folder."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yml": f"search: {{embedder: '{spec}'}}\n"})
    config = read_config(src)
    assert (config.embedder, config.diagnostics) == (spec, ())


def test_a_misspelt_default_embedder_suggests_it(tmp_path: Path) -> None:
    """embedder: minilm-tool is an error whose hint names minilm-tools."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yml": "search: {embedder: minilm-tool}\n"})
    [problem] = read_config(src).diagnostics
    assert (problem.code, problem.hint) == ("unknown_embedder", "Did you mean 'minilm-tools'?")


def test_both_settings_files_at_once_are_an_error(tmp_path: Path) -> None:
    """toolcat.yaml and toolcat.yml together are refused: which one wins would be a guess."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yaml": "search: {}\n", "toolcat.yml": "search: {}\n"})
    [problem] = read_config(src).diagnostics
    assert (problem.severity, problem.code, problem.file) == (Severity.ERROR, "two_config_files", "toolcat.yml")
    with pytest.raises(SourceError):
        compile_catalog(src)


def test_unknown_settings_are_warnings_with_a_did_you_mean_and_fail_under_strict(tmp_path: Path) -> None:
    """A misspelt key (serach, embeder) is a located warning suggesting the right one; --strict fails the build."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yaml": "serach: {}\nsearch:\n  embeder: minilm\n"})
    found = {d.json_path: d for d in read_config(src).diagnostics}
    assert set(found) == {"$.serach", "$.search.embeder"}
    assert (found["$.serach"].line, found["$.serach"].hint) == (1, "Did you mean 'search'?")
    assert (found["$.search.embeder"].line, found["$.search.embeder"].hint) == (3, "Did you mean 'embedder'?")
    assert all(d.severity is Severity.WARNING and d.code == "unknown_setting" for d in found.values())
    assert CliRunner().invoke(main, ["validate", str(src)]).exit_code == 0
    strict = CliRunner().invoke(main, ["validate", str(src), "--strict"])
    assert strict.exit_code == 1
    assert "toolcat.yaml:1:1: warning: $.serach: unknown setting 'serach' is ignored" in strict.output


@pytest.mark.parametrize(
    ("text", "json_path", "line"),
    [
        ("search: minilm\n", "$.search", 1),
        ("search:\n  embedder: [minilm]\n", "$.search.embedder", 2),
        ("- search\n", "$", 1),
    ],
    ids=["section_not_a_mapping", "embedder_not_a_string", "root_not_a_mapping"],
)
def test_settings_of_the_wrong_type_are_located_errors(tmp_path: Path, text: str, json_path: str, line: int) -> None:
    """A value of the wrong type is an error naming its path and line, whatever --strict says."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yaml": text})
    [problem] = read_config(src).diagnostics
    assert (problem.severity, problem.code, problem.json_path, problem.line) == (
        Severity.ERROR,
        "wrong_type",
        json_path,
        line,
    )


def test_the_settings_file_is_held_to_the_source_limits(tmp_path: Path) -> None:
    """toolcat.yaml is parsed under the source limits: an alias bomb is a located error, not minutes of work."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yaml": "\n".join(lines) + "\n"})
    [problem] = read_config(src).diagnostics
    assert (problem.code, problem.file, problem.line) == ("alias_expansion", "toolcat.yaml", 6)


@pytest.mark.parametrize("value", ["none", "off", "false", "null", "''"])
def test_embedder_none_off_or_empty_turns_vectors_off(tmp_path: Path, value: str) -> None:
    """embedder: none/off/false/null/'' means no vectors (YAML's bare off is the boolean false)."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yaml": f"search: {{embedder: {value}}}\n"})
    config = read_config(src)
    assert (config.embedder, config.diagnostics) == (None, ())


def test_the_command_line_embedder_wins_over_the_settings(tmp_path: Path) -> None:
    """--embedder overrides search.embedder; --embedder none turns it off."""
    src = write_tree(tmp_path / "src", {**TREE, "toolcat.yml": "search: {embedder: minilm}\n"})
    assert configured_embedder(src) == "minilm"
    assert configured_embedder(src, "static-minilm") == "static-minilm"
    assert configured_embedder(src, "none") is None
    assert read_config(src).embedder_for(None) == "minilm"

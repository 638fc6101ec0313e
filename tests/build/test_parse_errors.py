"""One parse: every kind of source file reports the same user error with the same code, message and place.

Tools files, ``_node.yaml``, SKILL.md frontmatter, skill ``metadata.yaml``, ``toolcat.yaml`` and eval files are
all read by :func:`toolcat.build.sources.parse.parse_file`; before it, one duplicate key was reported five ways.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import write_tree

from toolcat.build.errors import Diagnostic, SourceError
from toolcat.build.evals import load_eval
from toolcat.build.pipeline import compile_catalog
from toolcat.build.sources.parse import MAX_SKILL_MD_BYTES, MAX_SOURCE_BYTES, parse_bytes
from toolcat.cli import main

BASE: dict[str, Any] = {
    "_node.yaml": {"title": "Parse", "summary": "One parse for every file."},
    "files/_node.yaml": {"title": "Files", "summary": "File tools."},
    "files/tools.yaml": {"tools": [{"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}]},
    "skills/helper/SKILL.md": "---\nname: helper\ndescription: Helps. Use when asked for help.\n---\n# Helper\n",
}

#: kind → (file, how its content is wrapped, lines before the content in the file)
KINDS: dict[str, tuple[str, Any, int]] = {
    "tools file": ("files/tools.yaml", lambda body: body, 0),
    "_node.yaml": ("files/_node.yaml", lambda body: body, 0),
    "SKILL.md": ("skills/helper/SKILL.md", lambda body: b"---\n" + body + b"---\n# Helper\n", 1),
    "metadata.yaml": ("skills/helper/metadata.yaml", lambda body: body, 0),
    "toolcat.yaml": ("toolcat.yaml", lambda body: body, 0),
    "eval file": ("evals/search.yaml", lambda body: body, 0),
}

_BOMB = [b'a: &a ["x","x","x","x","x","x","x","x","x"]']
_BOMB += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]".encode() for i in range(8)]

#: error → (content, code, line in the content, column, JSON path, fragment of the message)
ERRORS: dict[str, tuple[bytes, str, int, int, str, str]] = {
    "duplicate key": (
        b"summary: A.\nsummary: B.\n",
        "duplicate_key",
        2,
        1,
        "$.summary",
        "duplicate key 'summary': YAML would keep only the last value",
    ),
    "tab indentation": (
        b"tags:\n\t- a\n",
        "yaml_tab",
        2,
        1,
        "$.tags",
        "YAML does not allow tabs for indentation; use spaces",
    ),
    "alias bomb": (b"\n".join(_BOMB) + b"\n", "alias_expansion", 6, 8, "$.f[0]", "YAML aliases expand this document"),
    "too deep": (
        b"x: " + b"[" * 70 + b"]" * 70 + b"\n",
        "too_deep",
        1,
        67,
        "$.x" + "[0]" * 63,
        "nested deeper than 64",
    ),
    "invalid UTF-8": (b"title: caf\xe9\n", "encoding", 1, 11, "", "not UTF-8 text"),
    "unquoted comma in a flow mapping": (
        b"x: {type: string, description: Path, relative or absolute}\n",
        "flow_mapping",
        1,
        38,
        '$.x["relative or absolute"]',
        "an unquoted ',' split a value",
    ),
    "unquoted colon in a flow mapping": (
        b"x: {description: see: here}\n",
        "flow_mapping",
        1,
        21,
        "$.x.description",
        "an unquoted ': ' or ',' inside a flow mapping",
    ),
}


def diagnostics_of(src: Path, kind: str) -> list[Diagnostic]:
    """The errors the build (or ``toolcat eval``, for an eval file) reports for the bad file of ``kind``."""
    rel = KINDS[kind][0]
    read = (lambda: load_eval(src / rel, src)) if kind == "eval file" else (lambda: compile_catalog(src))
    with pytest.raises(SourceError) as caught:
        read()
    return [d for d in caught.value.diagnostics if d.file == rel]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("error", list(ERRORS))
def test_every_file_kind_reports_a_parse_error_the_same_way(tmp_path: Path, kind: str, error: str) -> None:
    """The same mistake in any kind of source file gives one error with the same code, message, place and hint."""
    rel, wrap, shift = KINDS[kind]
    content, code, line, column, json_path, fragment = ERRORS[error]
    src = write_tree(tmp_path / "src", {**BASE, rel: wrap(content)})
    [found] = diagnostics_of(src, kind)
    assert (found.code, found.line, found.column, found.json_path or "") == (code, line + shift, column, json_path)
    assert fragment in found.message
    assert found.hint
    assert found.message == parse_bytes("x.yaml", content)[0].message  # type: ignore[index]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_file_kind_refuses_a_file_over_its_size_limit(tmp_path: Path, kind: str) -> None:
    """A file over its size limit is refused before it is read, with the same code and the limit named."""
    rel, _, _ = KINDS[kind]
    limit = MAX_SKILL_MD_BYTES if kind == "SKILL.md" else MAX_SOURCE_BYTES
    src = write_tree(tmp_path / "src", {**BASE, rel: b"#" * (limit + 1)})
    [found] = diagnostics_of(src, kind)
    assert found.code == "too_large"
    assert f"over the limit of {limit // (1024 * 1024)} MiB" in found.message
    assert found.hint


def test_a_parse_error_in_the_cli_names_file_line_column_and_path(tmp_path: Path) -> None:
    """`toolcat validate` prints the located message and the hint, and exits 1."""
    src = write_tree(tmp_path / "src", {**BASE, "skills/helper/metadata.yaml": "author: a\nauthor: b\n"})
    result = CliRunner().invoke(main, ["validate", str(src)])
    assert result.exit_code == 1
    assert "skills/helper/metadata.yaml:2:1: error: $.author: duplicate key 'author'" in result.output
    assert "hint: Remove or rename one of the two 'author' keys" in result.output


def test_a_tab_inside_a_block_scalar_is_text_not_an_error() -> None:
    """Tabs are refused only as indentation: inside a literal block they are the text's own."""
    parsed = parse_bytes("x.yaml", b"description: |\n  a\n  \tindented code\n")
    assert not isinstance(parsed, list)
    assert parsed.data == {"description": "a\n\tindented code\n"}


def test_a_yaml_set_written_as_a_flow_mapping_is_not_mistaken_for_a_split_value() -> None:
    """``!!set {a, b}`` means its bare keys; it is refused only because JSON has no sets."""
    [found] = parse_bytes("x.yaml", b"tags: !!set {a, b}\n")  # type: ignore[misc]
    assert found.code == "not_json"
    assert found.json_path == "$.tags"


def test_frontmatter_lines_are_those_of_the_file() -> None:
    """A SKILL.md's parsed lines count from the top of the file, so diagnostics need no offset."""
    parsed = parse_bytes("s/SKILL.md", b"---\nname: s\ndescription: d\n---\nbody\n")
    assert not isinstance(parsed, list)
    assert parsed.where("$.description") == (3, 1)
    assert parsed.body is not None
    assert parsed.body.strip() == "body"

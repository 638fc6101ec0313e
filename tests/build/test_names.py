"""One rule set for names (toolcat.format.names): the build refuses, with a located error, what readers refuse."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support import write_tree

from toolcat.build.errors import SourceError
from toolcat.build.pipeline import compile_catalog
from toolcat.format import names
from toolcat.format.envelope import ReaderError
from toolcat.format.refs import check_ref

BASE: dict[str, Any] = {
    "_node.yaml": {"title": "Names", "summary": "Name rules."},
    "files/tools.yaml": {"tools": [{"id": "file.read", "summary": "Read a file.", "args_schema": {"type": "object"}}]},
    "skills/helper/SKILL.md": "---\nname: helper\ndescription: Helps. Use when asked for help.\n---\n# Helper\n",
}

#: Resource file names a file system can hold; the reader must accept each, or the build must refuse it.
RESOURCE_NAMES = [
    "references/guide.md",
    "references/a\nb.md",
    "notes\r.txt",
    "tab\there.txt",
    "bell\x07.txt",
    "del\x7f.txt",
    "c1\x85.txt",
    "back\\slash.txt",
    "c:drive.txt",
    "references/c:fine.txt",
    "rtl\u202eexe.txt",
    "line\u2028sep.txt",
    "accents-é.md",
    "日本語.md",
    "a" * 600 + ".txt",
]


def reader_accepts(resource: str) -> bool:
    """Whether a reader accepts the ref the build would write for this resource (skills/<hash>/<path>)."""
    try:
        check_ref({"path": f"skills/{'0' * 16}/{resource}", "sha256": "0" * 64, "bytes": 0})
    except ReaderError:
        return False
    return True


@pytest.mark.parametrize("resource", RESOURCE_NAMES, ids=lambda name: repr(name)[:24])
def test_a_resource_name_the_reader_refuses_is_refused_by_the_rule(resource: str) -> None:
    """resource_path_problem refuses every name whose ref a reader would refuse (and may refuse a few more)."""
    if not reader_accepts(resource):
        assert names.resource_path_problem(resource) is not None
    if resource in ("references/guide.md", "accents-é.md", "日本語.md", "c:drive.txt", "references/c:fine.txt"):
        assert names.resource_path_problem(resource) is None


@pytest.mark.parametrize("resource", ["references/a\nb.md", "back\\slash.txt", "bell\x07.txt", "del\x7f.txt"])
def test_the_build_refuses_a_skill_resource_with_a_name_no_reader_accepts(tmp_path: Path, resource: str) -> None:
    """A bundled file with a newline (or a backslash, a control character) fails the build, located."""
    if os.name == "nt":  # pragma: no cover - such names cannot be created there
        pytest.skip("Windows file names cannot hold these characters")
    src = write_tree(tmp_path / "src", {**BASE, f"skills/helper/{resource}": "data\n"})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    [problem] = caught.value.diagnostics
    assert (problem.file, problem.code) == ("skills/helper", "bad_resource_name")
    assert repr(resource) in problem.message
    assert problem.hint
    assert repr(resource) in problem.render().splitlines()[0]  # the name is shown escaped, on one line
    assert not reader_accepts(resource)  # what the build refuses here, a reader would have refused


def test_a_folder_name_ending_in_a_newline_is_not_a_node_name(tmp_path: Path) -> None:
    """Node names are matched whole: a trailing newline is refused (a '$' pattern used to accept one)."""
    src = write_tree(tmp_path / "src", {**BASE, "files\n/tools.yaml": {"tools": []}})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    [problem] = caught.value.diagnostics
    assert problem.code == "bad_node_name"
    assert "\n" not in problem.file


def test_a_tool_id_longer_than_the_site_accepts_is_refused(tmp_path: Path) -> None:
    """A tool id over 128 characters is refused by the build, as the site refuses to page it."""
    long_id = "a." + "b" * 130
    tools = {"tools": [{"id": long_id, "summary": "Too long.", "args_schema": {"type": "object"}}]}
    src = write_tree(tmp_path / "src", {**BASE, "files/tools.yaml": tools})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    [problem] = caught.value.diagnostics
    assert (problem.code, problem.json_path, problem.line) == ("non_canonical_id", "$.tools[0].id", 2)
    assert "over 128" in problem.message


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (names.tool_id_problem, ["file.read", "s3.file.read", "a.b.c.d"], ["file", "File.read", "a.b.c.d.e", "a.b\n"]),
        (names.node_name_problem, ["files", "code-review", "v2_tools"], ["", "-x", "_x", "Files", "a b", "a\n"]),
        (names.skill_name_problem, ["code-reviewer", "pdf"], ["Code", "a--b", "-a", "a-", "a" * 65]),
        (names.node_path_problem, [(), ("a", "b")], [("a", ""), ["a", "B"], "a/b", ("a",) * 33]),
    ],
    ids=["tool_id", "node_name", "skill_name", "node_path"],
)
def test_each_name_rule_accepts_good_names_and_explains_bad_ones(check: Any, good: list[Any], bad: list[Any]) -> None:
    """Each rule answers None for a good name and a sentence for a bad one."""
    assert [check(name) for name in good] == [None] * len(good)
    assert all(isinstance(check(name), str) and check(name) for name in bad)

"""SRC/toolcat.yaml configures the build; it is not read as a tools file."""

from __future__ import annotations

from pathlib import Path

from support import write_tree

from toolcat.build import build


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

"""Planned files beyond the memory budget go to a staging folder beside the build (issue 16), with the same bytes."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from toolcat.build import build, filestore
from toolcat.build.filestore import FileStore


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_staged_build_has_the_same_bytes(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no memory budget every planned file is staged on disk; the build is byte-identical, the stage is gone."""
    held = tmp_path / "held" / "build"
    first = build(example_src_copy, held)
    staged_files: list[str] = []
    original = FileStore.__setitem__

    def spy(self: FileStore, path: str, data: bytes) -> None:
        original(self, path, data)
        if self.staged(path):
            staged_files.append(path)

    monkeypatch.setattr(filestore, "MEMORY_BUDGET", 0)
    monkeypatch.setattr(FileStore, "__setitem__", spy)
    staged = tmp_path / "staged" / "build"
    result = build(example_src_copy, staged)
    assert first.write is not None
    assert result.write is not None
    assert len(staged_files) == result.write.files_written == first.write.files_written
    assert _tree(held) == _tree(staged)
    assert [p.name for p in staged.parent.iterdir()] == ["build"], "the staging folder is removed"


def test_files_the_last_build_has_are_only_noted(tmp_path: Path) -> None:
    """A file already in the output (same path, same size) is linked from there, never held or staged."""
    out, stage = tmp_path / "out", tmp_path / "stage"
    (out / "tools").mkdir(parents=True)
    (out / "tools" / "a.json").write_bytes(b"{}")
    store = FileStore(out, stage, budget=0)
    store["tools/a.json"] = b"{}"
    store["tools/b.json"] = b"[]"
    assert store.origin("tools/a.json") == out / "tools" / "a.json"
    assert not store.staged("tools/a.json")
    assert store.staged("tools/b.json")
    assert store["tools/b.json"] == b"[]"
    assert sorted(store) == ["tools/a.json", "tools/b.json"]
    assert not filecmp.cmp(out / "tools" / "a.json", stage / "tools" / "b.json", shallow=False)

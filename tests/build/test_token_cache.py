"""Token counts are kept beside the build and read back by the next build (issue 16): same bytes, no re-counting."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.build import build, tokens


def _tree(root: Path) -> dict[str, bytes]:
    """The build's files, but the token cache (which holds the counts a build used: a load cache hit uses fewer)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != tokens.CACHE_FILE)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def test_a_rebuild_counts_nothing_it_counted_before(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forced rebuild in a fresh process state needs no tokenizer at all, and writes the same bytes."""
    out = tmp_path / "build"
    build(example_src_copy, out)
    before = _tree(out)
    assert (out / tokens.CACHE_FILE).stat().st_size > 1000
    monkeypatch.setattr(tokens, "_known", {})  # as in a new process

    def no_tokenizer() -> None:
        msg = "every count should come from the cache"
        raise AssertionError(msg)

    monkeypatch.setattr(tokens, "_encoding", no_tokenizer)
    build(example_src_copy, out, force=True)
    assert _tree(out) == before


def test_a_damaged_cache_is_ignored(example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A truncated or foreign cache file is not used: the counts are made again, the bytes are the same."""
    out = tmp_path / "build"
    build(example_src_copy, out)
    before = _tree(out)
    (out / tokens.CACHE_FILE).write_bytes((out / tokens.CACHE_FILE).read_bytes()[:-3])
    monkeypatch.setattr(tokens, "_known", {})
    build(example_src_copy, out, force=True)
    after = _tree(out)
    assert after == before

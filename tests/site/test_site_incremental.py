"""An incremental docs site (issue 16): only changed pages go through mkdocs, and the site equals a full build."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import EXAMPLE_SRC

from toolcat.build import build
from toolcat.site import incremental as site_incremental
from toolcat.site.render import build_site


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """A site of build B1, then B2 (one tool's summary edited) built over it, and B2's site built from nothing."""
    root = tmp_path_factory.mktemp("site_incremental")
    src = root / "src"
    shutil.copytree(EXAMPLE_SRC, src)
    build(src, root / "b")
    build_site(root / "b", root / "site")
    first = _tree(root / "site")
    tools = src / "files" / "tools.yaml"
    tools.write_text(tools.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-safe ", 1), "utf-8")
    build(src, root / "b")
    (root / "first.txt").write_text(str(len(first)))
    build_site(root / "b", root / "site")
    build_site(root / "b", root / "full")
    return root / "site", root / "full", root / "b", src


def test_an_incremental_site_equals_a_full_one(sites: tuple[Path, Path, Path, Path]) -> None:
    """Page for page and byte for byte, search index, sitemap and published artifacts included."""
    incremental, full, _, _ = sites
    assert _tree(incremental) == _tree(full)
    assert b"Wombat-safe" in (incremental / "nodes" / "files.html").read_bytes()


def test_only_the_changed_pages_are_rendered(sites: tuple[Path, Path, Path, Path], monkeypatch) -> None:
    """After a one-tool edit the next site build renders only the pages showing that tool."""
    incremental, _, build_dir, src = sites
    seen: list[set[str]] = []
    original = site_incremental.prepare

    def spy(project_dir: Path, previous: Path, fresh: Path, changed: set[str]) -> None:
        seen.append(set(changed))
        original(project_dir, previous, fresh, changed)

    monkeypatch.setattr(site_incremental, "prepare", spy)
    tools = src / "files" / "tools.yaml"
    tools.write_text(tools.read_text(encoding="utf-8").replace("Wombat-safe ", "Numbat-safe ", 1), "utf-8")
    build(src, build_dir)
    build_site(build_dir, incremental)
    assert seen, "the second build was incremental"
    assert 1 <= len(seen[0]) <= 3
    assert "nodes/files.md" in seen[0]
    assert b"Numbat-safe" in (incremental / "nodes" / "files.html").read_bytes()


def test_a_site_built_by_two_mkdocs_processes_equals_one_built_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Splitting a full site across processes (each a dirty build of every other page) changes no byte."""
    from toolcat.site import render as site_module  # noqa: PLC0415 - to set the threshold

    build(EXAMPLE_SRC, tmp_path / "b")
    monkeypatch.setattr(site_module, "PARALLEL_MKDOCS_PAGES", 10**9)
    build_site(tmp_path / "b", tmp_path / "one")
    monkeypatch.setattr(site_module, "PARALLEL_MKDOCS_PAGES", 1)
    monkeypatch.setattr(site_module.os, "cpu_count", lambda: 2)
    build_site(tmp_path / "b", tmp_path / "two")
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")
    assert not list(tmp_path.glob("*.part*")), "the partial folders are removed"


def test_a_site_reads_its_build_holding_the_builds_lock(sites: tuple[Path, Path, Path, Path], monkeypatch) -> None:
    """A build of the catalogue cannot run while the site reads it: the site holds the build's lock from the read."""
    import fcntl  # noqa: PLC0415 - POSIX: the lock is an flock

    from toolcat.site import render  # noqa: PLC0415 - its read_build is wrapped

    _, _, build_dir, _ = sites
    seen: list[bool] = []
    read = render.read_build

    def read_checking(folder: Path):
        fd = os.open(build_dir.resolve().parent, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(False)  # a build could have taken it
        except BlockingIOError:
            seen.append(True)
        finally:
            os.close(fd)
        return read(folder)

    monkeypatch.setattr(render, "read_build", read_checking)
    build_site(build_dir, build_dir.parent / "locked-site")
    assert seen == [True]

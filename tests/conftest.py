"""Shared fixtures: source trees from dicts, the example catalogue's build, the real corpus."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolcat.build import build

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_SRC = REPO / "catalog_src"
CORPUS = REPO.parent / "shared" / "corpus"


def write_tree(root: Path, tree: dict[str, Any]) -> Path:
    """Write ``{"a/b.yaml": {...} | "text" | b"bytes"}`` under ``root``; dicts become YAML."""
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


@pytest.fixture
def make_tree(tmp_path: Path) -> Callable[[dict[str, Any]], Path]:
    """Build a source tree from a dict in a fresh temporary folder."""
    counter = iter(range(1_000_000))

    def make(tree: dict[str, Any]) -> Path:
        return write_tree(tmp_path / f"src{next(counter)}", tree)

    return make


@pytest.fixture(scope="session")
def example_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue compiled once per session (tests must not modify it)."""
    out = tmp_path_factory.mktemp("example") / "build"
    build(EXAMPLE_SRC, out)
    return out


@pytest.fixture
def example_src_copy(tmp_path: Path) -> Path:
    """A private copy of catalog_src that a test may break."""
    dst = tmp_path / "catalog_src"
    shutil.copytree(EXAMPLE_SRC, dst)
    return dst


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real material in ../shared/corpus, or a skip saying why."""
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS}; these tests read real data from it")
    return CORPUS

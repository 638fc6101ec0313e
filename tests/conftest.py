"""Shared fixtures: source trees from dicts, the example catalogue's build, the real corpus."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import CORPUS, EXAMPLE_SRC, tier_build, write_tree

from toolcat.build import build

# The suite's builds are lexical unless a test names an embedder: the tests pin the lexical engine's answers, and
# embedding every test catalogue would double the suite's time. The default tier (a build with nothing named) is
# tested in tests/reader/test_semantic_default.py, which removes this.
os.environ.setdefault("TOOLCAT_EMBEDDER", "none")


@pytest.fixture(scope="session", autouse=True)
def state_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """serve's default state folder ($XDG_STATE_HOME/toolcat, docs/deploy.md) in the suite's temp, never the user's."""
    home = tmp_path_factory.mktemp("state-home")
    os.environ["XDG_STATE_HOME"] = str(home)
    return home


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


@pytest.fixture(scope="session")
def default_tier_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with no embedder named (the default tier), once, with its own cache folder."""
    return tier_build(tmp_path_factory.mktemp("default-tier"))


@pytest.fixture(scope="session")
def terms_tier_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with ``--embedder terms`` (the learned term expansion, opt-in), once."""
    out = tmp_path_factory.mktemp("terms-tier") / "build"
    build(EXAMPLE_SRC, out, embedder="terms")
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

"""Checking tools files on several cores gives exactly the results of checking them one by one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import REPO

from toolcat.build import build, tokens
from toolcat.build.sources import load as load_module


def _results(loaded: load_module.Loaded) -> list[Any]:
    return [(rel, r.tools, [str(d) for d in r.diagnostics]) for rel, r in loaded.tool_files.items()]


def test_parallel_check_equals_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the threshold at 0 the example catalogue is checked in worker processes, with the same results."""
    serial = load_module.load(REPO / "catalog_src", cache={})
    pools: list[int] = []
    real_pool = load_module.ProcessPoolExecutor

    def counting_pool(*args: Any, **kwargs: Any) -> Any:
        pools.append(kwargs.get("max_workers", 0))
        return real_pool(*args, **kwargs)

    monkeypatch.setattr(load_module, "PARALLEL_CHECK_BYTES", 0)
    monkeypatch.setattr(load_module, "ProcessPoolExecutor", counting_pool)
    monkeypatch.setattr(load_module.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(load_module.threading, "active_count", lambda: 1)  # other tests' servers may still run
    parallel = load_module.load(REPO / "catalog_src", cache={})
    assert pools == [2], "the worker pool was not used"
    assert _results(parallel) == _results(serial)
    assert list(parallel.tool_files) == list(serial.tool_files)  # the walk's order, not the pool's


def test_parallel_build_writes_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build whose files were checked in parallel is byte-identical to a serial one."""
    build(REPO / "catalog_src", tmp_path / "serial")
    monkeypatch.setattr(load_module, "PARALLEL_CHECK_BYTES", 0)
    build(REPO / "catalog_src", tmp_path / "parallel")
    # the token-count cache holds the counts the build process made (checks in forked workers count there)
    files = {p.relative_to(tmp_path / "serial") for p in (tmp_path / "serial").rglob("*") if p.is_file()}
    files.discard(Path(tokens.CACHE_FILE))
    parallel = {p.relative_to(tmp_path / "parallel") for p in (tmp_path / "parallel").rglob("*") if p.is_file()}
    assert files == parallel - {Path(tokens.CACHE_FILE)}
    for rel in files:
        assert (tmp_path / "serial" / rel).read_bytes() == (tmp_path / "parallel" / rel).read_bytes(), rel

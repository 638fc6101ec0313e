"""Learned term expansion: each tool's best related terms, from a static model trained for tool retrieval.

An opt-in tier (``--embedder terms``; docs/search.md, "Learned term expansion"). A static model (``terms.npz``, trained by
``bench/train_terms.py``) gives every analyzer word term ``t`` a unit direction ``e_t``, a query weight ``u_t`` and a
document weight ``v_t``. A tool's vector is ``d = normalise(sum_t (1 + ln c_t) v_t e_t)`` over the terms of its
:func:`toolcat.build.contributors.index.texts.doc_terms_text`; its expansion postings are ``w(t, d) = e_t . d`` for its :data:`TOP_TERMS` best terms of the
whole vocabulary (words it never uses included: that is the point), each term then keeping its
:data:`MAX_POSTINGS` strongest tools. Weights are stored as integers over :data:`DENOMINATOR`, so every reader sums
the same numbers; a query's terms are weighted ``(1 + ln c) u_t``, l2-normalised (the lexical query weighting with
``u`` for the idf). The reader needs no model: :mod:`toolcat.reader.search.expansion` sums postings.

numpy only (the ``[build]`` extra). The postings live in their own term shards, laid out like a lexical space's,
under the index meta's ``tools.expand`` (schema ``index_meta.json``).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from pathlib import Path
from typing import Any

from ....format.analyzer import analyze_words
from ...artifacts import ArtifactSet
from .shards import _write_space

MODEL_FILE = Path(__file__).with_name("terms.npz")
MODEL_NAME = "toolcat-terms-1"
EXPAND_FORMAT = "toolcat-expand-1"
#: Stored weights are ``round(w * DENOMINATOR)``.
DENOMINATOR = 1000
#: How many terms each tool is expanded with (its best ``e_t . d``).
TOP_TERMS = 64
#: A term keeps at most this many tools (its strongest): a common word's shard stays small.
MAX_POSTINGS = 400
#: Weights under this are not stored (they would count 0 at the reader's floor anyway).
MIN_WEIGHT = 0.1
#: The fusion the reader applies (tuned on the train splits: docs/search.md): the expansion's share, the floor
#: under which an expansion score counts 0, and how many expansion candidates join the lexical top.
WEIGHT = 0.5
FLOOR = 0.05
CANDIDATES = 50
#: Docs per block of the (docs x vocabulary) product (memory: block x vocabulary float64).
BLOCK = 256


class TermModel:
    """The static model: terms, unit directions (float64), query and document weights."""

    def __init__(self, path: Path | None = None) -> None:
        import numpy as np  # noqa: PLC0415 - build only ([build] extra)

        path = path or MODEL_FILE
        data = path.read_bytes()
        self.sha256 = hashlib.sha256(data).hexdigest()
        with np.load(path, allow_pickle=False) as npz:
            self.terms: list[str] = bytes(npz["terms"]).decode("utf-8").split("\n")
            codes = npz["codes"].astype(np.float64) * npz["scale"].astype(np.float64)[:, None]
            self.query_weight = npz["query_weight"].astype(np.float64)
            self.doc_weight = npz["doc_weight"].astype(np.float64)
        self.unit = codes / np.linalg.norm(codes, axis=1, keepdims=True)
        self.index = {term: i for i, term in enumerate(self.terms)}
        self.dim = int(self.unit.shape[1])

    def doc_vectors(self, texts: list[str]) -> Any:
        """Each text's unit vector (a zero row for a text with no known term)."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        out = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            counts: dict[int, int] = {}
            for term in analyze_words(text):
                i = self.index.get(term)
                if i is not None:
                    counts[i] = counts.get(i, 0) + 1
            if not counts:
                continue
            ids = np.fromiter(counts, dtype=np.int64)
            weights = np.array([1.0 + math.log(c) for c in counts.values()]) * self.doc_weight[ids]
            vector = weights @ self.unit[ids]
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[row] = vector / norm
        return out


@functools.lru_cache(maxsize=1)
def load_model() -> TermModel:
    """The packaged model, loaded once per process."""
    return TermModel()


def expansion_entries(texts: list[str | None], model: TermModel) -> dict[str, dict[str, Any]]:
    """Term → ``{idf: u_t, docs: gaps, w: ints}`` over the documents (a None text: a deleted doc, no postings)."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    live = [i for i, text in enumerate(texts) if text is not None]
    vectors = model.doc_vectors([texts[i] or "" for i in live])
    postings: dict[int, list[tuple[int, int]]] = {}
    k = min(TOP_TERMS, len(model.terms))
    for start in range(0, len(live), BLOCK):
        block = vectors[start : start + BLOCK] @ model.unit.T  # (docs, vocabulary)
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        for row in range(block.shape[0]):
            doc = live[start + row]
            for term in top[row].tolist():
                weight = round(float(block[row, term]) * DENOMINATOR)
                if weight >= MIN_WEIGHT * DENOMINATOR:
                    postings.setdefault(term, []).append((doc, weight))
    entries: dict[str, dict[str, Any]] = {}
    for term, pairs in postings.items():
        kept = sorted(sorted(pairs, key=lambda p: (-p[1], p[0]))[:MAX_POSTINGS])
        docs = [doc for doc, _ in kept]
        gaps = [docs[0]] + [b - a for a, b in itertools.pairwise(docs)]
        entries[model.terms[term]] = {
            "idf": round(float(model.query_weight[term]), 6),
            "docs": gaps,
            "w": [w for _, w in kept],
        }
    return entries


def write_expansion(artifacts: ArtifactSet, texts: list[str | None]) -> dict[str, Any]:
    """Write the tools' expansion shards; the index meta's ``tools.expand`` entry."""
    model = load_model()
    entries = expansion_entries(texts, model)
    space = _write_space(artifacts, "tools", "expand", entries, weight=WEIGHT)
    space.pop("weight", None)
    return {
        "format": EXPAND_FORMAT,
        "model": {"name": MODEL_NAME, "sha256": model.sha256, "dim": model.dim},
        "denominator": DENOMINATOR,
        "weight": WEIGHT,
        "floor": FLOOR,
        "candidates": CANDIDATES,
        **space,
    }

"""Fusing the lexical and the semantic ranking: a mix gated on the lexical evidence.

``relevance = (1 - a) · lexical + a · cosine``, both in 0-1 (a cosine under :data:`MIN_COSINE`, what unrelated
texts score, counts 0, so a query that means nothing here still gets no filler), so the relevance stays in 0-1. The semantic
weight ``a`` depends on how strong the lexical evidence is: when the best lexical score is under
:data:`GATE` (few or rare words matched), the semantic score leads (:data:`WEIGHT_WEAK`); otherwise the
lexical one does (:data:`WEIGHT_STRONG`). Candidates are the lexical top :data:`CANDIDATES` and the semantic
top :data:`CANDIDATES` (a document outside the lexical top counts lexical 0). The constants were tuned by a grid
search on the train split of MetaTool and BFCL (queries whose sha256 mod 10 is under 7,
``bench/bench_search.py::split``); the reported figures are on the held-out rest (docs/search.md, "Semantic tier"). Stdlib-only: the cosines come in as any sequence.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

#: Per embedder kind: (WEIGHT_WEAK, WEIGHT_STRONG, GATE, MIN_COSINE), tuned on the train splits (module docstring).
FUSION: dict[str, tuple[float, float, float, float]] = {
    "onnx": (0.6, 0.6, 0.15, 0.1),  # the default tier (bench/bench_search_tune.py, docs/search.md)
    "sentence-transformers": (0.6, 0.6, 0.15, 0.2),
    "model2vec": (0.5, 0.3, 0.2, 0.2),
}
WEIGHT_WEAK, WEIGHT_STRONG, GATE, MIN_COSINE = FUSION["sentence-transformers"]
CANDIDATES = 50
#: A tool's cosine draws on its best ancestor node's: ``(1 - HIERARCHY) · tool + HIERARCHY · best ancestor``
#: (nodes are embedded with their title, path, summary, tags and their tools' summaries). Measured on the labelled
#: sets (docs/search.md, "Hierarchy"); 0 turns it off.
HIERARCHY = 0.2
#: The term a hit carries when the semantic tier put it in (``reason`` then names the tier).
SEMANTIC_TERM = "~semantic"

#: Name match (title-like queries: "List starred repositories" for ``list_starred_repositories``): among the fused
#: top :data:`NAME_DEPTH`, a tool whose id's words nearly equal the query's gains ``NAME_BOOST · match``, where
#: ``match`` (:func:`name_match`) is the share of the id's words in the query times the share of the query's words in
#: the id (content words, stemmed as the lexical analyzer does), counted from :data:`NAME_MIN` up.
NAME_BOOST = 0.1
NAME_MIN = 0.7
NAME_DEPTH = 10

Hit = tuple[int, float, list[str]]
#: A candidate outside the lexical top: lexical score 0, no matched terms (one shared value, never mutated).
NO_HIT: tuple[float, Sequence[str]] = (0.0, ())


def name_match(query_terms: set[str], tool_id: str, analyze: Callable[[str], list[str]]) -> float:
    """How nearly the query's terms equal a tool id's (0-1): the best of the whole id and its last dotted part.

    For each: (id terms in the query / id terms) x (query terms in the id / query terms).
    """
    best = 0.0
    for name in dict.fromkeys((tool_id, tool_id.rsplit(".", 1)[-1])):
        terms = set(analyze(name))
        if terms and query_terms:
            shared = len(terms & query_terms)
            best = max(best, shared / len(terms) * shared / len(query_terms))
    return best


def name_boosted(
    hits: list[Hit], ids: Sequence[str], query_terms: set[str], analyze: Callable[[str], list[str]]
) -> list[Hit]:
    """``hits`` (best first) with the first ``len(ids)`` (whose tool ids are ``ids``) raised by their name match."""
    head: list[Hit] = []
    for (doc, score, terms), tool_id in zip(hits, ids, strict=False):
        match = name_match(query_terms, tool_id, analyze)
        head.append((doc, min(1.0, score + NAME_BOOST * match), terms) if match >= NAME_MIN else (doc, score, terms))
    head.sort(key=lambda hit: (-hit[1], hit[0]))
    return head + hits[len(head) :]


def fuse(
    lexical: list[Hit],
    cosines: Sequence[float],
    limit: int,
    allowed: Callable[[int], bool] | None = None,
    params: tuple[float, float, float, float] = (WEIGHT_WEAK, WEIGHT_STRONG, GATE, MIN_COSINE),
    pool: Sequence[float] | None = None,
) -> list[Hit]:
    """The best ``limit`` of the fused ranking; ``lexical`` is the lexical top (at least :data:`CANDIDATES`).

    ``pool``, when given, is what the semantic top is drawn from instead of ``cosines`` (a partitioned build's:
    the probed clusters' cosines, the rest below any floor); every candidate is still scored by ``cosines``.

    A hit whose semantic part outweighs its lexical part carries :data:`SEMANTIC_TERM` among its terms.
    """
    _, _, _, min_cosine = params
    a = semantic_weight(lexical, params)
    lex: dict[int, tuple[float, Sequence[str]]] = {doc: (score, terms) for doc, score, terms in lexical}
    _, docs, values = candidates(lexical, cosines, allowed, min_cosine, pool)
    fused: list[Hit] = []
    for doc, cosine in zip(docs, values, strict=True):
        score, terms = lex.get(doc, NO_HIT)
        meaning = a * cosine if cosine >= min_cosine else 0.0
        total = (1 - a) * score + meaning
        fused.append((doc, min(1.0, total), [*terms, SEMANTIC_TERM] if meaning > (1 - a) * score else list(terms)))
    fused.sort(key=lambda hit: (-hit[1], hit[0]))
    return fused[:limit]


def semantic_weight(lexical: list[Hit], params: tuple[float, float, float, float]) -> float:
    """The cosine's weight ``a`` of :func:`fuse`: ``WEIGHT_WEAK`` when the best lexical score is under ``GATE``."""
    weak, strong, gate, _ = params
    return weak if (lexical[0][1] if lexical else 0.0) < gate else strong


def candidates(
    lexical: list[Hit],
    cosines: Sequence[float],
    allowed: Callable[[int], bool] | None,
    min_cosine: float,
    pool: Sequence[float] | None = None,
) -> tuple[list[int], list[int], list[float]]:
    """(the semantic top, the candidates: the lexical top then the semantic top's others, each candidate's cosine).

    The semantic top is drawn from ``pool`` when given (:func:`fuse`), else from ``cosines``.
    """
    semantic = semantic_top(cosines if pool is None else pool, allowed, min_cosine)
    docs = list(dict.fromkeys([*(doc for doc, _, _ in lexical), *semantic]))
    # A numpy array (the tier's) gives every candidate's cosine in one take; a plain sequence one by one.
    take = getattr(cosines, "take", None)
    values = take(docs).tolist() if take is not None else [float(cosines[doc]) for doc in docs]
    return semantic, docs, values


def semantic_top(cosines: Sequence[float], allowed: Callable[[int], bool] | None, min_cosine: float) -> list[int]:
    """The :data:`CANDIDATES` docs of highest cosine (at least ``min_cosine``, ``allowed``), ties by doc id.

    A numpy array (the semantic tier's) is cut with ``numpy.partition`` first
    (:func:`toolcat.format.embedding.top_indices`); a plain sequence is scanned whole.
    """
    if not hasattr(cosines, "argpartition") or len(cosines) <= 4 * CANDIDATES:
        return heapq.nlargest(
            CANDIDATES,
            (doc for doc in range(len(cosines)) if cosines[doc] >= min_cosine and (allowed is None or allowed(doc))),
            key=lambda doc: (cosines[doc], -doc),
        )
    from ...engines.embedding import top_indices  # noqa: PLC0415 - numpy, only with the [semantic] extra (which made ``cosines``)

    return top_indices(cosines, allowed, min_cosine, CANDIDATES)

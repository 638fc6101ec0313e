"""The learned term expansion (``--embedder terms``): a second ranking summed from postings (stdlib only, no model).

The build (:mod:`toolcat.build.contributors.index.terms`) stores, for each tool, the related terms a static model
trained for tool retrieval gives it, with integer weights, in term shards laid out like a lexical space's (the
index meta's ``tools.expand``). A query's score for a tool is ``E(d) = sum_t q_t * w(t, d) / denominator`` over its
word terms, ``q`` being the lexical query weighting with each term's stored query weight for the idf
(:func:`toolcat.reader.search.ranking.query_weights`). :func:`fuse` mixes it with the lexical top:
``relevance = (1 - weight) * lexical + weight * E`` (an ``E`` under ``floor`` counts 0). The exact arithmetic,
which the TypeScript reader repeats, is in docs/format.md ("Learned term expansion").
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

#: The term a hit carries when the expansion outweighs its lexical part (``reason`` then says so).
EXPANDED_TERM = "~expanded"

Hit = tuple[int, float, list[str]]


def settings(meta: dict[str, Any]) -> tuple[float, float, int, float]:
    """``(weight, floor, candidates, denominator)`` of a ``tools.expand`` meta entry (raises on a malformed one)."""
    weight, floor = float(meta["weight"]), float(meta["floor"])
    candidates, denominator = int(meta["candidates"]), float(meta["denominator"])
    if not (0.0 <= weight <= 1.0 and candidates >= 0 and denominator > 0):
        raise ValueError(f"expand settings out of range: {weight}, {candidates}, {denominator}")
    return weight, floor, candidates, denominator


def scores(terms: list[tuple[str, float, Any]], denominator: float) -> dict[int, float]:
    """``E(d)`` for every doc with a posting of a query term: ``terms`` are (term, q_t, posting), summed in order."""
    total: dict[int, float] = {}
    for _, q, posting in terms:
        get = total.get
        for doc, w in zip(posting.ids, posting.weights, strict=True):
            total[doc] = get(doc, 0.0) + q * (w / denominator)
    return total


def fuse(
    lexical: list[Hit],
    expanded: dict[int, float],
    limit: int,
    settings_: tuple[float, float, int, float],
    allowed: Callable[[int], bool] | None = None,
) -> list[Hit]:
    """The best ``limit`` of ``(1 - weight) * lexical + weight * E``, over the lexical top and the expansion's top.

    ``lexical`` is the exact lexical top (at least ``candidates`` long when there are that many hits).
    """
    weight, floor, candidates, _ = settings_
    pool = ((doc, e) for doc, e in expanded.items() if e >= floor and (allowed is None or allowed(doc)))
    top = heapq.nsmallest(candidates, pool, key=lambda item: (-item[1], item[0]))
    lex = {doc: (score, terms) for doc, score, terms in lexical}
    docs = list(dict.fromkeys([*lex, *(doc for doc, _ in top)]))
    fused: list[Hit] = []
    for doc in docs:
        score, terms = lex.get(doc, (0.0, []))
        e = expanded.get(doc, 0.0)
        meaning = weight * e if e >= floor else 0.0
        words = (1 - weight) * score
        fused.append((doc, min(1.0, words + meaning), [*terms, EXPANDED_TERM] if meaning > words else list(terms)))
    fused.sort(key=lambda hit: (-hit[1], hit[0]))
    return fused[:limit]

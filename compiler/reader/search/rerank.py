"""An optional second stage: a host's reranker re-scores the top :data:`DEPTH` tools of a ranking.

Off unless the host sets one (:func:`set_reranker`): a callable ``(query, texts) -> scores``, one score in 0-1 per
text, such as a cross-encoder. Each text is what a hit shows (its id's words, summary and tags), so the stage
needs no file beyond the doc shards the answer reads anyway. The new relevance is ``(1 - WEIGHT) · first stage +
WEIGHT · reranker``; hits below the top :data:`DEPTH` keep their order and score, and the exact-name rule and the
cut apply afterwards as before. A reranker that raises, or answers the wrong number of scores, is skipped for
that query (logged), never turned into an error. Stdlib only: the model is the host's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

Reranker = Callable[[str, list[str]], Sequence[float]]
Hit = tuple[int, float, list[str]]
#: How many of the first stage's best hits the reranker sees.
DEPTH = 20
#: The reranker's share of the new relevance.
WEIGHT = 0.5
#: The term a hit carries when the reranker moved it up (``reason`` then says so).
RERANK_TERM = "~reranked"

_CURRENT: list[Reranker | None] = [None]


def set_reranker(reranker: Reranker | None) -> None:
    """Use ``reranker`` for every search in this process (None turns the stage off)."""
    _CURRENT[0] = reranker


def current() -> Reranker | None:
    """The reranker set, or None (the default: no second stage)."""
    return _CURRENT[0]


def hit_text(pointer: dict[str, Any]) -> str:
    """What the reranker reads of a hit: its id's words, its summary and its tags."""
    words = str(pointer.get("tool_id", "")).replace(".", " ").replace("_", " ")
    tags = " ".join(str(t) for t in pointer.get("tags") or [])
    return ". ".join(part for part in (words, str(pointer.get("summary", "")), tags) if part)


def rerank(query: str, hits: list[Hit], pointers: list[dict[str, Any]], reranker: Reranker) -> list[Hit]:
    """``hits`` with the first ``len(pointers)`` re-scored by ``reranker`` and re-ordered; the rest unchanged."""
    head, tail = hits[: len(pointers)], hits[len(pointers) :]
    try:
        scores = [float(s) for s in reranker(query, [hit_text(p) for p in pointers])]
    except Exception as err:
        log.warning("reranker failed (%s: %s); keeping the first stage's order", type(err).__name__, err)
        return hits
    if len(scores) != len(head) or not all(math.isfinite(s) for s in scores):
        log.warning("reranker gave %d scores for %d hits; keeping the first stage's order", len(scores), len(head))
        return hits
    mixed = []
    for rank, ((doc, score, terms), extra) in enumerate(zip(head, scores, strict=True)):
        value = min(1.0, max(0.0, (1 - WEIGHT) * score + WEIGHT * min(1.0, max(0.0, extra))))
        mixed.append((doc, value, terms, rank))
    mixed.sort(key=lambda item: (-item[1], item[3]))
    out = [
        (doc, value, [*terms, RERANK_TERM] if place < rank else terms)
        for place, (doc, value, terms, rank) in enumerate(mixed)
    ]
    floor = out[-1][1] if out else 0.0
    return [*out, *((doc, min(score, floor), terms) for doc, score, terms in tail)]

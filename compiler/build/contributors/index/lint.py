"""``toolcat lint``'s engine: tool pairs the index can hardly tell apart."""

from __future__ import annotations

import math
from pathlib import Path

LINT_THRESHOLD = 0.8


def confusable_pairs(src: Path, threshold: float = LINT_THRESHOLD) -> list[tuple[str, str, float]]:
    """Tool pairs whose index vectors (the combined word + character score) are at least ``threshold`` alike."""
    from ....format.analyzer import ANALYZERS  # noqa: PLC0415 - loaded on the one path that needs it
    from ...pipeline import compile_catalog  # noqa: PLC0415 - heavy
    from .shards import SPACE_WEIGHTS  # noqa: PLC0415 - loaded on the one path that needs it
    from .texts import tool_order, tool_text  # noqa: PLC0415 - loaded on the one path that needs it

    catalog, _ = compile_catalog(src)
    order = tool_order(catalog)
    if len(order) < 2:
        return []
    from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415 - sklearn is an optional extra

    texts = [tool_text(t, catalog) for t in order]
    combined = None
    for name, weight in SPACE_WEIGHTS.items():
        matrix = TfidfVectorizer(analyzer=ANALYZERS[name], sublinear_tf=True).fit_transform(texts)
        sims = (matrix @ matrix.T) * weight
        combined = sims if combined is None else combined + sims
    assert combined is not None  # noqa: S101 - SPACE_WEIGHTS is not empty
    coo = combined.tocoo()
    pairs = [
        (order[i].id, order[j].id, float(v))
        for i, j, v in zip(coo.row, coo.col, coo.data, strict=True)
        if i < j and v >= threshold and not math.isclose(v, 0.0)
    ]
    return sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))

"""The semantic candidates cut with numpy equal the plain scan's, ties and scopes included (issue 14)."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from toolcat.reader.search import hybrid


@pytest.mark.parametrize("n", [150, 1_000, 10_000])
@pytest.mark.parametrize("scoped", [False, True])
def test_numpy_top_equals_the_scan(n: int, scoped: bool) -> None:
    """Same docs in the same order as heapq over every doc, with equal cosines and a scope that drops most docs."""
    rng = np.random.default_rng(n)
    cosines = (rng.random(n) * 0.8).astype(np.float32)
    cosines[3] = cosines[4] = cosines[n - 1] = float(cosines.max())  # ties at the top, broken by doc id

    def allowed(doc: int) -> bool:
        return doc % 7 == 0

    keep = allowed if scoped else None
    expected = heapq.nlargest(
        hybrid.CANDIDATES,
        (d for d in range(n) if cosines[d] >= 0.2 and (keep is None or keep(d))),
        key=lambda d: (cosines[d], -d),
    )
    assert hybrid._semantic_top(cosines, keep, 0.2) == expected
    assert hybrid._semantic_top(list(map(float, cosines)), keep, 0.2) == expected

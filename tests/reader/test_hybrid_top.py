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
    assert hybrid.semantic_top(cosines, keep, 0.2) == expected
    assert hybrid.semantic_top(list(map(float, cosines)), keep, 0.2) == expected


@pytest.mark.parametrize("scoped", [False, True])
def test_numpy_top_of_a_mostly_unscored_pool_equals_the_scan(scoped: bool) -> None:
    """A partitioned build's pool (most tools at -2, unprobed) is cut among its scored tools: the scan's docs and order."""
    rng = np.random.default_rng(7)
    cosines = np.full(10_000, -2.0, dtype=np.float32)
    probed = rng.choice(10_000, 900, replace=False)
    cosines[probed] = (rng.random(900) * 0.8).astype(np.float32)
    cosines[[int(probed[0]), int(probed[1]), 9_999]] = float(cosines.max())  # ties at the top, broken by doc id

    def allowed(doc: int) -> bool:
        return doc % 3 == 0

    keep = allowed if scoped else None
    expected = heapq.nlargest(
        hybrid.CANDIDATES,
        (d for d in range(len(cosines)) if cosines[d] >= 0.2 and (keep is None or keep(d))),
        key=lambda d: (cosines[d], -d),
    )
    assert len(expected) == hybrid.CANDIDATES
    assert hybrid.semantic_top(cosines, keep, 0.2) == expected


def test_the_hierarchy_term_leaves_a_flat_catalogue_as_it_was() -> None:
    """Tools that all share one ancestor keep their cosines exactly (the term only ranks between branches)."""
    from toolcat.engines.embedding import with_ancestors  # noqa: PLC0415
    from toolcat.reader.search.semantic import ancestor_index  # noqa: PLC0415

    cosines = np.array([0.3, 0.5, 0.1], dtype=np.float32)
    index = ancestor_index([[0], [0], [0]], n_nodes=2)
    assert np.array_equal(with_ancestors(cosines, np.array([0.9, 0.2]), index, 0.5), cosines)


def test_the_hierarchy_term_favours_tools_under_the_best_matching_node() -> None:
    """A tool under a weakly matching node loses part of the gap; one under the best node, or with no node, keeps its cosine."""
    from toolcat.engines.embedding import with_ancestors  # noqa: PLC0415
    from toolcat.reader.search.semantic import ancestor_index  # noqa: PLC0415

    cosines = np.array([0.50, 0.52, 0.40], dtype=np.float32)
    nodes = np.array([0.8, 0.2, 0.7], dtype=np.float32)  # node 0: the query's branch; node 1 another; 2 a child of 0
    index = ancestor_index([[0, 2], [1], []], n_nodes=3)
    mixed = with_ancestors(cosines, nodes, index, 0.2)
    assert mixed[0] == pytest.approx(0.50)
    assert mixed[1] == pytest.approx(0.52 - 0.2 * 0.6)
    assert mixed[2] == pytest.approx(0.40)
    assert int(np.argmax(mixed)) == 0

"""Partitioned tool vectors (issue 33): the size threshold and its setting, and the balanced clusters."""

from __future__ import annotations

import logging
import math

import pytest

from toolcat.build.contributors import vectors

np = pytest.importorskip("numpy")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", vectors.DEFAULT_PARTITION_MIN), ("500", 500), ("0", None), ("off", None), ("no", None), ("-3", 1)],
)
def test_the_partition_setting_names_a_size_or_turns_it_off(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None
) -> None:
    """Unset: the default threshold; a number: that threshold; 0 or off: no build partitions."""
    monkeypatch.setattr(vectors, "PARTITION_MIN", None)
    monkeypatch.setenv("TOOLCAT_VECTOR_PARTITION", value)
    assert vectors.partition_min() == expected


def test_a_bad_partition_setting_keeps_the_default_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A value that is no number of tools logs which setting is wrong and keeps the default threshold."""
    monkeypatch.setattr(vectors, "PARTITION_MIN", None)
    monkeypatch.setenv("TOOLCAT_VECTOR_PARTITION", "lots")
    with caplog.at_level(logging.WARNING):
        assert vectors.partition_min() == vectors.DEFAULT_PARTITION_MIN
    assert "TOOLCAT_VECTOR_PARTITION='lots'" in caplog.text


def _rows(n: int, dim: int = 16, seed: int = 3) -> object:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, dim))
    # one dense blob of most rows and three small ones: plain k-means gives one cluster most of the rows
    which = np.where(rng.random(n) < 0.7, 0, rng.integers(1, 4, n))
    return (centres[which] + 0.3 * rng.normal(size=(n, dim))).astype(np.float32)


def test_balanced_kmeans_caps_every_cluster_and_is_deterministic() -> None:
    """With a cap, no cluster holds more rows than it, every row has a cluster, and the same rows give the same clusters."""
    rows = _rows(400)
    plain = np.bincount(vectors.kmeans(rows, 8), minlength=8)
    cap = 75  # 1.5 times the mean of 50
    assign = vectors.kmeans(rows, 8, cap=cap)
    counts = np.bincount(assign, minlength=8)
    assert plain.max() > cap  # the blob would overfill a cluster without the cap
    assert counts.max() <= cap
    assert counts.sum() == 400
    assert assign.min() >= 0
    assert (vectors.kmeans(rows, 8, cap=cap) == assign).all()


def test_balanced_assignment_prefers_the_nearest_cluster_with_room() -> None:
    """A row goes to its nearest cluster unless that one is full; then to the nearest with room."""
    sims = np.asarray([[0.9, 0.1, 0.0], [0.8, 0.7, 0.0], [0.7, 0.2, 0.6]], dtype=np.float32)
    assert vectors.balanced_assign(sims, 1).tolist() == [0, 1, 2]
    assert vectors.balanced_assign(sims, 3).tolist() == [0, 0, 0]


def test_residual_codes_give_back_the_int4_rows_exactly() -> None:
    """Rows coded against their centroids' int4 codes decode to the very rows quantize/dequantize give (lossless)."""
    from toolcat.engines.embedding import dequantize  # noqa: PLC0415 - the reference decoding
    from toolcat.reader.search.semantic import residual_rows  # noqa: PLC0415 - the reader's decoding

    rows = _rows(300)
    rows[7] = 0.0  # a zero row (a deleted doc's)
    centroids = rows[::30] + 0.01
    refs = np.arange(300) % len(centroids)
    data, scales = vectors.quantize(rows)
    codes, same_scales = vectors.int4_codes(rows)
    assert same_scales == scales
    assert codes.min() >= -7
    assert codes.max() <= 7
    centroid_codes = vectors.int4_codes(centroids)[0]
    factors, text, wide = vectors.residual_codes(codes, centroid_codes[refs])
    assert len(text) == codes.size // 2  # two differences a character
    assert set(text) <= set(vectors.PAIR_ALPHABET)
    assert wide  # these centroids are far from most rows: some differences lie outside -4..4
    assert all(abs(d) > 4 for _, d in wide)
    got = residual_rows(text, factors, scales, centroid_codes[refs], vectors.RESIDUAL_DENOMINATOR, wide)
    assert got.dtype == np.float32
    assert (got == dequantize(data, scales, rows.shape[1], "int4")).all()


def test_residual_codes_of_an_odd_dim_pair_the_last_value_with_zero() -> None:
    """A row of odd dim is ceil(dim / 2) characters and decodes to the same int4 row."""
    from toolcat.engines.embedding import dequantize  # noqa: PLC0415 - the reference decoding
    from toolcat.reader.search.semantic import residual_rows  # noqa: PLC0415 - the reader's decoding

    rows = _rows(40, dim=383)
    data, scales = vectors.quantize(rows)
    codes = vectors.int4_codes(rows)[0]
    refs = np.repeat(vectors.int4_codes(rows.mean(axis=0, keepdims=True))[0], len(rows), axis=0)
    factors, text, wide = vectors.residual_codes(codes, refs)
    assert len(text) == 40 * 192  # 383 values: 191 pairs and the last with 0
    got = residual_rows(text, factors, scales, refs, vectors.RESIDUAL_DENOMINATOR, wide)
    assert (got == dequantize(data, scales, 383, "int4")).all()


def test_centroid_codes_read_back_dimension_by_dimension() -> None:
    """Centroids written one character a code, dimension by dimension, read back as the same int4 codes."""
    from toolcat.reader.search.semantic import PAIR_ALPHABET, RESIDUAL_ALPHABET, centroid_codes  # noqa: PLC0415

    codes = vectors.int4_codes(_rows(12, dim=384))[0]
    text = vectors.centroid_codes(codes)
    assert text[:12] == "".join(RESIDUAL_ALPHABET[32 + int(n)] for n in codes[:, 0])  # dimension 0 first
    assert (centroid_codes(text, 12, 384) == codes).all()
    assert (PAIR_ALPHABET, RESIDUAL_ALPHABET) == (vectors.PAIR_ALPHABET, vectors.RESIDUAL_ALPHABET)
    with pytest.raises(ValueError, match=r"outside -7\.\.7"):
        centroid_codes("A" * 12 * 384, 12, 384)


def test_residual_codes_are_smaller_once_gzipped_than_packed_int4() -> None:
    """Rows near their centroid take fewer gzipped bytes as residual codes than as base64 of packed nibbles."""
    import base64  # noqa: PLC0415 - only here
    import gzip  # noqa: PLC0415 - only here

    rng = np.random.default_rng(3)
    centre = rng.normal(size=384)
    rows = centre + 0.7 * rng.normal(size=(200, 384))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    codes, _ = vectors.int4_codes(rows)
    mean = vectors.int4_codes(rows.mean(axis=0, keepdims=True))[0]
    _, text, _ = vectors.residual_codes(codes, np.repeat(mean, len(rows), axis=0))
    packed = base64.b64encode(vectors.quantize(rows)[0])
    assert len(gzip.compress(text.encode(), 6)) < 0.9 * len(gzip.compress(packed, 6))


def _families(n: int, seed: int = 5) -> object:
    """``n`` unit rows in families of near-copies around one centre (a cluster's tools made from a few templates)."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=384)
    families = centre + 0.8 * rng.normal(size=(max(1, n // 8), 384))
    rows = families[np.arange(n) % len(families)] + 0.35 * rng.normal(size=(n, 384))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_tree_coded_cluster_rows_decode_to_the_int4_rows_and_take_fewer_bytes() -> None:
    """Cluster rows coded against a tree of references decode to the int4 rows, in fewer bytes than by centroid."""
    import gzip  # noqa: PLC0415 - only here

    from toolcat.engines.embedding import dequantize  # noqa: PLC0415 - the reference decoding
    from toolcat.reader.search.semantic import tree_rows  # noqa: PLC0415 - the reader's decoding

    rows = _families(120)
    data, scales = vectors.quantize(rows)
    codes = vectors.int4_codes(rows)[0]
    centroid = vectors.int4_codes(rows.mean(axis=0, keepdims=True))[0][0]
    ids = list(range(0, 120, 2))  # a cluster's rows: every other doc
    coded = vectors.tree_coded(codes, scales, ids, centroid)
    parents = coded["parents"]
    assert len(parents) == len(ids)
    assert parents.count(-1) >= 1
    assert sum(p >= 0 for p in parents) > len(ids) // 2  # most rows refer to a row of their family, not the centroid
    assert all(-1 <= p < len(ids) and p != i for i, p in enumerate(parents))
    got = tree_rows(coded, centroid.astype(np.int32), vectors.RESIDUAL_DENOMINATOR)
    assert (got == dequantize(data, scales, 384, "int4")[ids]).all()
    _, alone, _ = vectors.residual_codes(codes[ids], np.repeat(centroid[None, :], len(ids), axis=0))
    assert len(gzip.compress(coded["codes"].encode(), 6)) < 0.9 * len(gzip.compress(alone.encode(), 6))
    assert vectors.tree_coded(codes, scales, ids, centroid) == coded  # deterministic
    assert vectors.tree_coded(codes, scales, [], centroid) == {
        "scale": [],
        "k": [],
        "codes": "",
        "wide": [],
        "parents": [],
    }


def test_tree_rows_refuse_parents_that_are_no_tree() -> None:
    """A parent outside the shard, a row its own parent or a cycle is a ValueError, not rows."""
    from toolcat.reader.search.semantic import tree_rows  # noqa: PLC0415 - the reader's decoding

    rows = _families(6)
    codes, scales = vectors.int4_codes(rows)
    centroid = codes[0]
    coded = vectors.tree_coded(codes, scales, list(range(6)), centroid)
    for parents in ([6] * 6, [0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0], [-1, 2, 1, -1, -1, -1], [-2] * 6):
        with pytest.raises(ValueError, match="parent"):
            tree_rows({**coded, "parents": parents}, centroid.astype(np.int32), vectors.RESIDUAL_DENOMINATOR)


def test_an_edited_row_writes_again_only_its_page_of_cluster_shards() -> None:
    """The cluster shards live in a folder a page: a changed row gives new paths to its page's shards, not to all."""
    from toolcat.build.artifacts import ArtifactSet  # noqa: PLC0415 - the build's file set, only here

    rows = _families(400)
    nodes = _families(3, seed=9)

    def written(table_rows: object) -> tuple[dict[str, object], set[str]]:
        artifacts = ArtifactSet()
        part = vectors._write_partitioned(artifacts, table_rows, [[0]] * 400, nodes, [None] * 400)
        return part["clusters"], {path for path in artifacts.files if "/c" in path and "tools.clusters." in path}

    table, before = written(rows)
    # toolcat-vectors-11: a root a page, no page files
    assert len(table["folders"]) == len(table["roots"]) == -(-20 // vectors.cluster_page_size(20)) > 1
    assert "pages" not in table
    edited = rows.copy()
    edited[17] = _families(1, seed=11)[0]
    _, after = written(edited)
    assert before - after, "the edited row's shard has a new path"
    assert before & after, "the other pages' shards keep theirs"


@pytest.mark.parametrize(("clusters", "per_page"), [(2, 4), (45, 7), (100, 10), (316, 18)])
def test_the_cluster_table_pages_hold_about_the_square_root(clusters: int, per_page: int) -> None:
    """The meta lists a page ref per about sqrt(clusters) cluster shards (at least 4 a page)."""
    assert vectors.cluster_page_size(clusters) == per_page


@pytest.mark.parametrize(("n", "per_page", "groups"), [(2001, 6, 56), (10_000, 11, 83), (100_000, 23, 190)])
def test_the_row_table_has_three_levels_of_about_the_cube_root(n: int, per_page: int, groups: int) -> None:
    """A row table of n tools: pages of per_page files, groups of as many pages, and a directory of the groups."""
    assert vectors.row_page_size(n) == per_page
    pages = math.ceil(n / per_page)
    assert math.ceil(pages / per_page) == groups

"""The static query encoder (issue 33, research): a query vector from a token table, and the semantic tier's hook."""

from __future__ import annotations

from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the static query encoder needs numpy")

from toolcat.reader.search import semantic  # noqa: E402
from toolcat.reader.search.static_query import StaticQueryEncoder  # noqa: E402


class Tokens:
    """A tokenizer stand-in: each word's id is its length, between [CLS] (101) and [SEP] (102)."""

    def encode(self, text: str) -> list[int]:
        """[CLS], each word's length, [SEP]."""
        return [101, *(len(word) for word in text.split()), 102]


def table() -> tuple[object, object, object]:
    codes = np.zeros((8, 3), dtype=np.int8)
    codes[1] = [127, 0, 0]
    codes[2] = [0, 127, 0]
    codes[3] = [0, 0, -127]
    scale = np.array([1, 0.5, 1, 2, 1, 1, 1, 1], dtype=np.float32) / 127
    bias = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    return codes, scale, bias


def test_embed_is_the_normalised_sum_of_token_rows_and_bias() -> None:
    """'a bb a' sums row 1 twice, row 2 once and the bias, then normalises."""
    encoder = StaticQueryEncoder(*table(), Tokens())
    got = encoder.embed("a bb a")
    want = np.array([0.5 * 2, 1.0, 1.0])
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)
    assert got.dtype == np.float32


def test_tokens_past_the_table_are_dropped_and_bytes_count_distinct_rows() -> None:
    """A word of 9 letters has no row (id 9 of 8); bytes are distinct tokens x (dim + 4)."""
    encoder = StaticQueryEncoder(*table(), Tokens())
    assert encoder.token_ids("a ninechars a") == [1, 1]
    assert encoder.bytes_for("a ninechars a ccc") == 2 * (3 + 4)


def test_an_empty_query_is_the_bias_direction() -> None:
    """No token: the vector is the bias, normalised; all zero stays zero (no division by zero)."""
    codes, scale, bias = table()
    assert np.allclose(StaticQueryEncoder(codes, scale, bias, Tokens()).embed(""), [0, 0, 1])
    assert not StaticQueryEncoder(codes, scale, np.zeros(3), Tokens()).embed("").any()


def test_a_table_that_does_not_fit_together_is_refused() -> None:
    """Scales of another length than the codes raise ValueError naming the shapes."""
    codes, _, bias = table()
    with pytest.raises(ValueError, match="does not fit together"):
        StaticQueryEncoder(codes, np.ones(5), bias, Tokens())


def test_load_reads_the_training_scripts_npz(tmp_path: Path) -> None:
    """The .npz of codes, scale and bias loads to the same encoder."""
    codes, scale, bias = table()
    np.savez(tmp_path / "t.npz", codes=codes, scale=scale, bias=bias)
    loaded = StaticQueryEncoder.load(tmp_path / "t.npz", Tokens())
    assert np.allclose(loaded.embed("bb ccc"), StaticQueryEncoder(codes, scale, bias, Tokens()).embed("bb ccc"))


def test_the_semantic_tier_takes_its_query_vector_from_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """With QUERY_ENCODER set, query_vector is the encoder's vector, not the build's model's."""
    encoder = StaticQueryEncoder(*table(), Tokens())
    monkeypatch.setattr(semantic, "QUERY_ENCODER", encoder.embed)
    tier = semantic.SemanticTier({}, lambda _ref: {})
    assert np.array_equal(tier.query_vector("a bb"), encoder.embed("a bb"))

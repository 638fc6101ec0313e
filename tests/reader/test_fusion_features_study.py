"""The feature study of the learned fusion (bench/train_fusion_features.py): its features on hand-made candidates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
pytest.importorskip("numpy")
import train_fusion_features as study


def row() -> dict[str, object]:
    """Three candidates of "upload a file to a bucket": two lexical hits and one found by meaning alone."""
    lexical = [(0, 0.6, ["upload", "file"]), (1, 0.4, ["bucket"])]
    return {
        "query": "upload a file to a bucket",
        "sem": ([0, 1, 2], [], []),
        "raw": {
            "lexical": lexical,
            "semantic": [2, 1, 0],
            "values": [0.3, 0.5, 0.7],
            "idf": {"upload": 2.0, "file": 1.0, "bucket": 3.0},
            "words": {0: 0.4, 1: 0.1},
        },
        "match": {0: 0.0, 1: 0.5, 2: 0.0},
        "set": {
            "docs": [
                ("storage.presign_url", "Presign a URL", 800),
                ("storage.put_object", "Upload a bucket object", 1600),
                ("x.y", "", 10),
            ]
        },
    }


def test_candidate_features_read_the_ranks_gaps_and_idf_of_each_candidate():
    """The rarest word's hit, the leads over the best other candidate, the split of the lexical score by space."""
    features = study.candidate_features(row())
    first, second, semantic = features
    assert (first["rare_hit"], second["rare_hit"], semantic["rare_hit"]) == (0.0, 1.0, 0.0)
    assert first["first_hit"] == 1.0
    assert first["lex_lead"] == pytest.approx(0.2)
    assert second["lex_lead"] == pytest.approx(-0.2)
    assert semantic["cos_lead"] == pytest.approx(0.2)
    assert first["cos_lead"] == pytest.approx(-0.4)
    assert first["lex_chars"] == pytest.approx(0.2)
    assert semantic["lex_words"] == 0.0
    assert semantic["miss_known_idf"] == pytest.approx(1.0)  # every known word unmatched


def test_head_features_weigh_the_name_and_summary_words_by_idf():
    """put_object's summary has "upload" and "bucket" (5 of 6 idf); presign's name and summary none of them."""
    presign, put = study.head_features(row(), 0), study.head_features(row(), 1)
    assert put["sum_idf"] == pytest.approx(5 / 6)
    assert presign["sum_idf"] == 0.0
    assert presign["name_q_idf"] == 0.0
    assert put["match"] == 0.5

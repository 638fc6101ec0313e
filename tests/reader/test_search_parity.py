"""The reader's stdlib scores equal scikit-learn's cosine similarity on the same analyzers.

The index stores each weight rounded to ``WEIGHT_DECIMALS`` decimals, so the expected scores are scikit-learn's
with its matrices' weights rounded alike (docs/search.md, "Format").
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import write_tree

from toolcat.build import build, compile_catalog
from toolcat.build.contributors.index.fit import CHAR_MAX_DF_MIN_DOCS, WEIGHT_DECIMALS, make_vectorizer
from toolcat.build.contributors.index.shards import SPACE_WEIGHTS
from toolcat.build.contributors.index.texts import tool_order, tool_text
from toolcat.format.analyzer import ANALYZERS, analyze_words
from toolcat.reader.search.searcher import Searcher

WORDS = [
    "read",
    "write",
    "delete",
    "file",
    "bucket",
    "object",
    "calendar",
    "event",
    "invoice",
    "customer",
    "weather",
    "forecast",
    "send",
    "mail",
    "message",
    "search",
    "list",
    "create",
    "update",
    "archive",
    "export",
    "report",
    "user",
    "team",
    "order",
    "refund",
    "ship",
    "track",
]


def _tree() -> dict:
    rng = random.Random(7)  # noqa: S311 - a seeded test catalogue
    tree: dict = {"_node.yaml": {"title": "Parity", "summary": "random tools"}}
    for area in ("alpha", "beta", "gamma"):
        tools = []
        for i in range(40):  # 120 tools: enough for the chars space's max_df to apply
            words = rng.sample(WORDS, 6)
            tools.append(
                {
                    "id": f"{area}.{words[0]}_{words[1]}{i}",
                    "summary": " ".join(words[:4]).capitalize(),
                    "description": " ".join(rng.choices(WORDS, k=15)) + " getHTTPResponse snake_case_name",
                    "tags": words[4:],
                    "args_schema": {
                        "type": "object",
                        "properties": {f"{words[2]}Id": {"type": "string", "description": " ".join(words[3:])}},
                    },
                }
            )
        tree[f"{area}/_node.yaml"] = {"title": area.title(), "summary": f"{area} tools"}
        tree[f"{area}/tools.yaml"] = {"tools": tools}
    return tree


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    """A built random catalogue, its reader and scikit-learn's matrices over the same texts."""
    root = tmp_path_factory.mktemp("parity")
    src = write_tree(root / "src", _tree())
    out = root / "build"
    build(src, out)

    def fetch(ref):
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    manifest = fetch(json.loads((out / "catalog.json").read_text())["manifest"])
    catalog, _ = compile_catalog(src)
    texts = [tool_text(t, catalog) for t in tool_order(catalog)]
    models = {}
    assert len(texts) >= CHAR_MAX_DF_MIN_DOCS
    for name in SPACE_WEIGHTS:
        vectorizer = make_vectorizer(name, len(texts))
        matrix = vectorizer.fit_transform(texts)
        matrix.data = matrix.data.round(WEIGHT_DECIMALS)  # as stored
        models[name] = (vectorizer, matrix)
    return Searcher(manifest, fetch), models, len(texts), texts


def _sklearn_scores(models, query: str) -> list[float]:
    total = None
    for name, (vectorizer, matrix) in models.items():
        sims = (matrix @ vectorizer.transform([query]).T).toarray().ravel() * SPACE_WEIGHTS[name]
        total = sims if total is None else total + sims
    return list(total)


def _check(parity, query: str) -> None:
    searcher, models, n, _ = parity
    reader, _, _ = searcher.scores("tools", query)
    expected = _sklearn_scores(models, query)
    for doc_id in range(n):
        assert abs(reader.get(doc_id, 0.0) - expected[doc_id]) <= 1e-6, (query, doc_id)


QUERY = st.lists(st.one_of(st.sampled_from(WORDS), st.text(min_size=1, max_size=12)), min_size=1, max_size=12).map(
    " ".join
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERY)
def test_reader_scores_match_sklearn_cosine_for_random_queries(parity, query):
    """For random queries (catalogue words mixed with arbitrary unicode) every document's score is within 1e-6."""
    _check(parity, query)


def test_reader_scores_match_sklearn_for_seeded_word_queries(parity):
    """500 seeded queries of 1-8 catalogue words (with repeats and identifiers) agree within 1e-6."""
    rng = random.Random(3)  # noqa: S311 - seeded test queries
    for _ in range(500):
        words = rng.choices([*WORDS, "getHTTPResponse", "snake_case_name", "Deleting", "files"], k=rng.randint(1, 8))
        _check(parity, " ".join(words))


def test_scores_are_not_all_zero(parity):
    """The parity is not vacuous: a catalogue word scores some documents above 0.1."""
    searcher, _, _, _ = parity
    reader, _, _ = searcher.scores("tools", "bucket forecast")
    assert max(reader.values()) > 0.1


def test_analyzer_splits_identifiers_and_stems():
    """Identifiers split on dots, underscores and case; plurals and -ing/-ed are stemmed; stop words dropped."""
    assert analyze_words("s3.file_read getHTTPResponse") == ["s3", "s", "3", "file", "read", "get", "http", "respons"]
    assert analyze_words("ec2 v2 x86_64 abc123") == [
        "ec2",
        "ec",
        "2",
        "v2",
        "v",
        "2",
        "x86",
        "x",
        "86",
        "64",
        "abc",
        "123",
    ]
    assert analyze_words("the buckets") == ["bucket"]
    assert analyze_words("running stopped") == ["run", "stop"]


def test_char_max_df_drops_common_ngrams(parity):
    """With 120 documents the chars space drops n-grams in over half of them, so the parity covers max_df."""
    _, models, _, texts = parity
    vectorizer, _ = models["chars"]
    assert vectorizer.max_df < 1.0
    every_ngram = {gram for text in texts for gram in ANALYZERS["chars"](text)}
    assert len(vectorizer.vocabulary_) < len(every_ngram), "no n-gram was frequent enough to be dropped"


def test_top_k_equals_the_exhaustive_ranking(parity):
    """The pruned top-k search returns the same documents, order and scores (1e-9) as the exhaustive ranking."""
    searcher, _, _, _ = parity
    rng = random.Random(11)  # noqa: S311 - seeded test queries
    for _ in range(300):
        query = " ".join(rng.choices([*WORDS, "getHTTPResponse", "zzz", "archiving"], k=rng.randint(1, 6)))
        for k in (1, 5, 10):
            full = searcher._ranked("tools", query)[:k]
            top = searcher._ranked("tools", query, limit=k)
            assert [d for d, _, _ in top] == [d for d, _, _ in full], (query, k)
            assert all(abs(a[1] - b[1]) < 1e-9 and sorted(a[2]) == sorted(b[2]) for a, b in zip(top, full, strict=True))

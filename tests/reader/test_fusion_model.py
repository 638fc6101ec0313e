"""The learned fusion (search/fusion_model.py): its features, its scoring in 0-1, its weights file and the fallback."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from support import HAVE_DEFAULT_TIER, tier_build

from toolcat.engines.embedding import DEFAULT_SPEC
from toolcat.format.analyzer import analyze_words
from toolcat.reader.search import fusion_model, hybrid
from toolcat.reader.search import searcher as searcher_module
from toolcat.reader.search.fusion_model import LEXICAL_FEATURES, SEMANTIC_FEATURES, Model, features, model_for, parse
from toolcat.reader.search.searcher import Searcher


def _open(out: Path) -> Searcher:
    def fetch(ref: dict[str, object]) -> object:
        return json.loads((out / str(ref["path"])).read_bytes())

    manifest = fetch(json.loads((out / "catalog.json").read_text())["manifest"])
    assert isinstance(manifest, dict)
    return Searcher(manifest, fetch)


def _doc(models: dict[str, dict[str, object]]) -> dict[str, object]:
    return {"format": fusion_model.FORMAT, "models": models}


def _entry(names: tuple[str, ...], **extra: object) -> dict[str, object]:
    return {"features": list(names), "weights": [0.5] * len(names), "bias": -1.0, **extra}


@pytest.fixture(autouse=True)
def _fresh_cache():
    fusion_model._models.cache_clear()
    yield
    fusion_model._models.cache_clear()


@pytest.fixture(scope="module")
def tools_tier_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with ``--embedder minilm-tools`` (the adapter merged into MiniLM), once.

    While ``minilm-tools`` is the default that is the default tier's build, which the session already has.
    """
    if DEFAULT_SPEC == "minilm-tools":
        return Path(request.getfixturevalue("default_tier_build"))
    return tier_build(tmp_path_factory.mktemp("tools-tier"), "minilm-tools")


def _ranked(out: Path, query: str) -> list[tuple[str, float]]:
    return [(p["tool_id"], round(s, 9)) for p, s, _ in _open(out).rank_tools(query, limit=5)]


def test_features_read_the_lexical_and_semantic_evidence():
    """Each candidate's row holds its lexical score, rank, share of the best, coverage, cosine, gap and semantic rank."""
    lexical = [(3, 0.4, ["issu", "open"]), (1, 0.2, ["issu"])]
    rows = features("open an issue", lexical, [3, 1, 7], [0.5, 0.3, 0.7], [7, 3], gate=0.15)
    assert len(rows) == 3
    assert all(len(r) == len(SEMANTIC_FEATURES) for r in rows)
    first, second, third = (dict(zip(SEMANTIC_FEATURES, r, strict=True)) for r in rows)
    assert (first["lex"], first["lex_in"], first["lex_rank"], first["lex_share"]) == (0.4, 1.0, 1.0, 1.0)
    assert first["coverage"] == 1.0
    assert second["coverage"] == 0.5
    assert second["lex_rank"] == 0.5
    assert second["lex_share"] == 0.5
    assert (third["lex"], third["lex_in"], third["coverage"]) == (0.0, 0.0, 0.0)
    assert third["sem_rank"] == 1.0
    assert first["sem_rank"] == 0.5
    assert second["sem_rank"] == 0.0
    assert math.isclose(first["cos_gap"], -0.2)
    assert third["cos_gap"] == 0.0
    assert first["cos_x_weak"] == 0.0  # the best lexical score 0.4 is over the gate
    assert first["known"] == 1.0
    assert first["cos_x_unknown"] == 0.0
    half = dict(zip(SEMANTIC_FEATURES, features("open an issue", lexical, [7], [0.7], [7], known=0.5)[0], strict=True))
    assert half["known"] == 0.5
    assert math.isclose(half["cos_x_unknown"], 0.35)
    lexical_only = features("open an issue", lexical, [3, 1], None, [])
    assert all(len(r) == len(LEXICAL_FEATURES) for r in lexical_only)


def test_coverage_weighted_by_idf_counts_the_rare_words_more():
    """With the query's idf, coverage is the matched words' idf share; a model naming coverage_idf needs that idf."""
    lexical = [(3, 0.4, ["upload"]), (1, 0.3, ["file"])]
    idf = {"upload": 3.0, "file": 1.0, "bucket": 2.0}
    rows = features("upload a file to a bucket", lexical, [3, 1], None, [], idf=idf)
    assert [r[LEXICAL_FEATURES.index("coverage")] for r in rows] == [0.5, 1.0 / 6.0]
    plain = features("upload a file to a bucket", lexical, [3, 1], None, [])
    assert [r[LEXICAL_FEATURES.index("coverage")] for r in plain] == [1.0 / 3.0, 1.0 / 3.0]
    names = tuple(fusion_model.IDF_COVERAGE if n == "coverage" else n for n in SEMANTIC_FEATURES)
    assert names in fusion_model.FEATURE_SETS
    model = parse(_doc({"minilm-tools": _entry(names)}))["minilm-tools"]
    assert model.idf_coverage
    assert model.semantic
    assert not parse(_doc({"minilm-tools": _entry(SEMANTIC_FEATURES)}))["minilm-tools"].idf_coverage
    with pytest.raises(ValueError, match="needs the query's idf"):
        fusion_model.fuse("upload a file", lexical, [0.5, 0.1, 0.2, 0.3], 5, model)
    hits = fusion_model.fuse("upload a file", lexical, [0.0, 0.3, 0.0, 0.2], 5, model, idf=idf)
    assert {h[0] for h in hits} == {1, 3}  # the lexical top; 0 and 2 are under the cosine floor
    rows = features("upload a file", lexical, [3, 1], [0.2, 0.3], [1, 3], idf=idf)  # the candidates as fuse has them
    assert {doc: score for doc, score, _ in hits} == {3: model.score(rows[0]), 1: model.score(rows[1])}


def test_term_idf_reads_the_index_and_gives_an_unknown_word_the_unseen_idf(example_build: Path):
    """Searcher.term_idf: a known word's idf from its posting, a word no tool has ln(1 + n) + 1, above every known one."""
    searcher = _open(example_build)
    searcher.rank_tools("upload a file to a bucket zyxwv", limit=5)
    idf = searcher.term_idf("upload a file to a bucket zyxwv")
    assert set(idf) == set(analyze_words("upload a file to a bucket zyxwv"))
    n = searcher._part("tools").n_docs
    assert math.isclose(idf["zyxwv"], math.log(1 + n) + 1)
    known = [v for term, v in idf.items() if term != "zyxwv"]
    assert known
    assert all(1.0 <= v < idf["zyxwv"] for v in known)


def test_the_relevance_is_a_sigmoid_in_0_1_and_grows_with_a_positive_weight():
    """Model.score is sigmoid(bias + w·x): in 0-1, 0.5 at zero, monotone in a feature of positive weight."""
    model = Model(LEXICAL_FEATURES, [1.0] + [0.0] * (len(LEXICAL_FEATURES) - 1), 0.0, None)
    zero = [0.0] * len(LEXICAL_FEATURES)
    assert model.score(zero) == 0.5
    low, high = model.score([0.1, *zero[1:]]), model.score([0.9, *zero[1:]])
    assert 0.5 < low < high < 1.0
    n = len(LEXICAL_FEATURES)
    assert Model(LEXICAL_FEATURES, [-1000.0] * n, 0.0, None).score([1.0] * n) == 0.0


def test_a_malformed_weights_document_is_refused():
    """Another format, unknown features, a missing or non-finite weight: parse raises, naming what is wrong."""
    with pytest.raises(ValueError, match="toolcat-fusion-1"):
        parse({"format": "other", "models": {}})
    with pytest.raises(ValueError, match="a fusion model over"):
        parse(_doc({"lexical": {"features": ["lex"], "weights": [1.0], "bias": 0.0}}))
    with pytest.raises(ValueError, match="not finite"):
        parse(_doc({"lexical": {**_entry(LEXICAL_FEATURES), "bias": float("nan")}}))
    with pytest.raises(ValueError, match="name weights"):
        parse(_doc({"lexical": {**_entry(LEXICAL_FEATURES), "name": [1.0]}}))
    with pytest.raises(KeyError):
        parse(_doc({"lexical": {"features": list(LEXICAL_FEATURES), "bias": 0.0}}))


def test_model_for_falls_back_when_the_file_is_absent_malformed_or_for_other_weights(tmp_path: Path, monkeypatch):
    """No file, a broken file, another model's sha256, or TOOLCAT_LEARNED_FUSION=0: no model (the hand-tuned fuse)."""
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    assert model_for("minilm-onnx", path=tmp_path / "absent.json") is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert model_for("minilm-onnx", path=broken) is None
    good = tmp_path / "good.json"
    doc = _doc({"minilm-onnx": _entry(SEMANTIC_FEATURES, weights_sha256="abc"), "lexical": _entry(LEXICAL_FEATURES)})
    good.write_text(json.dumps(doc))
    assert model_for("minilm-onnx", "abc", path=good) is not None
    assert model_for("minilm-onnx", "def", path=good) is None
    assert model_for("minilm-st", "abc", path=good) is None
    assert model_for("lexical", path=good) is not None
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    assert model_for("minilm-onnx", "abc", path=good) is None


def test_a_malformed_entry_is_left_out_alone(tmp_path: Path, monkeypatch):
    """One broken entry (a missing weight, unknown features) gives its tier no model; the other tiers keep theirs."""
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    path = tmp_path / "w.json"
    broken = {"features": list(SEMANTIC_FEATURES), "bias": 0.0}
    doc = _doc({"minilm-tools": broken, "minilm-onnx": _entry(SEMANTIC_FEATURES), "lexical": {"features": ["lex"]}})
    path.write_text(json.dumps(doc))
    assert model_for("minilm-tools", path=path) is None
    assert model_for("lexical", path=path) is None
    assert model_for("minilm-onnx", path=path) is not None
    path.write_text(json.dumps({**doc, "format": "toolcat-fusion-0"}))  # another format: no model at all
    fusion_model._models.cache_clear()
    assert model_for("minilm-onnx", path=path) is None


def test_an_opt_in_model_applies_only_when_asked(tmp_path: Path, monkeypatch):
    """A model marked "default": false is used only with TOOLCAT_LEARNED_FUSION=all."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_doc({"lexical": _entry(LEXICAL_FEATURES, default=False)})))
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    assert model_for("lexical", path=path) is None
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    assert model_for("lexical", path=path) is not None


def test_the_committed_weights_load_with_a_default_model_for_minilm_tools_and_opt_in_others(monkeypatch):
    """fusion_weights.json parses: minilm-tools' model on by default, minilm-onnx's opt-in (each held to its sha256), lexical."""
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    models = parse(json.loads(fusion_model.WEIGHTS_FILE.read_text(encoding="utf-8")))
    assert models["minilm-onnx"].semantic
    assert models["minilm-tools"].semantic
    assert models["minilm-onnx"].sha256
    assert models["minilm-tools"].sha256
    assert models["minilm-tools"].sha256 != models["minilm-onnx"].sha256
    assert models["minilm-tools"].idf_coverage  # chosen over plain coverage by the CV rule (docs/search.md, "Stacked")
    assert not models["lexical"].semantic
    assert model_for("minilm-onnx") is None  # opt-in (docs/search.md, "Learned fusion")
    assert model_for("lexical") is None
    default = model_for("minilm-tools")  # the default embedder's model ranks unasked (docs/search.md, "at a glance")
    assert default is not None
    assert default.weights == models["minilm-tools"].weights
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    assert model_for("minilm-tools") is None  # 0 turns every learned fusion off
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    for tier in ("minilm-onnx", "minilm-tools"):
        found = model_for(tier)
        assert found is not None
        assert found.weights == models[tier].weights
    assert model_for("minilm-tools", models["minilm-onnx"].sha256) is None  # the base model's vectors: not its model


def test_learned_fuse_keeps_the_candidates_the_scope_and_the_semantic_term():
    """The learned fuse ranks the lexical top and semantic top only, in scope, in 0-1, marking meaning-led hits."""
    model = Model(SEMANTIC_FEATURES, [1.0 if n in ("lex", "cos") else 0.0 for n in SEMANTIC_FEATURES], -2.0, None)
    lexical = [(0, 0.12, ["issu"]), (1, 0.10, ["open"])]
    cosines = [0.30, 0.05, 0.85, 0.10, 0.15]
    hits = fusion_model.fuse("open an issue", lexical, cosines, 5, model, params=(0.6, 0.6, 0.15, 0.2))
    assert [h[0] for h in hits] == [2, 0, 1]  # 3 and 4 are under the cosine floor and no lexical hit
    assert hybrid.SEMANTIC_TERM in hits[0][2]
    assert hybrid.SEMANTIC_TERM in hits[1][2]
    assert hits[2][2] == ["open"]
    assert all(0.0 < score < 1.0 for _, score, _ in hits)
    scoped = fusion_model.fuse(
        "open", lexical[1:], cosines, 5, model, allowed=lambda d: d != 2, params=(0.6, 0.6, 0.15, 0.2)
    )
    assert 2 not in [h[0] for h in scoped]
    ones = Model(LEXICAL_FEATURES, [1.0] * len(LEXICAL_FEATURES), 0.0, None)
    lexical_only = fusion_model.fuse("open", lexical, None, 1, ones)
    assert lexical_only == [(1, lexical_only[0][1], ["open"])]  # it matched the query's one word: coverage 1
    assert 0.5 < lexical_only[0][1] < 1.0


def test_the_name_weights_lift_a_head_hit_whose_id_is_the_query():
    """name_rescored adds the learned name weights to the logit of the head hits whose id matches, and re-sorts."""
    model = Model(LEXICAL_FEATURES, [0.0] * len(LEXICAL_FEATURES), 0.0, None, name=(1.0, 2.0))
    hits = [(0, 0.6, ["list"]), (1, 0.5, ["list", "star"]), (2, 0.4, [])]
    ids = ["github.list_issues", "github.list_starred_repositories"]  # the third is outside the head given
    terms = set(analyze_words("list starred repositories"))
    out = fusion_model.name_rescored(hits, ids, terms, model, analyze_words)
    assert [h[0] for h in out] == [1, 0, 2]
    assert math.isclose(out[0][1], 1 / (1 + math.exp(-(fusion_model.logit(0.5) + 3.0))))
    # list_issues shares one of its two words with the query's three: match 1/6, under NAME_MIN (no step)
    assert math.isclose(out[1][1], 1 / (1 + math.exp(-(fusion_model.logit(0.6) + 1 / 6))))
    assert out[2] == hits[2]
    assert math.isclose(fusion_model.logit(0.5), 0.0)
    assert math.isfinite(fusion_model.logit(1.0))


def test_the_searcher_ranks_a_lexical_build_with_the_opt_in_model(example_build: Path, monkeypatch):
    """A build without vectors: hand-tuned (lexical) by default, the learned lexical model with TOOLCAT_LEARNED_FUSION=all."""
    query = "send a message to a channel"
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    plain = _open(example_build).rank_tools(query, limit=5)
    searcher = _open(example_build)
    lexical = super(type(searcher), searcher)._ranked("tools", query, None, 5)
    assert [round(s, 6) for _, s, _ in plain] == [round(s, 6) for _, s, _ in lexical]
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    learned = _open(example_build).rank_tools(query, limit=5)
    model = fusion_model.model_for("lexical")
    assert model is not None
    assert len(learned) == 5
    assert all(0.0 < s < 1.0 for _, s, _ in learned)
    assert [s for _, s, _ in learned] != [s for _, s, _ in plain]
    assert [s for _, s, _ in learned] == sorted((s for _, s, _ in learned), reverse=True)


@pytest.mark.skipif(not HAVE_DEFAULT_TIER, reason="the default tier (numpy, onnxruntime, MiniLM) is not installed")
def test_the_default_tier_ranks_with_the_learned_model_and_its_name_weights(default_tier_build: Path, monkeypatch):
    """A default build is ranked by its learned model unasked; its name weights lift git.status for 'git status'."""
    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    learned = {p["tool_id"]: s for p, s, _ in _open(default_tier_build).rank_tools("git status", limit=5)}
    assert next(iter(learned)) == "git.status"
    model = fusion_model.model_for(DEFAULT_SPEC)
    assert model is not None
    assert any(model.name)
    monkeypatch.setattr(model, "name", (0.0, 0.0))
    nameless = {p["tool_id"]: s for p, s, _ in _open(default_tier_build).rank_tools("git status", limit=5)}
    assert nameless["git.status"] < learned["git.status"] <= 1.0
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    hand = {p["tool_id"]: s for p, s, _ in _open(default_tier_build).rank_tools("git status", limit=5)}
    assert hand != learned


@pytest.mark.skipif(not HAVE_DEFAULT_TIER, reason="the default tier (numpy, onnxruntime, MiniLM) is not installed")
def test_a_minilm_tools_build_is_ranked_by_its_own_model_held_to_its_sha256(
    tools_tier_build: Path, tmp_path: Path, monkeypatch
):
    """A minilm-tools build: its entry ranks it when asked; the entry for other weights, or a broken one: hand fusion."""
    query = "upload a file to a bucket"
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    hand = _ranked(tools_tier_build, query)
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    searcher = _open(tools_tier_build)
    tier = searcher.semantic_tier()
    assert tier is not None
    assert tier.model == "minilm-tools"
    model = searcher._tools_model()
    assert model is not None
    assert model is fusion_model.model_for("minilm-tools")
    assert model.sha256 == tier.weights_sha256
    assert searcher.weak_bar() == model.weak
    learned = _ranked(tools_tier_build, query)
    assert learned != hand
    assert learned[0][0] == "storage.put_object"  # the seed request, as with the hand fusion
    entry = json.loads(fusion_model.WEIGHTS_FILE.read_text(encoding="utf-8"))["models"]["minilm-tools"]
    path = tmp_path / "w.json"
    others = json.loads(fusion_model.WEIGHTS_FILE.read_text(encoding="utf-8"))["models"]
    monkeypatch.setattr(fusion_model, "WEIGHTS_FILE", path)
    without = {name: e for name, e in others.items() if name != "minilm-tools"}  # a file from before the entry
    for models in (
        without,
        {**without, "minilm-tools": {**entry, "weights_sha256": "0" * 64}},  # another model's vectors
        {**without, "minilm-tools": {**entry, "weights": entry["weights"][:-1]}},  # malformed
    ):
        path.write_text(json.dumps(_doc(models)))
        fusion_model._models.cache_clear()
        assert _open(tools_tier_build)._tools_model() is None
        assert _ranked(tools_tier_build, query) == hand
    path.write_text(json.dumps(_doc({"minilm-tools": entry})))  # the same entry, in a file of its own: the same ranking
    fusion_model._models.cache_clear()
    assert _ranked(tools_tier_build, query) == learned


def test_a_model_carries_its_weak_bar_and_refuses_a_non_finite_one():
    """parse reads "weak_relevance" (absent: None, the reader's WEAK_RELEVANCE applies); NaN is refused."""
    assert parse(_doc({"lexical": _entry(LEXICAL_FEATURES)}))["lexical"].weak is None
    assert parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3)}))["lexical"].weak == 0.3
    with pytest.raises(ValueError, match="not finite"):
        parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=float("nan"))}))


def test_a_model_may_raise_its_weak_bar_for_short_queries_and_refuses_a_non_finite_rise():
    """parse reads "weak_per_word" (absent: 0, one bar for every query, as a reader from before it reads the entry)."""
    assert parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3)}))["lexical"].weak_per_word == 0.0
    model = parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3, weak_per_word=0.1)}))["lexical"]
    assert (model.weak, model.weak_per_word) == (0.3, 0.1)
    with pytest.raises(ValueError, match="not finite"):
        parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3, weak_per_word=float("inf"))}))


def test_the_committed_models_carry_a_weak_bar_chosen_on_their_scale():
    """Every committed model has a weak bar in 0-1 (bench/train_fusion.py chose it on the learned relevance)."""
    models = parse(json.loads(fusion_model.WEIGHTS_FILE.read_text(encoding="utf-8")))
    for tier in ("minilm-onnx", "minilm-tools", "lexical"):
        weak = models[tier].weak
        assert weak is not None
        assert 0.0 < weak < 1.0


def test_the_weak_rule_reads_the_bar_of_the_fusion_that_ranked(example_build: Path, monkeypatch):
    """find_tool's weak bar is the learned model's own when it ranks the tools, else WEAK_RELEVANCE (nodes: always)."""
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "0")
    assert _open(example_build).weak_bar() == searcher_module.WEAK_RELEVANCE
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    model = fusion_model.model_for("lexical")
    assert model is not None
    searcher = _open(example_build)
    assert searcher.weak_bar() == model.weak
    assert searcher.weak_bar("nodes") == searcher_module.WEAK_RELEVANCE
    monkeypatch.setattr(model, "weak", 0.99)  # every hit under it: "zip the reports" (one word unknown) is weak
    assert _open(example_build).find_tool("zip the reports").get("weak") is True
    monkeypatch.setattr(model, "weak", 0.0)  # none under it: not weak, whatever the unknown words
    assert "weak" not in _open(example_build).find_tool("zip the reports")


def test_the_weak_bar_rises_by_the_models_per_word_share_for_a_short_query(example_build: Path, monkeypatch):
    """weak_bar(words) is ``weak + weak_per_word / words``: a rise that lifts 'zip the reports' (2 words) over its hit."""
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    model = fusion_model.model_for("lexical")
    assert model is not None
    best = _open(example_build).rank_tools("zip the reports", limit=1)[0][1]
    monkeypatch.setattr(model, "weak", best - 0.01)  # just under its best hit: not weak with one bar
    monkeypatch.setattr(model, "weak_per_word", 0.0)
    assert "weak" not in _open(example_build).find_tool("zip the reports")
    monkeypatch.setattr(model, "weak_per_word", 0.04)  # + 0.04 / 2 words: over it
    searcher = _open(example_build)
    assert searcher.weak_bar("tools", 2) == pytest.approx(best + 0.01)
    assert searcher.weak_bar() == best - 0.01  # no query: the bar alone
    assert searcher.weak_bar("nodes", 2) == searcher_module.WEAK_RELEVANCE  # the hand bar has no rise
    assert searcher.find_tool("zip the reports").get("weak") is True


@pytest.mark.skipif(not HAVE_DEFAULT_TIER, reason="the default tier (numpy, onnxruntime, MiniLM) is not installed")
def test_the_stack_calls_zip_the_reports_weak(tools_tier_build: Path, monkeypatch):
    """minilm-tools under its learned fusion: 'zip the reports' is weak (its bar rises for 2 words); a covered one is not.

    The rise was chosen on the train requests (bench/train_fusion.py, weak_per_word; docs/search.md, "Stacked").
    """
    monkeypatch.setenv("TOOLCAT_LEARNED_FUSION", "all")
    searcher = _open(tools_tier_build)
    model = searcher._tools_model()
    assert model is not None
    assert model is fusion_model.model_for("minilm-tools")
    assert model.weak_per_word > 0
    answer = searcher.find_tool("zip the reports")
    assert answer.get("weak") is True
    assert any("'zip'" in hint for hint in answer["hints"])
    assert "weak" not in searcher.find_tool("upload a file to a bucket")


def test_the_weak_bar_is_chosen_between_answered_and_unanswerable_train_requests():
    """bench/train_fusion.choose_weak: a bar that calls no right-first train answer weak and every foreign one weak.

    Held-out requests do not move it; a request with most words known is never weak, whatever its relevance.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import train_fusion  # noqa: PLC0415 - a benchmark script, imported for its chooser

    def outcome(best: float | None, labelled: bool, part: str = "train", unknown: bool = True) -> dict[str, object]:
        return {"best": best, "labelled": labelled, "top1": labelled, "part": part, "unknown": unknown}

    outs = [outcome(b, True) for b in (0.5, 0.6, 0.7)] + [outcome(b, False) for b in (0.1, 0.2, 0.3, None)]
    bar, cost = train_fusion.choose_weak([*outs, outcome(0.9, False, part="test"), outcome(0.05, True, part="test")])
    assert 0.3 < bar < 0.5
    assert cost == 0.0
    assert train_fusion.said_so(outcome(None, False), bar)  # nothing shown says so by itself
    assert not train_fusion.said_so(outcome(0.1, True, unknown=False), bar)


def test_a_weak_rule_whose_bar_moves_with_a_feature_is_fitted_on_train_requests_only():
    """bench/train_fusion.fit_rule: a slope separates what one bar cannot; held-out and most-known requests do not count.

    Short unanswerable requests score as high as long answered ones here: only a bar that rises as the words get fewer
    (``bar + slope / words``) calls every unanswerable one weak and no right-first answer.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import train_fusion  # noqa: PLC0415 - a benchmark script, imported for its weak-rule fit

    def outcome(best: float | None, labelled: bool, words: int, part: str = "train", share: float = 1.0) -> dict:
        x = {"words": share, "none": 0.0, "inv_words": 1 / words}
        return {"best": best, "labelled": labelled, "top1": labelled, "part": part, "x": x}

    answered = [outcome(0.4, True, 10), outcome(0.45, True, 8), outcome(0.5, True, 2)]
    unanswerable = [outcome(0.2, False, 10), outcome(0.42, False, 2), outcome(0.44, False, 1), outcome(None, False, 3)]
    held = [outcome(0.9, False, 1, part="test"), outcome(0.01, True, 10, part="test")]
    outs = [*answered, *unanswerable, *held]
    one = ("one bar", "words", 0.5, "none", (0.0,))
    by_words = ("bar + s / words", "words", 0.5, "inv_words", tuple(i / 100 for i in range(41)))
    assert train_fusion.rule_counts(answered + unanswerable, one, *train_fusion.fit_rule(outs, one))[0:3:2] != (0, 0)
    bar, slope = train_fusion.fit_rule(outs, by_words)
    assert slope > 0
    assert train_fusion.rule_counts(answered + unanswerable, by_words, bar, slope) == (0, 3, 0, 4)
    assert not train_fusion.rule_weak(outcome(0.01, False, 1, share=0.4), by_words, bar, slope)  # most words known
    assert train_fusion.rule_weak(outcome(None, True, 10, share=0.0), by_words, bar, slope)  # nothing shown
    bar, slope = train_fusion.fit_rule(outs, one, limit=0.0)  # no right-first answer weak: two unanswerable pass
    assert train_fusion.rule_counts(answered + unanswerable, one, bar, slope) == (0, 3, 2, 4)


def test_a_model_names_the_idf_share_its_weak_bar_was_fitted_at():
    """parse reads "weak_share" (absent: None, the reader's WEAK_LEARNED_SHARE applies); a share outside (0, 1] is refused."""
    assert parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3)}))["lexical"].weak_share is None
    model = parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3, weak_share=0.7)}))["lexical"]
    assert model.weak_share == 0.7
    for bad in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="weak_share"):
            parse(_doc({"lexical": _entry(LEXICAL_FEATURES, weak_relevance=0.3, weak_share=bad)}))


def test_find_tool_reads_the_weak_share_from_the_models_entry(tools_tier_build: Path, tmp_path: Path, monkeypatch):
    """The entry's weak_share decides weak answers: "zip the reports" is weak at the shipped 0.54, not at 0.99."""
    from toolcat.reader import Catalog  # noqa: PLC0415 - the public API, as an agent reaches it

    monkeypatch.delenv("TOOLCAT_LEARNED_FUSION", raising=False)
    shipped = json.loads(fusion_model.WEIGHTS_FILE.read_text(encoding="utf-8"))["models"]
    assert shipped["minilm-tools"]["weak_share"] == searcher_module.WEAK_LEARNED_SHARE
    query = "zip the reports"
    searcher = _open(tools_tier_build)
    assert searcher.weak_share() == searcher_module.WEAK_LEARNED_SHARE
    assert searcher_module.WEAK_LEARNED_SHARE <= searcher.unknown_share(query) < 0.99
    assert Catalog.open(tools_tier_build).find_tool(query).get("weak") is True
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_doc({**shipped, "minilm-tools": {**shipped["minilm-tools"], "weak_share": 0.99}})))
    monkeypatch.setattr(fusion_model, "WEIGHTS_FILE", path)
    fusion_model._models.cache_clear()
    assert _open(tools_tier_build).weak_share() == 0.99
    answer = Catalog.open(tools_tier_build).find_tool(query)
    assert answer["ok"] is True, answer
    assert "weak" not in answer, answer

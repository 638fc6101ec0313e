"""Learn how to combine the evidence the reader already has (learning to rank over cheap features), and measure it.

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python bench/train_fusion.py [--sets example,github,metatool,bfcl]
        [--keep /tmp/toolcat-fusion-builds] [--write] [--report-only] [--no-report] [--own-examples]
        [--embedder minilm-tools] [--against] [--idf-coverage] [--out FILE] [--weak-rules [--thresholds-only]]

Each labelled set (bench_search_tiers' sources: the example's evals, GitHub MCP, 2,000 sampled MetaTool queries,
every BFCL query) is built once with the default embedder (``minilm-onnx``; ``--embedder minilm-tools``: with that
embedder, and only its model is trained, the lexical one not depending on the embedder; ``--against`` reports the
default tier's builds beside it, hand and learned fusion, the four rankings alternated query by query in one pass;
``--idf-coverage`` trains on coverage weighted by idf, ``fusion_model.IDF_COVERAGE``; ``--out`` writes another
weights file than the committed one, its other entries kept, and the report ranks with it). For every query the script keeps what
the reader computes: the lexical top 50, the semantic top 50 and every candidate's cosine, and turns them into the
features of :func:`toolcat.reader.search.fusion_model.features` (the reader's own code). Two models are trained,
on the TRAIN split only (``bench_search.split``: sha256 of the query mod 10 under 7):

* ``minilm-onnx``: lexical and semantic features, over the lexical top 50 and the semantic top 50;
* ``lexical``: the lexical features alone, over the lexical top 50 (the ``--embedder none`` tier).

Models: a pointwise logistic regression (each query's positives and negatives weighted to one each) and a pairwise
one (the right tool against every other candidate, RankNet-style), each for a grid of C and of per-set weighting
(each set's train queries weighing the same, or each query the same). Then the name stage: what the name match
(``hybrid.name_match``; the reader reads only the top 10's ids) adds to the logit of each of the top 10, two
weights >= 0 fitted pairwise on each train query's top 10, the first stage fixed. Then both are rescaled so that
``sigmoid(a · s + c + d · q)`` fits main's relevance on each query's top 10 (least squares; ``q`` the features equal
for every candidate of a query, so no order changes): find_tool's cut, chosen on main's scale, keeps its meaning.
The grid point is chosen by 5-fold cross-validation over
the train queries (a fold is a slice of the query's sha256, so a query is never in both parts): the point whose
worst set gains most R@1 over main on the train queries (the shipping gate is "not lower on any set"), then the
mean R@1, then MRR. The chosen point is refitted on every train query and evaluated on the held-out
split. Last, its weak bar (``weak_relevance``, :func:`weak_bar`): find_tool's weak rule on the learned scale, chosen
on the train requests of the labelled sets and of requests no tool answers (:func:`prepare_foreign`: other sets'
queries asked of the example and GitHub catalogues, made-up words), printed with the held-out counts beside main's.
``--write`` saves the models to ``compiler/reader/search/fusion_weights.json`` (``--report-only`` ranks with the
committed file, no training). ``--own-examples`` adds the example catalogue's tool examples as a labelled training
set (tried for the seed request; not kept: docs/search.md, "Learned fusion"). ``--weak-rules`` (no training) measures
the weak rules of WEAK_RULES on the committed model of ``--embedder`` and on main's fusion: each fitted on the train
requests, its 5-fold CV cost there, its held-out counts, and whether "zip the reports" is weak (docs/search.md,
"Stacked: minilm-tools under the learned fusion"); then (``--thresholds-only``: that alone) the idf-weighted unknown
share's thresholds the reader's rule reads, each fitted on the train requests (:func:`weak_thresholds`; docs/search.md,
"The weak rule weighs words by idf"). Training fits a learned model's bar and rise under that rule at
``WEAK_LEARNED_SHARE`` (:func:`weak_per_word`).

The report then ranks every query through the reader itself (``Searcher.rank_tools(query, limit=10)``, as
bench_search_tiers does) with the learned fusion on and off (``TOOLCAT_LEARNED_FUSION=0``: main's hand-tuned
fusion), alternately query by query in one run, for both tiers: R@1 / R@5 / MRR on every query and held out, the
no-shared-word split (``bench_search_tiers.no_shared_word``) and the warm p50 per query. The builds and each query's
candidates are kept in ``--keep`` (reused while the reader's feature code is unchanged). Deterministic: fixed sample
seed, fixed folds, lbfgs and L-BFGS-B on fixed data (the weights file is written with 6 decimals).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import itertools
import json
import math
import os
import pickle
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, open_build, split  # noqa: E402
from bench_search_tiers import SETS, labelled_set, metrics, no_shared_word  # noqa: E402
from bench_search_tune import open_semantic  # noqa: E402

from toolcat.build import build, compile_catalog  # noqa: E402
from toolcat.build.contributors.index.texts import tool_order  # noqa: E402
from toolcat.format.analyzer import analyze_words  # noqa: E402
from toolcat.reader.search import fusion_model, hybrid  # noqa: E402
from toolcat.reader.search.ranking import IndexReader  # noqa: E402
from toolcat.reader.search.searcher import (  # noqa: E402
    MIN_RELEVANCE,
    WEAK_LEARNED_SHARE,
    WEAK_RELEVANCE,
    WEAK_UNKNOWN_SHARE,
    Searcher,
)

#: The embedder the sets are built with and the semantic model is trained for (``--embedder``; a module switch so
#: the cached candidates and the builds follow it).
EMBEDDER = "minilm-onnx"
#: The default tier: a run for another embedder trains that tier's model alone (the lexical one does not depend on
#: the embedder) and, with ``--against``, reports it side by side with this tier's builds.
BASE_EMBEDDER = "minilm-onnx"
#: Whether the coverage feature weighs the query's words by idf (``--idf-coverage``: fusion_model.IDF_COVERAGE).
IDF_COVERAGE = False
#: The other builds of each set the report ranks with (``none``: the lexical tier; ``--against`` adds BASE_EMBEDDER's).
EXTRA_BUILDS: tuple[str, ...] = ("none",)
#: The tiers whose learned model a reader uses unasked (the rest need TOOLCAT_LEARNED_FUSION=all): minilm-tools, the
#: default embedder, whose stack passes the figures' gate against the base MiniLM's hand fusion (docs/search.md,
#: "Stacked"). The minilm-onnx model changes two pinned behaviours (docs/search.md, "Learned fusion"), and the
#: lexical one loses MetaTool R@1 and would part the Python reader from the TypeScript one.
DEFAULT_MODELS: tuple[str, ...] = ("minilm-tools",)
GRID_C = (0.001, 0.01, 0.1, 1.0, 10.0)
#: The weak bar's requests no tool answers (:func:`prepare_foreign`): these sets' queries against those catalogues,
#: and made-up words.
FOREIGN_SOURCES = ("metatool", "bfcl")
FOREIGN_TARGETS = ("example", "github")
FOREIGN_SAMPLE = 300
FOREIGN_GIBBERISH = 100
#: Whether the example catalogue's own tool examples are a labelled training set (:func:`prepare_own`).
OWN_EXAMPLES = False
#: The features that are the same for every candidate of a query: the calibration's per-query terms (:func:`calibrate`).
QUERY_FEATURES = ("lex_best", "query_terms", "known")
FOLDS = 5
OUT = Path(__file__).resolve().parent.parent / "compiler" / "reader" / "search" / "fusion_weights.json"


def feature_names(kind: str) -> tuple[str, ...]:
    """The feature names of the ``sem`` or ``lex`` rows, ``coverage`` or its idf variant (IDF_COVERAGE)."""
    names = fusion_model.SEMANTIC_FEATURES if kind == "sem" else fusion_model.LEXICAL_FEATURES
    return tuple(fusion_model.IDF_COVERAGE if n == "coverage" and IDF_COVERAGE else n for n in names)


def prepare(name: str, tmp: Path, keep: Path) -> dict[str, Any]:
    """One set built with EMBEDDER; per query the candidates, both feature rows, gold flags, name match."""
    src = tmp / f"{name}-src"
    back, queries = labelled_set(name, src)
    out = keep / f"{name}-{EMBEDDER}"
    if not (out / "catalog.json").is_file():
        build(src, out, embedder=EMBEDDER)
    for other in EXTRA_BUILDS:  # the report's other builds: the lexical tier, the default tier beside another
        if other != EMBEDDER and not (keep / f"{name}-{other}" / "catalog.json").is_file():
            build(src, keep / f"{name}-{other}", embedder=other)
    searcher, tier, ids = open_semantic(out)
    n = len(ids)
    names = [back.get(i, i) for i in ids]
    rows = query_rows(searcher, tier, ids, names, queries)
    apart = set(no_shared_word(src, queries, back))
    print(f"{name}: {n} tools, {len(queries)} queries, {len(apart)} share no word", flush=True)
    return {
        "name": name,
        "rows": rows,
        "names": names,
        "ids": ids,
        "apart": apart,
        "out": out,
        "built": name,  # the set whose builds these are (the own examples ask the example's)
        "back": back,
        "queries": queries,
    }


def query_rows(
    searcher: Searcher, tier: Any, ids: list[str], names: list[str], queries: list[tuple[str, set[str]]]
) -> list[dict[str, Any]]:
    """Per query: the candidates, both feature rows, gold flags, name match, main's top 10, unknown words.

    With IDF_COVERAGE the rows' coverage is weighted by idf (the reader's ``Searcher.term_idf``).

    ``unknown``: whether at least WEAK_UNKNOWN_SHARE of the query's content words are in no tool's text (the first
    half of find_tool's weak rule, ``Searcher.weak_words``).
    """
    _, _, gate, min_cosine = hybrid.FUSION["onnx"]
    rows = []
    for query, gold in queries:
        lexical = IndexReader._ranked(searcher, "tools", query, None, hybrid.CANDIDATES)  # noqa: SLF001
        cosines = tier.scores("tools", query)
        semantic = hybrid.semantic_top(cosines, None, min_cosine)
        cands = list(dict.fromkeys([*(doc for doc, _, _ in lexical), *semantic]))
        values = [float(cosines[doc]) for doc in cands]
        known = searcher.known_share(query)
        idf = searcher.term_idf(query) if IDF_COVERAGE else None
        x_sem = fusion_model.features(query, lexical, cands, values, semantic, gate, known, idf)
        lex_docs = [doc for doc, _, _ in lexical]
        x_lex = fusion_model.features(query, lexical, lex_docs, None, [], gate, known, idf)
        terms = set(analyze_words(query))
        rows.append(
            {
                "query": query,
                "gold": gold,
                "part": split(query),
                "sem": (cands, x_sem, [names[d] in gold for d in cands]),
                "lex": (lex_docs, x_lex, [names[d] in gold for d in lex_docs]),
                "match": {d: hybrid.name_match(terms, ids[d], analyze_words) for d in cands} if terms else {},
                "hand": [(doc, s) for doc, s, _ in hybrid.fuse(lexical, cosines, 10, None, hybrid.FUSION["onnx"])],
                "unknown": unknown_enough(searcher, query),
            }
        )
    return rows


def unknown_enough(searcher: Searcher, query: str) -> bool:
    """The first half of find_tool's weak rule: at least WEAK_UNKNOWN_SHARE of the query's words are in no tool."""
    missing, words = searcher._unknown_words(query)  # noqa: SLF001
    return bool(missing) and len(missing) >= WEAK_UNKNOWN_SHARE * words


def gibberish(count: int) -> list[str]:
    """``count`` requests of made-up words (fixed seed): what no catalogue can answer ("xyzzy plugh frobnicate")."""
    rng = random.Random(7)
    vowels, consonants = "aeiouy", "bcdfghjklmnpqrstvwxz"

    def word() -> str:
        return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))

    return [" ".join(word() for _ in range(rng.randint(1, 4))) for _ in range(count)]


def prepare_own(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The example catalogue's own tool examples as labelled requests (``own``): its author wrote them, one a tool.

    Each example's description ("Upload a monthly revenue CSV for the finance team.") asks for its tool; asked of the
    example build, with each query's own train/held-out split. Only with OWN_EXAMPLES (``--own-examples``).
    """
    by_name = {d["name"]: d for d in data}
    if not OWN_EXAMPLES or "example" not in by_name:
        return []
    base = by_name["example"]
    catalog, _ = compile_catalog(BENCH.parent / "catalog_src")
    queries = list(
        dict.fromkeys(
            (str(ex["description"]), tool.id)
            for tool in tool_order(catalog)
            for ex in tool.examples
            if ex.get("description")
        )
    )
    asked = [(text, {tool_id}) for text, tool_id in queries]
    searcher, tier, ids = open_semantic(base["out"])
    rows = query_rows(searcher, tier, ids, base["names"], asked)
    print(f"own: the example catalogue's tool examples, {len(rows)} requests", flush=True)
    return [{**base, "name": "own", "built": "example", "rows": rows, "queries": asked, "apart": set()}]


def prepare_foreign(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Requests the catalogue cannot answer, for the weak bar: other sets' queries, and made-up words.

    Against each of FOREIGN_TARGETS (small developer catalogues, as users build): FOREIGN_SAMPLE queries of each of
    FOREIGN_SOURCES (about other things: restaurants, maths, travel) and the gibberish requests. Each keeps its own
    query's train/held-out split, so the bar is chosen on train requests only.
    """
    by_name = {d["name"]: d for d in data}
    asked = [(text, set[str]()) for text in gibberish(FOREIGN_GIBBERISH)]
    for source in FOREIGN_SOURCES:
        if source in by_name:
            picked = random.Random(1).sample(by_name[source]["queries"], FOREIGN_SAMPLE)
            asked += [(text, set[str]()) for text, _ in picked]
    out = []
    for target in FOREIGN_TARGETS:
        if target not in by_name:
            continue
        searcher, tier, ids = open_semantic(by_name[target]["out"])
        rows = query_rows(searcher, tier, ids, by_name[target]["names"], asked)
        print(f"foreign requests against {target}: {len(rows)}, {sum(r['unknown'] for r in rows)} mostly unknown words")
        out.append({"name": target, "rows": rows, "names": by_name[target]["names"]})
    return out


def head_of(row: dict[str, Any], kind: str, scores: list[float]) -> list[tuple[int, float]]:
    """The first hybrid.NAME_DEPTH candidates by ``scores`` (ties by doc id, as the reader sorts): (doc, score)."""
    cands = row[kind][0]
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], cands[i]))
    return [(cands[i], scores[i]) for i in order[: hybrid.NAME_DEPTH]]


def ranked_by(
    row: dict[str, Any], kind: str, scores: list[float], names: list[str], name: tuple[float, ...]
) -> list[str]:
    """The top 10 names of one query by ``scores`` with the learned name weights on the head (as the reader does)."""
    return [names[doc] for doc, _ in head_rescored(row, kind, scores, name)]


def head_rescored(
    row: dict[str, Any], kind: str, scores: list[float], name: tuple[float, ...]
) -> list[tuple[int, float]]:
    """The top 10 (doc, relevance) of one query by ``scores``, the name weights applied (as the reader)."""
    head = []
    for doc, score in head_of(row, kind, scores):
        m = row["match"].get(doc, 0.0)
        lift = name[0] * m + (name[1] if m >= hybrid.NAME_MIN else 0.0)
        head.append((doc, 1.0 / (1.0 + math.exp(-(fusion_model.logit(score) + lift))) if lift else score))
    head.sort(key=lambda h: (-h[1], h[0]))
    return head


def hand_scores(row: dict[str, Any], kind: str) -> list[float]:
    """Main's relevance of each candidate (hybrid.fuse with FUSION["onnx"]; the lexical score alone for ``lex``)."""
    names = feature_names(kind)
    lex, cos = names.index("lex"), names.index("cos") if kind == "sem" else -1
    weak, strong, gate, floor = hybrid.FUSION["onnx"]
    out = []
    for x in row[kind][1]:
        if kind == "lex":
            out.append(x[lex])
            continue
        a = weak if x[names.index("lex_best")] < gate else strong
        out.append(min(1.0, (1 - a) * x[lex] + (a * x[cos] if x[cos] >= floor else 0.0)))
    return out


def calibrate(
    rows: list[tuple[dict[str, Any], float]], kind: str, weights: list[float], bias: float
) -> tuple[list[float], float, float]:
    """The model rescaled so its relevance is on main's scale: ``sigmoid(a · s + c + d · q)`` fitted to main's.

    Returns the rescaled (weights, bias) and ``a`` (what the name weights, fitted on the model's own scale, are
    multiplied by).

    Least squares over each train query's first hybrid.NAME_DEPTH candidates by the model, ``a > 0``. ``q`` are the
    features that are the same for every candidate of a query (QUERY_FEATURES: the best lexical score, the query's
    length, its known-word share): their terms move a query's relevances together, so no query's order changes, but
    the scale follows main's query by query and not only on average (the ranking features lift the requests with
    unknown words, whose level the weak bar reads). find_tool's cut (MIN_RELEVANCE, MIN_RELATIVE) was chosen on
    main's scale and keeps its meaning; the weak bar is chosen again on this one (:func:`weak_bar`).
    """
    import numpy as np  # noqa: PLC0415
    from scipy.optimize import minimize  # noqa: PLC0415 - scikit-learn's own dependency

    names = feature_names(kind)
    per_query = [names.index(n) for n in QUERY_FEATURES]
    ss, ts, ws, qs = [], [], [], []
    for r, qw in rows:
        x = np.asarray(r[kind][1], dtype=np.float64)
        if not len(x):
            continue
        s = x @ np.asarray(weights) + bias
        top = np.argsort(-s, kind="stable")[: hybrid.NAME_DEPTH]
        ss.append(s[top])
        ts.append(np.asarray(hand_scores(r, kind))[top])
        ws.append(np.full(len(top), qw / len(top)))
        qs.append(x[top][:, per_query])
    s_all, t_all, w_all, q_all = np.concatenate(ss), np.concatenate(ts), np.concatenate(ws), np.concatenate(qs)
    mean, std = float(s_all.mean()), float(s_all.std()) or 1.0
    u = (s_all - mean) / std  # standardised, so the sigmoid does not start saturated
    q_mean, q_std = q_all.mean(axis=0), q_all.std(axis=0)
    q_std[q_std == 0] = 1.0
    qz = (q_all - q_mean) / q_std
    target = np.clip(t_all, 0.01, 0.99)
    slope, intercept = np.polyfit(u, np.log(target / (1 - target)), 1, w=np.sqrt(w_all))  # a first guess

    def loss(v: Any) -> float:
        p = 1.0 / (1.0 + np.exp(-np.clip(v[0] * u + v[1] + qz @ v[2:], -50, 50)))
        return float((w_all * (p - t_all) ** 2).sum())

    start = np.asarray([max(float(slope), 0.01), float(intercept), *([0.0] * len(per_query))])
    bounds = [(1e-3, 50.0), (-50.0, 50.0), *([(-50.0, 50.0)] * len(per_query))]
    found = minimize(loss, start, method="L-BFGS-B", bounds=bounds)
    v = found.x
    a = float(v[0]) / std
    extra = v[2:] / q_std  # per raw query feature
    c = float(v[1]) - float(v[0]) * mean / std - float((v[2:] * q_mean / q_std).sum())
    out = [a * w for w in weights]
    for i, e in zip(per_query, extra, strict=True):
        out[i] += float(e)
    return out, a * bias + c, a


def hand_ranked(row: dict[str, Any], names: list[str]) -> list[str]:
    """Main's ranking of one query: the hand-tuned fusion's top 10 with its name boost (hybrid.name_boosted)."""
    return [names[doc] for doc, _ in hand_head(row)]


def hand_head(row: dict[str, Any]) -> list[tuple[int, float]]:
    """Main's top 10 (doc, relevance) of one query: the hand-tuned fusion with its name boost."""
    head = []
    for doc, score in row["hand"]:
        m = row["match"].get(doc, 0.0)
        head.append((doc, min(1.0, score + hybrid.NAME_BOOST * m) if m >= hybrid.NAME_MIN else score))
    head.sort(key=lambda h: (-h[1], h[0]))
    return head


def fit_name(
    rows: list[tuple[dict[str, Any], float]], kind: str, weights: list[float], bias: float
) -> tuple[float, float]:
    """The name weights (both >= 0): a pairwise logistic fit over each train query's head, the stage-1 logit fixed."""
    import numpy as np  # noqa: PLC0415
    from scipy.optimize import minimize  # noqa: PLC0415 - scikit-learn's own dependency

    base, feats, qws = [], [], []
    for (r, qw), scores in zip(rows, score_rows([r for r, _ in rows], kind, weights, bias), strict=True):
        head = head_of(r, kind, scores)
        gold = {d for d, g in zip(r[kind][0], r[kind][2], strict=True) if g}
        if not gold & {d for d, _ in head}:
            continue
        z = np.asarray([fusion_model.logit(s) for _, s in head])
        if not r["match"]:  # no content word: the reader applies no name stage
            continue
        m = np.asarray([r["match"].get(d, 0.0) for d, _ in head])
        f = np.stack([m, (m >= hybrid.NAME_MIN).astype(float)], axis=1)
        y = np.asarray([d in gold for d, _ in head])
        if y.all():
            continue
        dz = (z[y][:, None] - z[~y][None, :]).reshape(-1)
        df = (f[y][:, None, :] - f[~y][None, :, :]).reshape(-1, 2)
        base.append(dz)
        feats.append(df)
        qws.append(np.full(len(dz), qw / len(dz)))
    if not base:
        return 0.0, 0.0
    dz_all, df_all, w_all = np.concatenate(base), np.concatenate(feats), np.concatenate(qws)

    def loss(v: Any) -> tuple[float, Any]:
        t = dz_all + df_all @ v
        p = 1.0 / (1.0 + np.exp(np.clip(t, -50, 50)))  # = 1 - sigmoid(t)
        value = float((w_all * np.logaddexp(0.0, -t)).sum() + 0.01 * (v @ v))
        grad = -(w_all * p) @ df_all + 0.02 * v
        return value, grad

    found = minimize(loss, np.zeros(2), jac=True, method="L-BFGS-B", bounds=[(0.0, 20.0)] * 2)
    return float(found.x[0]), float(found.x[1])


def fit(rows: list[tuple[dict[str, Any], float]], kind: str, style: str, c: float) -> tuple[list[float], float]:
    """(weights, bias) in raw feature units, trained on ``rows`` (row, query weight) of candidates ``kind``."""
    import numpy as np  # noqa: PLC0415
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415

    xs = np.concatenate([np.asarray(r[kind][1], dtype=np.float64) for r, _ in rows if r[kind][1]])
    mean, std = xs.mean(axis=0), xs.std(axis=0)
    std[std == 0] = 1.0

    def z(r: dict[str, Any]) -> Any:
        return (np.asarray(r[kind][1], dtype=np.float64) - mean) / std

    if style == "point":
        xs_, ys, ws = [], [], []
        for r, qw in rows:
            y = np.asarray(r[kind][2], dtype=bool)
            if not y.any() or y.all():
                continue
            xs_.append(z(r))
            ys.append(y)
            ws.append(np.where(y, qw / y.sum(), qw / (~y).sum()))
        model = LogisticRegression(C=c, max_iter=2000)
        model.fit(np.concatenate(xs_), np.concatenate(ys), sample_weight=np.concatenate(ws))
        w, b = model.coef_[0], float(model.intercept_[0])
    else:
        diffs, ws = [], []
        for r, qw in rows:
            y = np.asarray(r[kind][2], dtype=bool)
            if not y.any() or y.all():
                continue
            x = z(r)
            pos, neg = x[y], x[~y]
            d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, x.shape[1])
            diffs.append(d)
            ws.append(np.full(len(d), qw / len(d)))
        d = np.concatenate(diffs)
        wts = np.concatenate(ws)
        model = LogisticRegression(C=c, max_iter=2000, fit_intercept=False)
        model.fit(np.concatenate([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], sample_weight=np.r_[wts, wts])
        w = model.coef_[0]
        w, b = model.coef_[0], 0.0
    raw = w / std
    return [float(v) for v in raw], float(b - (raw * mean).sum())


def score_rows(rows: list[dict[str, Any]], kind: str, weights: list[float], bias: float) -> list[list[float]]:
    """The learned relevance of every candidate of every row (the reader's formula)."""
    names = feature_names(kind)
    model = fusion_model.Model(names, weights, bias, None)
    return [[model.score(x) for x in r[kind][1]] for r in rows]


def set_weights(data: list[dict[str, Any]], balanced: bool) -> dict[str, float]:
    """Each set's weight per query: 1, or (``balanced``) each set's train queries summing to one share."""
    out = {}
    for d in data:
        n = sum(1 for r in d["rows"] if r["part"] == "train")
        out[d["name"]] = 1.0 / max(1, n) * 1000 if balanced else 1.0
    return out


def fold_of(query: str) -> int:
    """A train query's cross-validation fold (sha256 of the query, another slice than the split's)."""
    return int(hashlib.sha256(query.encode("utf-8")).hexdigest()[8:16], 16) % FOLDS


def staged(
    rows: list[tuple[dict[str, Any], float]], kind: str, style: str, c: float
) -> tuple[list[float], float, tuple[float, float]]:
    """The first stage, its name weights (both on the model's own logit scale), then both rescaled to main's scale."""
    w, b = fit(rows, kind, style, c)
    name = fit_name(rows, kind, w, b)
    w, b, a = calibrate(rows, kind, w, b)
    return w, b, (a * name[0], a * name[1])


def cross_validate(
    data: list[dict[str, Any]], kind: str, style: str, c: float, balanced: bool
) -> tuple[list[float], list[float]]:
    """Each set's CV R@1 and MRR (train queries only, 5 folds)."""
    weights = set_weights(data, balanced)
    got: dict[str, list[tuple[list[str], set[str]]]] = {d["name"]: [] for d in data}
    for fold in range(FOLDS):
        train = [
            (r, weights[d["name"]])
            for d in data
            for r in d["rows"]
            if r["part"] == "train" and fold_of(r["query"]) != fold
        ]
        w, b, name = staged(train, kind, style, c)
        for d in data:
            rows = [r for r in d["rows"] if r["part"] == "train" and fold_of(r["query"]) == fold]
            for r, scores in zip(rows, score_rows(rows, kind, w, b), strict=True):
                got[d["name"]].append((ranked_by(r, kind, scores, d["names"], name), r["gold"]))
    r1s, mrrs = [], []
    for pairs in got.values():
        queries = [("", gold) for _, gold in pairs]
        r1, _, mrr = metrics([ranked for ranked, _ in pairs], queries, list(range(len(pairs))))
        r1s.append(r1)
        mrrs.append(mrr)
    return r1s, mrrs


def main_on_train(data: list[dict[str, Any]], kind: str) -> list[float]:
    """Main's R@1 on each set's train queries: its hand-tuned fusion (``sem``) or the lexical ranking (``lex``)."""
    out = []
    for d in data:
        rows = [r for r in d["rows"] if r["part"] == "train"]
        queries = [(r["query"], r["gold"]) for r in rows]
        if kind == "sem":
            ranked = [hand_ranked(r, d["names"]) for r in rows]
        else:
            ranked = [[d["names"][doc] for doc in r["lex"][0][:10]] for r in rows]
        out.append(metrics(ranked, queries, list(range(len(queries))))[0])
    return out


def train(data: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The grid point whose worst set gains most over main in CV R@1 (then mean R@1, MRR), refitted on all train.

    The gate for shipping is "R@1 not lower on any set", so the choice is max-min over the sets, not the mean.
    """
    base = main_on_train(data, kind)
    print(f"  main on the train queries ({kind}): R@1 " + ", ".join(f"{v:.4f}" for v in base), flush=True)
    results = []
    for style in ("point", "pair"):
        for c in GRID_C:
            for balanced in (False, True):
                r1s, mrrs = cross_validate(data, kind, style, c, balanced)
                worst = min(r - b for r, b in zip(r1s, base, strict=True))
                key = (round(worst, 6), statistics.mean(r1s), statistics.mean(mrrs))
                results.append((key, style, c, balanced))
                print(
                    f"  {kind} {style} C={c} balanced={balanced}: CV R@1 "
                    + ", ".join(f"{v:.4f}" for v in r1s)
                    + f" (worst gain {worst:+.4f}, mean {key[1]:.4f}, MRR {key[2]:.4f})",
                    flush=True,
                )
    key, style, c, balanced = max(results, key=lambda item: item[0])
    weights = set_weights(data, balanced)
    rows = [(r, weights[d["name"]]) for d in data for r in d["rows"] if r["part"] == "train"]
    w, b, name = staged(rows, kind, style, c)
    names = feature_names(kind)
    print(
        f"  chosen {kind}: {style} C={c} balanced={balanced} {key}: weights {[round(v, 3) for v in w]},"
        f" bias {b:.3f}, name {[round(v, 3) for v in name]}",
        flush=True,
    )
    return {
        "features": list(names),
        "weights": [round(v, 6) for v in w],
        "bias": round(b, 6),
        "name": [round(name[0], 6), round(name[1], 6)],
        "trained": {
            "style": style,
            "C": c,
            "balanced_sets": balanced,
            "cv_worst_gain_r1": round(key[0], 4),
            "cv_r1": round(key[1], 4),
            "cv_mrr": round(key[2], 4),
        },
    }


def offline(data: list[dict[str, Any]], kind: str, entry: dict[str, Any]) -> None:
    """The learned model's held-out figures from the kept candidates, beside the hand-tuned fusion's."""
    for d in data:
        held = [i for i, r in enumerate(d["rows"]) if r["part"] == "test"]
        scored = score_rows(d["rows"], kind, entry["weights"], entry["bias"])
        name = (entry["name"][0], entry["name"][1])
        learned = [ranked_by(r, kind, s, d["names"], name) for r, s in zip(d["rows"], scored, strict=True)]
        queries = [(r["query"], r["gold"]) for r in d["rows"]]
        a = metrics(learned, queries, held)
        line = f"  {d['name']}: learned {kind} held out R@1 {a[0]:.3f} R@5 {a[1]:.3f} MRR {a[2]:.3f}"
        if kind == "sem":
            h = metrics([hand_ranked(r, d["names"]) for r in d["rows"]], queries, held)
            line += f" | main's fusion R@1 {h[0]:.3f} R@5 {h[1]:.3f} MRR {h[2]:.3f}"
        print(line, flush=True)


def outcomes(
    data: list[dict[str, Any]], foreign: list[dict[str, Any]], kind: str, entry: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Per request (labelled and foreign): its split, group, whether most words are unknown, find_tool's best relevance.

    ``entry`` None: main's fusion (the hand-tuned one with its name boost; the lexical score for ``lex``). ``best``
    is None when find_tool shows nothing (no candidate, or none at MIN_RELEVANCE): that answer says so by itself.
    """
    made_up = set(gibberish(FOREIGN_GIBBERISH))
    out = []
    for d, labelled in [*((d, True) for d in data), *((d, False) for d in foreign)]:
        rows = d["rows"]
        if entry is None:
            heads = [
                hand_head(r)
                if kind == "sem"
                else [(doc, x[0]) for doc, x in zip(r["lex"][0][:10], r["lex"][1][:10], strict=True)]
                for r in rows
            ]
        else:
            name = (entry["name"][0], entry["name"][1])
            scored = score_rows(rows, kind, entry["weights"], entry["bias"])
            heads = [head_rescored(r, kind, sc, name) for r, sc in zip(rows, scored, strict=True)]
        for r, head in zip(rows, heads, strict=True):
            best = head[0][1] if head and head[0][1] >= MIN_RELEVANCE else None
            group = d["name"] if labelled else "made-up words" if r["query"] in made_up else "other sets"
            out.append(
                {
                    "part": r["part"],
                    "query": r["query"],
                    "group": group,
                    "labelled": labelled,
                    "unknown": r["unknown"],
                    "best": best,
                    "top1": bool(head) and d["names"][head[0][0]] in r["gold"],
                    "top5": any(d["names"][doc] in r["gold"] for doc, _ in head[:5]),
                }
            )
    return out


def said_so(o: dict[str, Any], bar: float) -> bool:
    """Whether find_tool says it has no good match: nothing shown, or most words unknown and the best under ``bar``."""
    return o["best"] is None or (o["unknown"] and o["best"] < bar)


def choose_weak(outs: list[dict[str, Any]]) -> tuple[float, float]:
    """The weak bar on the train requests: the fewest answered requests called weak and unanswerable ones not.

    Minimises (labelled train requests whose right tool is first yet called weak) / (all such) + (foreign train
    requests not called weak) / (all foreign): each kind of error weighs the same whatever the counts. The bar is the
    median of the candidate bars (midpoints between the relevances seen) that reach the minimum. Returns (bar, cost).
    """
    train = [o for o in outs if o["part"] == "train"]
    answered = [o for o in train if o["labelled"] and o["top1"]]
    foreign = [o for o in train if not o["labelled"]]
    seen = sorted({o["best"] for o in train if o["unknown"] and o["best"] is not None})
    bars = [0.0, *((a + b) / 2 for a, b in itertools.pairwise(seen)), 1.0]

    def cost(bar: float) -> float:
        wrong = sum(said_so(o, bar) for o in answered) / max(1, len(answered))
        missed = sum(not said_so(o, bar) for o in foreign) / max(1, len(foreign))
        return wrong + missed

    costs = [cost(bar) for bar in bars]
    low = min(costs)
    best = [bar for bar, c in zip(bars, costs, strict=True) if c <= low + 1e-12]
    return round(best[len(best) // 2], 4), low


def weak_lines(outs: list[dict[str, Any]], bar: float, part: str) -> list[str]:
    """Per group, on ``part``: right-first answers called weak, right-in-5 called weak; foreign ones not called weak."""
    lines = []
    for group in dict.fromkeys(o["group"] for o in outs):
        mine = [o for o in outs if o["group"] == group and o["part"] == part]
        if mine and mine[0]["labelled"]:
            first = [o for o in mine if o["top1"]]
            five = [o for o in mine if o["top5"]]
            missed = [o for o in mine if not o["top5"]]
            lines.append(
                f"{group}: right tool first, called weak {sum(said_so(o, bar) for o in first)} of {len(first)};"
                f" right tool in the top 5, called weak {sum(said_so(o, bar) for o in five)} of {len(five)};"
                f" right tool not in the top 5, called weak {sum(said_so(o, bar) for o in missed)} of {len(missed)}"
            )
        elif mine:
            lines.append(f"{group}: NOT called weak {sum(not said_so(o, bar) for o in mine)} of {len(mine)}")
    return lines


def weak_bar(data: list[dict[str, Any]], foreign: list[dict[str, Any]], kind: str, entry: dict[str, Any]) -> float:
    """The learned model's weak bar (:func:`choose_weak` on the train requests), printed beside main's held out."""
    hand = outcomes(data, foreign, kind, None)
    learned = outcomes(data, foreign, kind, entry)
    hand_bar, hand_cost = choose_weak(hand)
    bar, cost = choose_weak(learned)
    print(
        f"  weak bar ({kind}): learned {bar} (train cost {cost:.4f}); main's rule on main's scale would pick"
        f" {hand_bar} (cost {hand_cost:.4f}), main ships {WEAK_RELEVANCE}",
        flush=True,
    )
    for label, outs, at in (("main", hand, WEAK_RELEVANCE), ("learned", learned, bar)):
        for part in ("train", "test"):
            for line in weak_lines(outs, at, part):
                print(f"    {label} at {at}, {'held out' if part == 'test' else 'train'}: {line}", flush=True)
    return bar


#: The weak rules ``--weak-rules`` measures against the one bar (docs/search.md, "Stacked: minilm-tools under the
#: learned fusion", the weak rule): (name, the share a request's unknown words must reach, that share's threshold, the
#: feature the bar moves with, the slopes tried). A request is weak when nothing is shown, or when its unknown share
#: reaches the threshold and its best hit scores under ``bar + slope · feature``; (bar, slope) minimise choose_weak's
#: cost on the train requests.
WEAK_RULES: tuple[tuple[str, str, float, str, tuple[float, ...]], ...] = (
    ("one bar (the shipped rule)", "words", 0.5, "none", (0.0,)),
    ("bar + s * unknown share", "words", 0.5, "unknown_share", tuple(i / 200 for i in range(-80, 81))),
    ("bar + s / words", "words", 0.5, "inv_words", tuple(i / 200 for i in range(-40, 81))),
    ("bar + s / known words", "words", 0.5, "inv_known", tuple(i / 200 for i in range(-40, 81))),
    ("bar + s * ln(words)", "words", 0.5, "log_words", tuple(i / 1000 for i in range(-60, 31))),
    ("bar + s * [first content word unknown]", "words", 0.5, "first_unknown", tuple(i / 200 for i in range(-40, 41))),
    ("bar + s * (best - second)", "words", 0.5, "gap", tuple(i / 20 for i in range(-40, 41))),
    ("bar + s * second / best", "words", 0.5, "ratio", tuple(i / 100 for i in range(-60, 61, 2))),
    ("bar + s / known idf", "words", 0.5, "inv_known_idf", tuple(i / 100 for i in range(-40, 41))),
    ("one bar, unknown share >= 0.45", "words", 0.45, "none", (0.0,)),
    ("one bar, idf-weighted unknown share >= 0.5", "idf", 0.5, "none", (0.0,)),
    (
        "bar + s / known idf, idf-weighted share >= 0.5",
        "idf",
        0.5,
        "inv_known_idf",
        tuple(i / 100 for i in range(-40, 41)),
    ),
)
#: The request no tool of the example catalogue answers that the weak rule is checked on (tests/reader/
#: test_search_quality.py pins it weak): reported, never fitted on.
WEAK_PROBE = "zip the reports"


def rule_inputs(searcher: Searcher, query: str, head: list[float]) -> dict[str, float]:
    """What the weak rules of WEAK_RULES read of one request: its words, unknown words, their idf, the head's scores."""
    missing, words = searcher._unknown_words(query)  # noqa: SLF001
    idf = searcher.term_idf(query)
    unseen = math.log(1 + searcher._part("tools").n_docs) + 1.0  # noqa: SLF001
    total = sum(idf.values()) or 1.0
    unknown_idf = sum(v for v in idf.values() if v >= unseen)
    share = searcher.unknown_share(query) if missing else 0.0  # the reader's (Searcher.weak_words)
    tokens = searcher._content_tokens(query)  # noqa: SLF001 - the words the reader's weak rule reads
    best, second = (head[0], head[1]) if len(head) > 1 else (head[0] if head else 0.0, 0.0)
    return {
        "words": len(missing) / words if missing else 0.0,
        "idf": share,
        "none": 0.0,
        "unknown_share": len(missing) / words,
        "inv_words": 1 / words,
        "inv_known": 1 / max(1, words - len(missing)),
        "log_words": math.log(words),
        "first_unknown": float(bool(tokens) and tokens[0] in missing),
        "gap": best - second,
        "ratio": second / best if best > 0 else 0.0,
        "inv_known_idf": 1 / max(1.0, total - unknown_idf),
    }


def rule_outcomes(
    data: list[dict[str, Any]], foreign: list[dict[str, Any]], kind: str, entry: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """:func:`outcomes` with each request's :func:`rule_inputs` (``x``), and WEAK_PROBE's (part ``probe``) last."""
    by_name = {d["name"]: d for d in data}
    out = outcomes(data, foreign, kind, entry)
    heads = [*(d for d in data), *(by_name[d["name"]] | {"rows": d["rows"]} for d in foreign)]
    done = 0
    for d in heads:
        searcher = Searcher(*open_build(d["out"]))
        for r, o in zip(d["rows"], out[done : done + len(d["rows"])], strict=True):
            o["x"] = rule_inputs(searcher, r["query"], head_scores(r, kind, entry))
        done += len(d["rows"])
    if "example" not in by_name:
        return out
    example = by_name["example"]
    searcher, tier, ids = open_semantic(example["out"])
    row = query_rows(searcher, tier, ids, example["names"], [(WEAK_PROBE, set[str]())])[0]
    head = head_scores(row, kind, entry)
    best = head[0] if head and head[0] >= MIN_RELEVANCE else None
    out.append(
        {"part": "probe", "labelled": False, "best": best, "unknown": row["unknown"], "top1": False, "top5": False}
        | {"group": WEAK_PROBE, "x": rule_inputs(searcher, WEAK_PROBE, head)}
    )
    return out


def head_scores(row: dict[str, Any], kind: str, entry: dict[str, Any] | None) -> list[float]:
    """The relevances of one request's top 10 as find_tool ranks them (main's fusion when ``entry`` is None)."""
    if entry is None:
        return [s for _, s in hand_head(row)] if kind == "sem" else [x[0] for x in row["lex"][1][:10]]
    scores = score_rows([row], kind, entry["weights"], entry["bias"])[0]
    return [s for _, s in head_rescored(row, kind, scores, (entry["name"][0], entry["name"][1]))]


def rule_weak(
    o: dict[str, Any], rule: tuple[str, str, float, str, tuple[float, ...]], bar: float, slope: float
) -> bool:
    """Whether ``rule`` at (bar, slope) calls the request weak: nothing shown, or unknown enough and under the bar."""
    _, share, threshold, feature, _ = rule
    if o["best"] is None:
        return True
    return o["x"][share] >= threshold - 1e-9 and o["best"] < bar + slope * o["x"][feature]


def fit_rule(
    outs: list[dict[str, Any]], rule: tuple[str, str, float, str, tuple[float, ...]], limit: float | None = None
) -> tuple[float, float]:
    """(bar, slope) of ``rule`` minimising choose_weak's cost on the train requests of ``outs`` (ties: the median).

    ``limit``: instead, the fewest unanswerable requests not called weak among the (bar, slope) that call at most this
    share of the right-first answers weak (the shipped bar's share: "no more right answers called weak than today").
    """
    import bisect  # noqa: PLC0415 - this report alone

    _, share, threshold, feature, slopes = rule
    train = [o for o in outs if o["part"] == "train"]
    answered = [o for o in train if o["labelled"] and o["top1"]]
    unanswerable = [o for o in train if not o["labelled"]]
    found = []
    for slope in slopes:
        values = []
        for group in (answered, unanswerable):
            eligible = [o for o in group if o["best"] is not None and o["x"][share] >= threshold - 1e-9]
            values.append(sorted(o["best"] - slope * o["x"][feature] for o in eligible))
        none_a = sum(o["best"] is None for o in answered)
        none_u = sum(o["best"] is None for o in unanswerable)
        seen = sorted({*values[0], *values[1]})
        for bar in [-1.0, *((a + b) / 2 for a, b in itertools.pairwise(seen)), 2.0]:
            wrong = (none_a + bisect.bisect_left(values[0], bar)) / max(1, len(answered))
            missed = (len(unanswerable) - none_u - bisect.bisect_left(values[1], bar)) / max(1, len(unanswerable))
            if limit is None:
                found.append((round(wrong + missed, 10), slope, bar))
            elif wrong <= limit + 1e-12:
                found.append((round(missed, 10), slope, bar))
    low = min(f[0] for f in found)
    best = [f for f in found if f[0] <= low + 1e-12]
    _, slope, bar = best[len(best) // 2]
    return bar, slope


def rule_counts(outs: list[dict[str, Any]], rule: Any, bar: float, slope: float) -> tuple[int, int, int, int]:
    """(right-first answers called weak, right-first answers, unanswerable not called weak, unanswerable)."""
    answered = [o for o in outs if o["labelled"] and o["top1"]]
    unanswerable = [o for o in outs if not o["labelled"]]
    return (
        sum(rule_weak(o, rule, bar, slope) for o in answered),
        len(answered),
        sum(not rule_weak(o, rule, bar, slope) for o in unanswerable),
        len(unanswerable),
    )


def weak_rules(outs: list[dict[str, Any]], label: str, shipped: float, rise: float = 0.0) -> None:
    """Each of WEAK_RULES: its 5-fold CV cost on the train requests, its fit on all of them, held out, WEAK_PROBE.

    First the shipped rule as it is (``shipped + rise / words``; main's 0.35 was not chosen by this fit), then each rule
    fitted on the train requests twice: by the cost, and (:func:`fit_rule`'s ``limit``) calling no larger share of the
    right-first train answers weak than the one bar fitted by the cost does. The CV cost is that of the choice rule's own folds (pooled counts: right-first answers
    called weak / unanswerable requests not called weak, in brackets).
    """
    train = [o for o in outs if o["part"] == "train"]
    held = [o for o in outs if o["part"] == "test"]
    probe = next(o for o in outs if o["part"] == "probe")
    for o in train:
        o["fold"] = fold_of(o["query"])
    one = WEAK_RULES[0]
    w, a, m, u = rule_counts(held, WEAK_PER_WORD_RULE, shipped, rise)
    t = rule_counts(train, WEAK_PER_WORD_RULE, shipped, rise)
    at = shipped + rise * probe["x"]["inv_words"]
    print(
        f"| {label} | the shipped rule, {shipped} + {rise} / words (not refitted) | {t[0] / t[1] + t[2] / t[3]:.4f}"
        f" (in sample) | {shipped} / {rise:+} | {w} of {a} | {m} of {u} | {probe['best']:.4f} against {at:.4f}:"
        f" {'weak' if rule_weak(probe, WEAK_PER_WORD_RULE, shipped, rise) else 'NOT weak'} |",
        flush=True,
    )
    limit = rule_counts(train, one, fit_rule(train, one)[0], 0.0)[0] / t[1]
    for rule in WEAK_RULES:
        for bound in (None, limit):
            totals = [0, 0, 0, 0]
            for fold in range(FOLDS):
                bar, slope = fit_rule([o for o in train if o["fold"] != fold], rule, bound)
                counts = rule_counts([o for o in train if o["fold"] == fold], rule, bar, slope)
                totals = [a + b for a, b in zip(totals, counts, strict=True)]
            bar, slope = fit_rule(train, rule, bound)
            w, a, m, u = rule_counts(held, rule, bar, slope)
            at = bar + slope * probe["x"][rule[3]]
            how = "cost" if bound is None else f"at most {limit:.4f} weak"
            print(
                f"| {label} | {rule[0]} ({how}) | {totals[0] / totals[1] + totals[2] / totals[3]:.4f}"
                f" ({totals[0]} / {totals[2]}) | {bar:.4f} / {slope:+.3f} | {w} of {a} | {m} of {u} |"
                f" {probe['best']:.4f} against {at:.4f}: {'weak' if rule_weak(probe, rule, bar, slope) else 'NOT weak'} |",
                flush=True,
            )


def idf_rule(
    threshold: float, rises: tuple[float, ...] = WEAK_RULES[2][4]
) -> tuple[str, str, float, str, tuple[float, ...]]:
    """The reader's weak rule at ``threshold``: the idf-weighted unknown share, the best under bar + s / words."""
    return (f"bar + s / words, idf-weighted share >= {threshold}", "idf", threshold, "inv_words", rises)


#: The weak rule the reader applies under a learned fusion, whose bar the weights carry (``Searcher.weak_words``): the
#: query's unknown words carry at least WEAK_LEARNED_SHARE of its idf (``Searcher.unknown_share``) and the best hit
#: scores under a bar that rises by ``weak_per_word / words`` for a query of ``words`` content words
#: (``Searcher.weak_bar``). The hand fusion's: WEAK_UNKNOWN_SHARE and WEAK_RELEVANCE, no rise.
WEAK_PER_WORD_RULE = idf_rule(WEAK_LEARNED_SHARE)
#: The rule before the seventh session: half the words (by count) unknown, the same bar (WEAK_RULES' "bar + s / words").
WORD_SHARE_RULE = WEAK_RULES[2]
#: Each ranking's weak bar and rise under the rule before (:data:`WORD_SHARE_RULE`), which the idf-weighted rule
#: replaced in the seventh session: its right-first train answers called weak are the new rule's limit
#: (:func:`weak_thresholds`). "hand": the hand fusion's and the lexical score's WEAK_RELEVANCE then.
WEAK_BEFORE = {
    "minilm-tools": (0.287572, 0.055),
    "minilm-onnx": (0.2566, 0.0),
    "lexical": (0.3188, 0.0),
    "hand": (0.35, 0.0),
}
#: The idf-weighted shares tried as the weak rule's threshold (:func:`weak_thresholds`).
WEAK_THRESHOLDS = tuple(sorted({*(i / 20 for i in range(2, 17)), *(i / 100 for i in range(51, 65))}))
#: The example catalogue's seed requests (catalog_src/evals/seeds.yaml): a weak rule may not newly call one weak.
SEEDS_FILE = BENCH.parent / "catalog_src" / "evals" / "seeds.yaml"


def weak_thresholds(
    outs: list[dict[str, Any]], label: str, shipped: float, rise: float, *, fixed: bool = False, pinned: bool = False
) -> dict[float, int]:
    """The idf-weighted share's threshold chosen on the train requests, each tried with its bar fitted there.

    The limit is the share of right-first train answers the rule before (:data:`WORD_SHARE_RULE` at ``shipped`` +
    ``rise`` / words) calls weak: for each threshold, (bar, rise) are :func:`fit_rule`'s fewest unanswerable train
    requests not called weak within it (``fixed``: the bar stays ``shipped`` + ``rise`` / words, the hand fusion's
    0.35; a refitted bar is printed too). Admissible: within the limit, no seed request (SEEDS_FILE) newly called
    weak and, when ``pinned`` (the default tier's model: tests/reader/test_search_quality.py pins it), WEAK_PROBE
    called weak. Of those, this ranking's choice is the one missing the fewest unanswerable train requests (ties:
    fewer right-first called weak, then the nearest to 0.5). Printed per threshold: the fit, its 5-fold CV counts
    on the train requests, the seeds newly weak, the train and held-out counts, and WEAK_PROBE's verdict. Returns
    the admissible thresholds, each with its unanswerable train requests missed (``main`` chooses the hand
    rankings' one threshold from them).
    """
    train = [o for o in outs if o["part"] == "train"]
    held = [o for o in outs if o["part"] == "test"]
    probe = next(o for o in outs if o["part"] == "probe")
    for o in train:
        o["fold"] = fold_of(o["query"])
    seeds = {str(e["query"]) for e in yaml.safe_load(SEEDS_FILE.read_text(encoding="utf-8"))["queries"]}
    seeded = [o for o in outs if o["group"] == "example" and o["query"] in seeds]
    seeded = [o for o in seeded if not rule_weak(o, WORD_SHARE_RULE, shipped, rise)]  # a seed weak before may stay
    before = rule_counts(train, WORD_SHARE_RULE, shipped, rise)
    limit = before[0] / before[1]
    w, a, m, u = rule_counts(held, WORD_SHARE_RULE, shipped, rise)
    print(
        f"| {label} | the rule before: half the words unknown | {shipped} / {rise:+} | - | - | {before[0]} of {before[1]}"
        f" / {before[2]} of {before[3]} | {w} of {a} / {m} of {u} |"
        f" {'weak' if rule_weak(probe, WORD_SHARE_RULE, shipped, rise) else 'NOT weak'} |",
        flush=True,
    )
    found = []
    for threshold, refit in itertools.product(WEAK_THRESHOLDS, (False, True) if fixed else (True,)):
        rule = idf_rule(threshold, (rise,))  # the rise kept: the bar alone is fitted
        cv = [0, 0, 0, 0]
        for fold in range(FOLDS):
            part = [o for o in train if o["fold"] != fold]
            bar, slope = fit_rule(part, rule, limit) if refit else (shipped, rise)
            counts = rule_counts([o for o in train if o["fold"] == fold], rule, bar, slope)
            cv = [x + y for x, y in zip(cv, counts, strict=True)]
        bar, slope = fit_rule(train, rule, limit) if refit else (shipped, rise)
        bar, slope = round(bar, 6), round(slope, 6)
        t = rule_counts(train, rule, bar, slope)
        w, a, m, u = rule_counts(held, rule, bar, slope)
        seeds_weak = [o["query"] for o in seeded if rule_weak(o, rule, bar, slope)]
        admissible = (
            t[0] / t[1] <= limit + 1e-12 and not seeds_weak and (rule_weak(probe, rule, bar, slope) or not pinned)
        )
        if admissible and not (fixed and refit):
            found.append((t[2], t[0], abs(threshold - 0.5), threshold))
        print(
            f"| {label} | idf-weighted share >= {threshold}{', bar refitted' if fixed and refit else ''} |"
            f" {bar} / {slope:+} | {cv[0]} / {cv[2]} | seeds newly weak: {seeds_weak or 'none'} |"
            f" {t[0]} of {t[1]} / {t[2]} of {t[3]} | {w} of {a} / {m} of {u} |"
            f" {probe['best']:.4f} against {bar + slope * probe['x']['inv_words']:.4f}:"
            f" {'weak' if rule_weak(probe, rule, bar, slope) else 'NOT weak'} |",
            flush=True,
        )
    chosen = min(found)[3] if found else None
    print(f"| {label} | chosen on the train requests: {chosen} | | | | | | |", flush=True)
    return {f[3]: f[0] for f in found}


def weak_per_word(
    data: list[dict[str, Any]], foreign: list[dict[str, Any]], kind: str, entry: dict[str, Any], bar: float
) -> tuple[float, float]:
    """The weak bar and its per-word rise (``weak_per_word``), chosen on the train requests.

    The fewest unanswerable requests not called weak, among the (bar, rise) that call no larger share of the
    right-first answers weak than ``bar`` alone (choose_weak's). The one bar is among them (rise 0), so the train requests' right-first answers called weak never grow; printed
    with the held-out counts and WEAK_PROBE's verdict.
    """
    outs = rule_outcomes(data, foreign, kind, entry)
    train = [o for o in outs if o["part"] == "train"]
    wrong, answered, _, _ = rule_counts(train, WEAK_RULES[0], bar, 0.0)
    new_bar, rise = fit_rule(outs, WEAK_PER_WORD_RULE, wrong / max(1, answered))
    new_bar, rise = round(new_bar, 6), round(rise, 6)
    for part in ("train", "test"):
        for rule, at, slope in ((WEAK_RULES[0], bar, 0.0), (WEAK_PER_WORD_RULE, new_bar, rise)):
            w, a, m, u = rule_counts([o for o in outs if o["part"] == part], rule, at, slope)
            print(
                f"    {kind} {rule[0]} at {at} / {slope:+}, {part}: right first, called weak {w} of {a};"
                f" unanswerable, NOT called weak {m} of {u}",
                flush=True,
            )
    probe = [o for o in outs if o["part"] == "probe"]
    if probe:
        print(f"    {WEAK_PROBE!r}: {probe[0]['best']:.4f} against {new_bar + rise * probe[0]['x']['inv_words']:.4f}")
    return new_bar, rise


def through_reader(d: dict[str, Any], configs: list[tuple[Path, str]]) -> list[tuple[list[list[str]], list[float]]]:
    """Every query's top 10 by ``Searcher.rank_tools(limit=10)`` and its warm ms, for each (build, flag) of ``configs``.

    ``TOOLCAT_LEARNED_FUSION=0`` for main's fusion, ``all`` for the learned (the models are opt-in); one searcher per
    configuration, queried alternately, query by query, so all see the same machine load.
    """
    out: list[tuple[list[list[str]], list[float]]] = [([], []) for _ in configs]
    searchers = [Searcher(*open_build(build_dir)) for build_dir, _ in configs]
    flags = [flag for _, flag in configs]
    try:
        for flag, searcher in zip(flags, searchers, strict=True):
            os.environ["TOOLCAT_LEARNED_FUSION"] = flag
            searcher.rank_tools(d["queries"][0][0], limit=10)  # the model and vectors loaded before timing
        for text, _ in d["queries"]:
            for (ranked, times), flag, searcher in zip(out, flags, searchers, strict=True):
                os.environ["TOOLCAT_LEARNED_FUSION"] = flag
                started = time.perf_counter()
                hits = searcher.rank_tools(text, limit=10)
                times.append((time.perf_counter() - started) * 1000)
                ranked.append([d["back"].get(p["tool_id"], p["tool_id"]) for p, _, _ in hits])
    finally:
        os.environ.pop("TOOLCAT_LEARNED_FUSION", None)
    return out


def report(data: list[dict[str, Any]], keep: Path, against: bool = False) -> None:
    """The reader's figures with the learned fusion and with main's, per tier and set, in one run.

    Each (tier, set) is ranked with main's fusion and the learned one alternately, query by query, so both see the
    same machine load; the warm p50 is per query, after one query that loads the model and vectors. ``against``:
    the tiers are BASE_EMBEDDER's build and EMBEDDER's, all four rankings alternated in one pass (the stacked
    comparison, docs/search.md "Stacked: minilm-tools under the learned fusion"); else EMBEDDER's and the lexical tier.
    """
    header = [
        "set (queries, held out, no shared word all / held out)",
        "tier",
        "fusion",
        "R@1 / R@5 / MRR (all)",
        "R@1 / R@5 / MRR (held out)",
        "no shared word R@1 / R@5 (all)",
        "no shared word R@1 / R@5 (held out)",
        "warm ms p50",
    ]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for d in data:
        queries = d["queries"]
        every = list(range(len(queries)))
        held = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
        apart_all = sorted(d["apart"])
        apart = [i for i in held if i in d["apart"]]
        label = f"{d['name']} ({len(queries)}, {len(held)}, {len(apart_all)} / {len(apart)})"
        built = d["built"]  # the set whose builds these are: "own" asks the example's
        tiers = [(EMBEDDER, d["out"]), ("lexical", keep / f"{built}-none")]
        if against:
            tiers = [(BASE_EMBEDDER, keep / f"{built}-{BASE_EMBEDDER}"), (EMBEDDER, d["out"])]
        configs = [(build_dir, flag) for _, build_dir in tiers for flag in ("0", "all")]
        results = through_reader(d, configs)
        for i, (ranked, times) in enumerate(results):
            tier, learned = tiers[i // 2][0], i % 2 == 1
            a, h = metrics(ranked, queries, every), metrics(ranked, queries, held)
            na, nh = metrics(ranked, queries, apart_all), metrics(ranked, queries, apart)
            print(
                f"| {label} | {tier} | {'learned' if learned else 'main (hand)'} |"
                f" {a[0]:.3f} / {a[1]:.3f} / {a[2]:.3f} | {h[0]:.3f} / {h[1]:.3f} / {h[2]:.3f} |"
                f" {na[0]:.3f} / {na[1]:.3f} | {nh[0]:.3f} / {nh[1]:.3f} | {statistics.median(times):.2f} |",
                flush=True,
            )
        if against:  # the stack's cost: EMBEDDER learned against BASE_EMBEDDER hand, query by query
            ratio = statistics.median(d_ / a_ for a_, d_ in zip(results[0][1], results[3][1], strict=True))
            print(f"| {label} | cost | {EMBEDDER} learned / {BASE_EMBEDDER} hand, per query p50 | {ratio:.3f} |")


def write_models(models: dict[str, dict[str, Any]], out: Path) -> None:
    """Save ``models`` into the weights file ``out``, replacing those tiers' entries and keeping the others'."""
    kept: dict[str, Any] = {}
    if out.is_file():
        kept = dict(json.loads(out.read_text(encoding="utf-8")).get("models", {}))
    doc = {"format": fusion_model.FORMAT, "trained_by": "bench/train_fusion.py", "models": {**kept, **models}}
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    fusion_model._models.cache_clear()  # noqa: SLF001


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-fusion-builds")
    parser.add_argument("--write", action="store_true", help=f"save the trained weights to {OUT}")
    parser.add_argument("--no-report", action="store_true", help="skip ranking through the reader")
    parser.add_argument(
        "--own-examples", action="store_true", help="train on the example catalogue's tool examples too"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="no training: rank through the reader with the committed weights"
    )
    parser.add_argument(
        "--embedder",
        default=BASE_EMBEDDER,
        help=f"build the sets with this embedder and train its model (another than {BASE_EMBEDDER}: that model alone)",
    )
    parser.add_argument(
        "--idf-coverage", action="store_true", help="train on coverage weighted by idf (fusion_model.IDF_COVERAGE)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=OUT,
        help="the weights file --write saves to (its other entries kept) and the report reads",
    )
    parser.add_argument(
        "--weak-rules",
        action="store_true",
        help="no training: measure the weak rules of WEAK_RULES on the committed model of --embedder and on main's fusion",
    )
    parser.add_argument(
        "--thresholds-only",
        action="store_true",
        help="with --weak-rules: only the idf-weighted share's thresholds (weak_thresholds), not every rule",
    )
    parser.add_argument(
        "--against",
        action="store_true",
        help=f"report {BASE_EMBEDDER}'s builds beside --embedder's, hand and learned fusion, in one pass",
    )
    args = parser.parse_args()
    global OWN_EXAMPLES, EMBEDDER, EXTRA_BUILDS, IDF_COVERAGE  # noqa: PLW0603 - the script's switches
    OWN_EXAMPLES = OWN_EXAMPLES or args.own_examples
    IDF_COVERAGE, out = args.idf_coverage, args.out.resolve()
    fusion_model.WEIGHTS_FILE = out  # the reader, in the report, ranks with the file written
    EMBEDDER = args.embedder
    EXTRA_BUILDS = (BASE_EMBEDDER,) if args.against else ("none",)
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    args.keep.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOOLCAT_CACHE_DIR", str(args.keep / "cache"))
    with tempfile.TemporaryDirectory(prefix="train-fusion-") as tmp_name:
        # the kept candidates, reused while the reader's feature code and the sets asked for are the same
        code = Path(fusion_model.__file__).read_bytes() + b"".join(
            inspect.getsource(f).encode() for f in (prepare, query_rows, unknown_enough, gibberish, prepare_foreign)
        )
        key = hashlib.sha256(code + f"{args.sets} {EMBEDDER} {IDF_COVERAGE}".encode()).hexdigest()[:16]
        cached = args.keep / f"prepared-{key}.pkl"
        if cached.is_file():
            data, foreign = pickle.loads(cached.read_bytes())  # noqa: S301 - our own file, written below
        else:
            data = [prepare(name, Path(tmp_name), args.keep) for name in args.sets.split(",") if name]
            foreign = prepare_foreign(data)
            cached.write_bytes(pickle.dumps((data, foreign)))
        data = [*data, *prepare_own(data)]
        if args.weak_rules:
            entry = json.loads(out.read_text(encoding="utf-8"))["models"][EMBEDDER]
            print(
                f"\n| fusion | rule | CV cost (train) | bar / slope | held out: right first, called weak |"
                f" held out: unanswerable, NOT called weak | {WEAK_PROBE!r}: best against its bar |"
            )
            print("|" + "---|" * 7)
            fusions = [
                (f"{EMBEDDER} learned", "sem", entry, entry["weak_relevance"], entry.get("weak_per_word", 0.0)),
                (f"{EMBEDDER} main (hand)", "sem", None, WEAK_RELEVANCE, 0.0),
            ]
            if EMBEDDER == BASE_EMBEDDER:  # the lexical tier's model and its hand ranking (the lexical score)
                lex = json.loads(out.read_text(encoding="utf-8"))["models"]["lexical"]
                fusions += [
                    ("lexical learned", "lex", lex, lex["weak_relevance"], lex.get("weak_per_word", 0.0)),
                    ("lexical main (hand)", "lex", None, WEAK_RELEVANCE, 0.0),
                ]
            outs = {label: rule_outcomes(data, foreign, kind, model) for label, kind, model, _, _ in fusions}
            if not args.thresholds_only:
                for label, _kind, _, shipped, rise in fusions:
                    weak_rules(outs[label], label, shipped, rise)
            print(
                "\n| fusion | rule | bar / rise | 5-fold CV (train): right first weak / unanswerable missed | seeds |"
                " train: right first, called weak / unanswerable, NOT called weak | held out: the same |"
                f" {WEAK_PROBE!r} |"
            )
            print("|" + "---|" * 8)
            hand: dict[float, int] | None = None
            for label, _, model, _, _ in fusions:
                pinned = model is not None and model.get("default") is True
                tier = "hand" if model is None else EMBEDDER if label.startswith(EMBEDDER) else "lexical"
                before, rise = WEAK_BEFORE[tier]
                found = weak_thresholds(outs[label], label, before, rise, fixed=model is None, pinned=pinned)
                if model is None:  # the hand rankings share one threshold (WEAK_UNKNOWN_SHARE): admissible for each
                    hand = found if hand is None else {t: m + found[t] for t, m in hand.items() if t in found}
            print(
                f"hand rankings of this run, one threshold admissible for each, fewest missed in all: {hand and min(hand, key=lambda t: (hand[t], t))}"
            )
            return
        if args.report_only:
            report(data, args.keep, args.against)
            return
        models = {}
        tiers = [("sem", EMBEDDER), ("lex", "lexical")] if EMBEDDER == BASE_EMBEDDER else [("sem", EMBEDDER)]
        for kind, tier in tiers:
            entry = train(data, kind)
            offline(data, kind, entry)
            entry["weak_relevance"] = weak_bar(data, foreign, kind, entry)
            entry["weak_relevance"], entry["weak_per_word"] = weak_per_word(
                data, foreign, kind, entry, entry["weak_relevance"]
            )
            entry["weak_share"] = WEAK_LEARNED_SHARE  # the idf share the bar was fitted at (Model.weak_share)
            models[tier] = {**entry, "default": tier in DEFAULT_MODELS}
        if args.write:
            from toolcat.engines.embedding import model_identity  # noqa: PLC0415

            models[EMBEDDER]["weights_sha256"] = model_identity(EMBEDDER)[1]
            write_models(models, out)
            print(f"wrote {out}")
        if not args.no_report:
            report(data, args.keep, args.against)


if __name__ == "__main__":
    main()

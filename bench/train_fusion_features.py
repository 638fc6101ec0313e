"""Measure new features and richer models for the default tier's learned fusion, by 5-fold CV on the train queries.

    OMP_NUM_THREADS=1 TOOLCAT_CACHE_DIR=/tmp/lead-cache nice -n 5 .venv/bin/python bench/train_fusion_features.py
        [--keep /tmp/toolcat-fusion-builds] [--groups single,combined,head,spaces,node,hard,gbdt,per_set,ceiling]

The study behind docs/search.md, "New evidence for the learned fusion" (issue 33, seventh session). It reads the
candidates ``bench/train_fusion.py --embedder minilm-tools --idf-coverage`` kept in ``--keep`` (the four labelled
sets built with ``minilm-tools``; run that first, its builds and ``prepared-*.pkl`` are reused) and asks each build's
reader again, per query, for the evidence the reader already has on a cold query without another fetch: the lexical
top 50 with each hit's matched words, the candidates' cosines, the query's idf, the words-space part of the lexical
score (the rest is the character n-grams'), and the head's documents (the top 10, which the reader reads anyway for
the name stage and the answer: id, summary, spec size).

Every variant is trained as the committed model was (pairwise logistic regression, C = 0.1, each set's train
queries weighing the same, then the name stage fitted pairwise on the head) and scored by the same 5 folds of the
train queries (``train_fusion.fold_of``); the calibration is left out (it keeps every query's order). Nothing here
reads the held-out split. Groups (``--groups``):

* ``single``: the committed 17 features plus one candidate feature (:func:`candidate_features`);
* ``combined``: plus all of them, at C 0.01 / 0.1 / 1;
* ``node``: the hierarchy term apart (the mixed cosine less the tool's own, and the tool's own cosine; only the
  example catalogue has a hierarchy);
* ``head``: the name stage widened with features of the head's documents (:func:`head_features`);
* ``spaces``: the lexical score split into its word and character n-gram parts;
* ``hard``: a top-heavy objective, the pairs against the first model's top K negatives weighing ``mix`` of a query;
* ``gbdt``: a gradient-boosted re-ranker (scikit-learn) of the linear model's top 20, blended with its logit;
* ``per_set``: each set's own model, trained and scored on its train queries alone (what a model that knew a query's
  set, say by its style, could gain over one model for all);
* ``ceiling``: a gradient-boosted model over every feature, fitted and scored on ALL the train queries (in-sample,
  an upper bound on what the evidence can separate, not a model to ship).

Prints one table: CV R@1 per set and their mean, CV R@5 per set, and the worst set's R@1 change against the base.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import math
import pickle
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import train_fusion as tf  # noqa: E402
from bench_search import CORPUS  # noqa: E402
from bench_search_tiers import metrics  # noqa: E402
from bench_search_tune import open_semantic  # noqa: E402

from toolcat.format.analyzer import analyze_words  # noqa: E402
from toolcat.reader.search import fusion_model, hybrid  # noqa: E402
from toolcat.reader.search.ranking import IndexReader  # noqa: E402

GROUPS = ("single", "combined", "head", "spaces", "node", "hard", "gbdt", "per_set", "ceiling")
C = 0.1  # the committed grid point (docs/search.md, "Stacked")
#: The head stage's features beyond the name match (:func:`head_features`).
HEAD_EXTRA = ("name_q_idf", "name_n", "sum_idf", "sum_n", "log_size")
Row = dict[str, Any]


def kept(keep: Path, sets: str) -> list[dict[str, Any]]:
    """train_fusion's kept candidates for ``minilm-tools`` with idf coverage (the same cache key as its main)."""
    tf.EMBEDDER, tf.IDF_COVERAGE = "minilm-tools", True
    code = Path(fusion_model.__file__).read_bytes() + b"".join(
        inspect.getsource(f).encode()
        for f in (tf.prepare, tf.query_rows, tf.unknown_enough, tf.gibberish, tf.prepare_foreign)
    )
    key = hashlib.sha256(code + f"{sets} {tf.EMBEDDER} {tf.IDF_COVERAGE}".encode()).hexdigest()[:16]
    cached = keep / f"prepared-{key}.pkl"
    if cached.is_file():
        data, _ = pickle.loads(cached.read_bytes())  # noqa: S301 - train_fusion's own file
        return list(data)
    with tempfile.TemporaryDirectory(prefix="fusion-features-") as tmp:
        return [tf.prepare(name, Path(tmp), keep) for name in sets.split(",")]


def add_evidence(data: list[dict[str, Any]]) -> None:
    """Each row's raw evidence (``raw``) and each set's documents (``docs``), asked of the set's build again."""
    _, _, _, min_cosine = hybrid.FUSION["onnx"]
    for d in data:
        searcher, tier, ids = open_semantic(d["out"])
        part = searcher._part("tools")  # noqa: SLF001
        spaces = list(part.spaces)
        docs = searcher._docs("tools", [(i, 0.0, []) for i in range(len(ids))])  # noqa: SLF001
        d["docs"] = [
            (str(x["pointer"]["tool_id"]), str(x["pointer"].get("summary") or ""), int(x["pointer"]["spec"]["bytes"]))
            for x in docs
        ]
        for r in d["rows"]:
            query = r["query"]
            lexical = IndexReader._ranked(searcher, "tools", query, None, hybrid.CANDIDATES)  # noqa: SLF001
            cosines = tier.scores("tools", query)
            semantic = hybrid.semantic_top(cosines, None, min_cosine)
            cands = list(dict.fromkeys([*(doc for doc, _, _ in lexical), *semantic]))
            assert cands == r["sem"][0], f"{d['name']}: the kept candidates differ for {query!r}"
            part.spaces = [s for s in spaces if s["name"] == "words"]
            words, _, _ = searcher.scores("tools", query)
            part.spaces = spaces
            r["raw"] = {
                "lexical": lexical,
                "semantic": semantic,
                "values": [float(cosines[doc]) for doc in cands],
                "idf": searcher.term_idf(query),
                "words": {doc: words.get(doc, 0.0) for doc, _, _ in lexical},
            }
            r["set"] = d
            r["extra"] = candidate_features(r)
            own = tier._cosines("tools", query)  # noqa: SLF001 - the tool's cosine before the hierarchy term
            for e, doc, mixed in zip(r["extra"], cands, r["raw"]["values"], strict=True):
                e.update({"node_gap": mixed - float(own[doc]), "cos_own": float(own[doc])})


def candidate_features(r: Row) -> list[dict[str, float]]:
    """Per candidate: new features from the evidence the reader has for every candidate (no fetch)."""
    import numpy as np  # noqa: PLC0415

    raw = r["raw"]
    terms = list(dict.fromkeys(analyze_words(r["query"])))
    idf = raw["idf"]
    total = sum(idf.get(t, 0.0) for t in terms) or 1.0
    rarest = max(terms, key=lambda t: idf.get(t, 0.0)) if terms else None
    first = terms[0] if terms else None
    lexical, cands, values = raw["lexical"], r["sem"][0], np.asarray(raw["values"])
    lex = {doc: (k, s, set(h)) for k, (doc, s, h) in enumerate(lexical)}
    known = set().union(*(set(h) for _, _, h in lexical)) if lexical else set()
    known_idf = sum(idf.get(t, 0.0) for t in terms if t in known)
    top = float(values.max())
    second = float(np.sort(values)[::-1][1]) if len(values) > 1 else top
    mu, sd = float(values.mean()), float(values.std()) or 1.0
    ls = np.asarray([s for _, s, _ in lexical]) if lexical else np.zeros(1)
    l_best = float(ls.max())
    l_second = float(np.sort(ls)[::-1][1]) if len(ls) > 1 else 0.0
    l_mu, l_sd = float(ls.mean()), float(ls.std()) or 1.0
    cos_rank = {cands[int(i)]: k for k, i in enumerate(np.argsort(-values, kind="stable"))}
    w_best = max(raw["words"].values(), default=0.0) or 1.0
    out = []
    for i, doc in enumerate(cands):
        k, s, h = lex.get(doc, (-1, 0.0, set()))
        hit = h & set(terms)
        c = float(values[i])
        cov = sum(idf.get(t, 0.0) for t in hit) / total
        words = raw["words"].get(doc, 0.0)
        out.append(
            {
                "cos_share": c / top if top > 0 else 0.0,
                "cos_z": (c - mu) / sd,
                "lex_z": (s - l_mu) / l_sd,
                "cos_lead": c - (second if c >= top else top),
                "lex_lead": s - (l_second if s >= l_best else l_best) if k >= 0 else -l_best,
                "rare_hit": 1.0 if rarest in hit else 0.0,
                "first_hit": 1.0 if first in hit else 0.0,
                "miss_known_idf": (known_idf - sum(idf.get(t, 0.0) for t in hit)) / total,
                "rrf": 30 * (1 / (60 + (k if k >= 0 else 100)) + 1 / (60 + cos_rank[doc])),
                "cos_rank_all": 1 / (1 + cos_rank[doc]),
                "cos_x_cov": c * cov,
                "cov_x_share": cov * (s / l_best if l_best > 0 else 0.0),
                "top5_both": 1.0 if 0 <= k < 5 and cos_rank[doc] < 5 else 0.0,
                "cos_sq": c * c,
                "lex_rank_log": math.log1p(k if k >= 0 else 100),
                "cos_rank_log": math.log1p(cos_rank[doc]),
                "unmatched": float(len(set(terms) - hit)),
                "lex_words": words,
                "lex_chars": s - words,
                "words_share": words / w_best,
                "chars_frac": (s - words) / s if s > 0 else 0.0,
            }
        )
    return out


SINGLE = (
    "cos_share",
    "cos_z",
    "lex_z",
    "cos_lead",
    "lex_lead",
    "rare_hit",
    "first_hit",
    "miss_known_idf",
    "rrf",
    "cos_rank_all",
    "cos_x_cov",
    "cov_x_share",
    "top5_both",
    "cos_sq",
    "lex_rank_log",
    "cos_rank_log",
    "unmatched",
)
#: The five of SINGLE the top-heavy objective is also tried with.
HARD_EXTRA = ("cos_share", "lex_z", "cos_lead", "rare_hit", "first_hit")
SPACES = (("lex_words",), ("lex_chars",), ("lex_words", "words_share"), ("chars_frac",), ("lex_chars", "chars_frac"))


def head_features(r: Row, doc: int) -> dict[str, float]:
    """Per head candidate: features of its document, which the reader reads for the answer anyway."""
    terms = set(analyze_words(r["query"]))
    idf = r["raw"]["idf"]
    total = sum(idf.get(t, 0.0) for t in terms) or 1.0
    tool_id, summary, size = r["set"]["docs"][doc]
    name_q, name_n = 0.0, 0.0
    for name in dict.fromkeys((tool_id, tool_id.rsplit(".", 1)[-1])):
        words = set(analyze_words(name))
        if words:
            shared = words & terms
            name_q = max(name_q, sum(idf.get(t, 0.0) for t in shared) / total)
            name_n = max(name_n, len(shared) / len(words))
    in_summary = terms & set(analyze_words(summary))
    match = r["match"].get(doc, 0.0)
    return {
        "match": match,
        "match_hi": 1.0 if match >= hybrid.NAME_MIN else 0.0,
        "name_q_idf": name_q,
        "name_n": name_n,
        "sum_idf": sum(idf.get(t, 0.0) for t in in_summary) / total,
        "sum_n": len(in_summary) / max(1, len(terms)),
        "log_size": math.log(max(1, size)),
    }


class Study:
    """The labelled sets with their evidence, and the CV of one variant at a time."""

    def __init__(self, data: list[dict[str, Any]]) -> None:
        self.data = data
        self.weights = tf.set_weights(data, balanced=True)
        tf.score_rows = self.score_rows  # train_fusion's name fit scores with the variant's columns

    def use(self, names: Sequence[str]) -> None:
        """Every row's ``x`` candidates: the committed 17 features, then ``names``."""
        for d in self.data:
            for r in d["rows"]:
                xs = [[*base, *(e[n] for n in names)] for base, e in zip(r["sem"][1], r["extra"], strict=True)]
                r["x"] = (r["sem"][0], xs, r["sem"][2])

    @staticmethod
    def score_rows(rows: list[Row], _kind: str, weights: Sequence[float], bias: float) -> list[list[float]]:
        """The linear model's relevance of each candidate (as the reader's, without the calibration)."""
        import numpy as np  # noqa: PLC0415

        out = []
        for r in rows:
            z = np.clip(np.asarray(r["x"][1], dtype=np.float64) @ np.asarray(weights) + bias, -700, 700)
            out.append([float(v) for v in 1 / (1 + np.exp(-z))])
        return out

    def train_rows(self, fold: int | None) -> list[tuple[Row, float]]:
        """The train queries outside ``fold`` (None: all), each with its set's weight."""
        return [
            (r, self.weights[d["name"]])
            for d in self.data
            for r in d["rows"]
            if r["part"] == "train" and tf.fold_of(r["query"]) != fold
        ]

    def cv(
        self,
        fitted: Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]],
        *,
        in_sample: bool = False,
    ) -> list[tuple[float, float, float]]:
        """Each set's R@1 / R@5 / MRR over its train queries, each ranked by a model fitted without its fold."""
        got: dict[str, list[tuple[list[str], set[str]]]] = {d["name"]: [] for d in self.data}
        for fold in [None] if in_sample else range(tf.FOLDS):
            rank = fitted(self.train_rows(fold))
            for d in self.data:
                for r in d["rows"]:
                    if r["part"] == "train" and (in_sample or tf.fold_of(r["query"]) == fold):
                        got[d["name"]].append((rank(r), r["gold"]))
        return [
            metrics([p for p, _ in pairs], [("", g) for _, g in pairs], list(range(len(pairs))))
            for pairs in got.values()
        ]


def linear(c: float = C) -> Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]]:
    """The committed recipe: pairwise logistic regression, then the name stage."""

    def fitted(train: list[tuple[Row, float]]) -> Callable[[Row], list[str]]:
        w, b = tf.fit(train, "x", "pair", c)
        name = tf.fit_name(train, "x", w, b)
        return lambda r: tf.ranked_by(r, "x", Study.score_rows([r], "x", w, b)[0], r["set"]["names"], name)

    return fitted


def head_matrix(r: Row, head: list[tuple[int, float]], names: Sequence[str]) -> Any:
    """The head's document features, ``log_size`` taken relative to the head's mean (a prior within the head)."""
    import numpy as np  # noqa: PLC0415

    cache = r.setdefault("head", {})
    for doc, _ in head:
        if doc not in cache:
            cache[doc] = head_features(r, doc)
    x = np.asarray([[cache[doc][n] for n in names] for doc, _ in head], dtype=np.float64)
    if "log_size" in names:
        k = list(names).index("log_size")
        x[:, k] -= x[:, k].mean()
    return x


def head_stage(
    names: Sequence[str], l2: float = 0.01
) -> Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]]:
    """The linear first stage, then a head stage over ``names`` (free signs), fitted pairwise as the name weights."""
    import numpy as np  # noqa: PLC0415
    from scipy.optimize import minimize  # noqa: PLC0415

    def fitted(train: list[tuple[Row, float]]) -> Callable[[Row], list[str]]:
        w, b = tf.fit(train, "x", "pair", C)
        dzs, dfs, wts = [], [], []
        for (r, qw), scores in zip(train, Study.score_rows([r for r, _ in train], "x", w, b), strict=True):
            if not r["match"]:
                continue
            head = tf.head_of(r, "x", scores)
            gold = {c for c, g in zip(r["x"][0], r["x"][2], strict=True) if g}
            y = np.asarray([doc in gold for doc, _ in head])
            if not y.any() or y.all():
                continue
            z = np.asarray([fusion_model.logit(s) for _, s in head])
            f = head_matrix(r, head, names)
            dzs.append((z[y][:, None] - z[~y][None, :]).reshape(-1))
            dfs.append((f[y][:, None, :] - f[~y][None, :, :]).reshape(-1, len(names)))
            wts.append(np.full(len(dzs[-1]), qw / len(dzs[-1])))
        dz, df, wt = np.concatenate(dzs), np.concatenate(dfs), np.concatenate(wts)

        def loss(v: Any) -> tuple[float, Any]:
            t = dz + df @ v
            p = 1 / (1 + np.exp(np.clip(t, -50, 50)))
            return float((wt * np.logaddexp(0, -t)).sum() + l2 * (v @ v)), -(wt * p) @ df + 2 * l2 * v

        v = minimize(loss, np.zeros(len(names)), jac=True, method="L-BFGS-B").x

        def rank(r: Row) -> list[str]:
            head = tf.head_of(r, "x", Study.score_rows([r], "x", w, b)[0])
            if r["match"]:
                z = np.asarray([fusion_model.logit(s) for _, s in head]) + head_matrix(r, head, names) @ v
                head = sorted(
                    ((doc, float(s)) for (doc, _), s in zip(head, z, strict=True)), key=lambda h: (-h[1], h[0])
                )
            return [r["set"]["names"][doc] for doc, _ in head]

        return rank

    return fitted


def hard(k: int, mix: float) -> Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]]:
    """A top-heavy refit: the pairs against the first model's top ``k`` negatives weigh ``mix`` of each query."""
    import numpy as np  # noqa: PLC0415
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415

    def fitted(train: list[tuple[Row, float]]) -> Callable[[Row], list[str]]:
        w0, b0 = tf.fit(train, "x", "pair", C)
        xs = np.concatenate([np.asarray(r["x"][1], dtype=np.float64) for r, _ in train])
        mean, std = xs.mean(0), xs.std(0)
        std[std == 0] = 1
        diffs, ws = [], []
        for (r, qw), scores in zip(train, Study.score_rows([r for r, _ in train], "x", w0, b0), strict=True):
            y = np.asarray(r["x"][2], dtype=bool)
            if not y.any() or y.all():
                continue
            x = (np.asarray(r["x"][1], dtype=np.float64) - mean) / std
            order = np.argsort(-np.asarray(scores), kind="stable")
            at = np.empty(len(scores))
            at[order] = np.arange(len(scores))
            neg = np.where(~y)[0]
            d = (x[y][:, None, :] - x[neg][None, :, :]).reshape(-1, x.shape[1])
            top = np.tile(at[neg] < k, int(y.sum()))
            diffs.append(d)
            ws.append(qw * np.where(top, mix / max(1, top.sum()), (1 - mix) / max(1, (~top).sum())))
        d, wt = np.concatenate(diffs), np.concatenate(ws)
        model = LogisticRegression(C=C, max_iter=3000, fit_intercept=False)
        model.fit(np.concatenate([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], sample_weight=np.r_[wt, wt])
        raw = model.coef_[0] / std
        w, b = [float(v) for v in raw], float(-(raw * mean).sum())
        name = tf.fit_name(train, "x", w, b)
        return lambda r: tf.ranked_by(r, "x", Study.score_rows([r], "x", w, b)[0], r["set"]["names"], name)

    return fitted


def gbdt(
    depth: int, trees: int, blend: float, top: int = 20
) -> Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]]:
    """The linear model, then a gradient-boosted classifier over its top ``top`` blended into its logit."""
    import numpy as np  # noqa: PLC0415

    def columns(r: Row, scores: list[float]) -> tuple[Any, Any]:
        order = np.argsort(-np.asarray(scores), kind="stable")[:top]
        z = np.asarray([fusion_model.logit(scores[i]) for i in order])
        x = np.asarray(r["x"][1], dtype=np.float64)[order]
        return order, np.hstack([x, z[:, None], (z - z[0])[:, None], np.arange(len(order))[:, None]])

    def fitted(train: list[tuple[Row, float]]) -> Callable[[Row], list[str]]:
        w, b = tf.fit(train, "x", "pair", C)
        name = tf.fit_name(train, "x", w, b)
        xs, ys, ws = [], [], []
        for (r, qw), scores in zip(train, Study.score_rows([r for r, _ in train], "x", w, b), strict=True):
            order, x = columns(r, scores)
            y = np.asarray(r["x"][2], dtype=bool)[order]
            if y.any() and not y.all():
                xs.append(x)
                ys.append(y)
                ws.append(np.where(y, qw / y.sum(), qw / (~y).sum()))
        model = _gbdt(xs, ys, ws, depth, trees)

        def rank(r: Row) -> list[str]:
            scores = Study.score_rows([r], "x", w, b)[0]
            order, x = columns(r, scores)
            p = np.clip(model.predict_proba(x)[:, 1], 1e-9, 1 - 1e-9)
            z = x[:, -3] + blend * np.log(p / (1 - p))
            new = [0.0] * len(scores)  # the top re-ordered above the rest; the name stage reads logits of these
            for i, v in zip(order, z, strict=True):
                new[int(i)] = 1 / (1 + math.exp(-float(v)))
            return tf.ranked_by(r, "x", new, r["set"]["names"], name)

        return rank

    return fitted


def _gbdt(xs: list[Any], ys: list[Any], ws: list[Any], depth: int, trees: int) -> Any:
    """A gradient-boosted classifier of candidates (rows ``xs``, labels ``ys``, weights ``ws`` by query), fitted."""
    import numpy as np  # noqa: PLC0415
    from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: PLC0415

    model = HistGradientBoostingClassifier(
        max_iter=trees, max_depth=depth, learning_rate=0.1, early_stopping=False, random_state=0
    )
    return model.fit(np.vstack(xs), np.concatenate(ys), sample_weight=np.concatenate(ws))


def ceiling(depth: int, trees: int) -> Callable[[list[tuple[Row, float]]], Callable[[Row], list[str]]]:
    """A gradient-boosted pointwise model over every candidate (no name stage), for the in-sample bound."""
    import numpy as np  # noqa: PLC0415

    def fitted(train: list[tuple[Row, float]]) -> Callable[[Row], list[str]]:
        xs, ys, ws = [], [], []
        for r, qw in train:
            y = np.asarray(r["x"][2], dtype=bool)
            if y.any() and not y.all():
                xs.append(np.asarray(r["x"][1], dtype=np.float64))
                ys.append(y)
                ws.append(np.where(y, qw / y.sum(), qw / (~y).sum()))
        model = _gbdt(xs, ys, ws, depth, trees)

        def rank(r: Row) -> list[str]:
            p = model.predict_proba(np.asarray(r["x"][1], dtype=np.float64))[:, 1]
            return [r["set"]["names"][r["x"][0][int(i)]] for i in np.argsort(-p, kind="stable")[:10]]

        return rank

    return fitted


def committed(data: list[dict[str, Any]]) -> None:
    """Where the committed model puts each train query's right tool (in-sample): first, at ranks 2-10, further."""
    import json  # noqa: PLC0415

    entry = json.loads(tf.OUT.read_text(encoding="utf-8"))["models"]["minilm-tools"]
    name = (entry["name"][0], entry["name"][1])
    for d in data:
        rows = [r for r in d["rows"] if r["part"] == "train"]
        places = []
        for r in rows:
            r["x"] = r["sem"]
            top = tf.ranked_by(r, "x", Study.score_rows([r], "x", entry["weights"], entry["bias"])[0], d["names"], name)
            places.append(next((k for k, tool in enumerate(top) if tool in r["gold"]), None))
        near = sum(1 for k in places if k is not None and k > 0)
        print(
            f"{d['name']}: the committed model on its {len(rows)} train queries puts the right tool first for"
            f" {places.count(0)}, at ranks 2-10 for {near}, further for {places.count(None)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(tf.SETS))
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-fusion-builds")
    parser.add_argument("--groups", default=",".join(GROUPS), help=f"which variants to measure, of {','.join(GROUPS)}")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    groups = args.groups.split(",")
    data = kept(args.keep, args.sets)
    add_evidence(data)
    study = Study(data)
    committed(data)
    print("| variant | CV R@1 " + " / ".join(d["name"] for d in data) + " | mean | CV R@5 | worst R@1 change |")
    print("|---|---|---|---|---|")
    base: list[float] = []

    def show(label: str, extra: Sequence[str], fitted: Any, *, in_sample: bool = False) -> None:
        study.use(extra)
        res = study.cv(fitted, in_sample=in_sample)
        r1 = [a[0] for a in res]
        if not base:
            base.extend(r1)
        worst = min(a - b for a, b in zip(r1, base, strict=True))
        print(
            f"| {label} | {' / '.join(f'{v:.4f}' for v in r1)} | {statistics.mean(r1):.4f} |"
            f" {' / '.join(f'{a[1]:.4f}' for a in res)} | {worst:+.4f} |",
            flush=True,
        )

    show("base: the committed 17 features (pairwise, C = 0.1)", (), linear())
    if "single" in groups:
        for name in SINGLE:
            show(f"+ {name}", (name,), linear())
    if "combined" in groups:
        for c in (0.01, C, 1.0):
            show(f"+ all {len(SINGLE)} (C = {c})", SINGLE, linear(c))
    if "spaces" in groups:
        for names in SPACES:
            show(f"+ {', '.join(names)}", names, linear())
    if "node" in groups:
        for name in ("node_gap", "cos_own"):
            show(f"+ {name}", (name,), linear())
    if "head" in groups:
        show("head stage: name match (the committed stage, free signs)", (), head_stage(("match", "match_hi")))
        for name in HEAD_EXTRA:
            show(f"head stage + {name}", (), head_stage(("match", "match_hi", name)))
        show("head stage + all five", (), head_stage(("match", "match_hi", *HEAD_EXTRA)))
    if "hard" in groups:
        for k, mix in ((5, 0.5), (10, 0.5), (10, 0.8), (20, 0.5)):
            show(f"top-heavy pairs, K = {k}, mix {mix}", (), hard(k, mix))
        show("top-heavy pairs, K = 5, mix 0.5, + 5 features", HARD_EXTRA, hard(5, 0.5))
    if "gbdt" in groups:
        for trees, blend in ((50, 1.0), (50, 0.5), (100, 0.5)):
            show(f"GBDT re-rank of the top 20, {trees} trees of depth 3, blend {blend}", (), gbdt(3, trees, blend))
        show("GBDT re-rank of the top 20, 50 trees, blend 0.5, + all features", SINGLE, gbdt(3, 50, 0.5))
    if "per_set" in groups:
        study.use(())  # the committed 17 features
        own = [Study([d]).cv(linear())[0] for d in data]
        study = Study(data)  # the score function back on the whole study (Study() rebinds train_fusion's)
        r1 = [a[0] for a in own]
        print(
            f"| each set's own model | {' / '.join(f'{v:.4f}' for v in r1)} | {statistics.mean(r1):.4f} |"
            f" {' / '.join(f'{a[1]:.4f}' for a in own)} | {min(a - b for a, b in zip(r1, base, strict=True)):+.4f} |",
            flush=True,
        )
    if "ceiling" in groups:
        show("IN-SAMPLE linear, + all features (bound)", SINGLE, linear(), in_sample=True)
        show("IN-SAMPLE GBDT, 200 trees of depth 6, + all features (bound)", SINGLE, ceiling(6, 200), in_sample=True)


if __name__ == "__main__":
    main()

"""A learned fusion of the evidence the reader already has (learning to rank over cheap features; stdlib only).

Per candidate (the lexical top :data:`~toolcat.reader.search.hybrid.CANDIDATES` and, with vectors, the semantic top
as many, exactly :func:`toolcat.reader.search.hybrid.fuse`'s), :func:`features` gives a short vector of what the
reader computed anyway: the lexical score and its rank, its share of the best lexical score, the best lexical score
itself (the fallback's gate), the share of the query's words the tool matched, the query's length, the share of its words
the index knows and, with vectors,
the cosine (the hierarchy term mixed in), its rank and its gap to the best cosine. A linear model trained on the
TRAIN split of the labelled sets (``bench/train_fusion.py``; docs/search.md, "Learned fusion") scores them:
``relevance = sigmoid(b + w · x)``, which stays in 0-1 and orders the hits. The weights live in
``fusion_weights.json`` beside this module, one model per tier (``lexical``, or the embedder spec the vectors
were built with: ``minilm-onnx``, ``minilm-tools``) and checked against the model's weights sha256 (the vectors meta's
``weights_sha256``: for ``minilm-tools`` the adapter-merged identity); a tier without a model (other embedders, a file
that is absent or malformed, a malformed entry) keeps the hand-tuned :func:`~toolcat.reader.search.hybrid.fuse`.
A model whose entry says ``"default": false`` is opt-in (``TOOLCAT_LEARNED_FUSION=all``); setting
``TOOLCAT_LEARNED_FUSION=0`` turns every learned fusion off.

A hit whose semantic part outweighs its lexical part by the fallback's weights (the rule of
:func:`~toolcat.reader.search.hybrid.fuse`) carries :data:`~toolcat.reader.search.hybrid.SEMANTIC_TERM`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ...format import settings
from ...format.analyzer import analyze_words
from . import hybrid

#: The format of ``fusion_weights.json`` this reader reads.
FORMAT = "toolcat-fusion-1"
WEIGHTS_FILE = Path(__file__).with_name("fusion_weights.json")
#: The features of a lexical-only model, in order (:func:`features`).
LEXICAL_FEATURES = (
    "lex",
    "lex_in",
    "lex_rank",
    "lex_share",
    "lex_best",
    "coverage",
    "matched",
    "query_terms",
    "known",
    "lex_x_len",
)
#: The features of a model with vectors: the lexical ones, then the semantic ones.
SEMANTIC_FEATURES = (
    *LEXICAL_FEATURES,
    "cos",
    "cos_gap",
    "sem_rank",
    "cos_x_weak",
    "lex_x_cos",
    "cos_x_unknown",
    "cos_x_len",
)
#: The variant of ``coverage`` that weighs each query word by its idf (an unknown word at an unseen word's idf), so a
#: tool matching the rare words of a request covers more of it than one matching its common words. A model reads it
#: when its features name it in ``coverage``'s place (docs/search.md, "Stacked: minilm-tools under the learned fusion").
IDF_COVERAGE = "coverage_idf"
#: Every feature list a model may have, in order: the lexical or semantic features, with ``coverage`` or its idf variant.
FEATURE_SETS = tuple(
    tuple(IDF_COVERAGE if name == "coverage" else name for name in names) if idf else names
    for idf in (False, True)
    for names in (LEXICAL_FEATURES, SEMANTIC_FEATURES)
)

Hit = tuple[int, float, list[str]]
#: A candidate outside the lexical top in :func:`features`: no rank, score 0, no matched terms (shared, never mutated).
_NO_RANK: tuple[int, float, Sequence[str]] = (-1, 0.0, ())


class Model:
    """One tier's trained linear model: feature names, weights, bias (relevance = sigmoid(bias + weights · x))."""

    def __init__(
        self,
        names: Sequence[str],
        weights: Sequence[float],
        bias: float,
        sha256: str | None,
        *,
        default: bool = True,
        name: Sequence[float] = (0.0, 0.0),
        weak: float | None = None,
        weak_per_word: float = 0.0,
        weak_share: float | None = None,
    ) -> None:
        if tuple(names) not in FEATURE_SETS or len(weights) != len(names):
            raise ValueError(f"a fusion model over {list(names)} with {len(weights)} weights")
        self.names = tuple(names)
        self.weights = tuple(float(w) for w in weights)
        self.bias = float(bias)
        self.sha256 = sha256
        #: Whether the reader uses it unasked (else only with ``TOOLCAT_LEARNED_FUSION=all``).
        self.default = bool(default)
        #: What the name match adds to the logit of a head hit: ``name[0] · match + name[1] · (match >= NAME_MIN)``.
        if len(name) != 2 or not all(math.isfinite(float(v)) for v in name):
            raise ValueError(f"a fusion model's name weights are two finite numbers, not {list(name)}")
        self.name = (float(name[0]), float(name[1]))
        #: find_tool's weak bar on this model's scale (None: the reader's ``WEAK_RELEVANCE``, the hand fusion's).
        self.weak = None if weak is None else float(weak)
        #: What the weak bar rises by for a query of ``n`` content words: ``weak_per_word / n`` (0: one bar for all).
        self.weak_per_word = float(weak_per_word)
        #: The share of a query's idf its unknown words must carry for a weak answer under this model's bar (None: the
        #: reader's ``WEAK_LEARNED_SHARE``); chosen with the bar on the train requests (``train_fusion.py --weak-rules``).
        self.weak_share = None if weak_share is None else float(weak_share)
        if self.weak_share is not None and not 0.0 < self.weak_share <= 1.0:
            raise ValueError(f"a fusion model's weak_share is a share of the query's idf in (0, 1], not {weak_share}")
        if not all(math.isfinite(v) for v in (*self.weights, self.bias, self.weak or 0.0, self.weak_per_word)):
            raise ValueError("a fusion model with a weight that is not finite")

    @property
    def semantic(self) -> bool:
        """Whether the model reads the semantic features (it was trained with vectors)."""
        return len(self.names) == len(SEMANTIC_FEATURES)

    @property
    def idf_coverage(self) -> bool:
        """Whether the model reads :data:`IDF_COVERAGE` (then :func:`fuse` needs the query's idf)."""
        return IDF_COVERAGE in self.names

    def score(self, x: Sequence[float]) -> float:
        """The relevance of one candidate: ``sigmoid(bias + weights · x)``, in 0-1."""
        z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def parse(data: Any) -> dict[str, Model]:
    """The models of a ``fusion_weights.json`` document (raises ValueError, KeyError or TypeError on another)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} document")
    return {
        str(tier): Model(
            entry["features"],
            entry["weights"],
            entry["bias"],
            entry.get("weights_sha256"),
            default=entry.get("default", True) is True,
            name=entry.get("name", (0.0, 0.0)),
            weak=entry.get("weak_relevance"),
            weak_per_word=entry.get("weak_per_word", 0.0),
            weak_share=entry.get("weak_share"),
        )
        for tier, entry in dict(data["models"]).items()
    }


@cache
def _models(path: Path) -> dict[str, Model]:
    """The models of ``path``: none when it is absent or malformed, and a malformed entry is left out alone.

    A tier without a model keeps the hand-tuned fusion, so one broken entry (say ``minilm-tools``'s) does not take
    the other tiers' models with it.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        parse({**data, "models": {}})  # the document's format
        entries = dict(data["models"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    models = {}
    for tier, entry in entries.items():
        try:
            models.update(parse({**data, "models": {tier: entry}}))
        except (ValueError, KeyError, TypeError):
            continue
    return models


def model_for(tier: str, sha256: str | None = None, path: Path | None = None) -> Model | None:
    """The trained model of ``tier`` (``lexical`` or an embedder spec), when there is one for these weights."""
    if settings.flag_off("TOOLCAT_LEARNED_FUSION"):
        return None
    model = _models(path or WEIGHTS_FILE).get(tier)
    if model is None or (model.sha256 is not None and sha256 is not None and model.sha256 != sha256):
        return None
    if not model.default and settings.get("TOOLCAT_LEARNED_FUSION").lower() != "all":
        return None
    if model.semantic != (tier != "lexical"):
        return None
    return model


def features(
    query: str,
    lexical: list[Hit],
    docs: list[int],
    cosines: Sequence[float] | None,
    semantic: list[int],
    gate: float = hybrid.FUSION["onnx"][2],
    known: float = 1.0,
    idf: Mapping[str, float] | None = None,
) -> list[list[float]]:
    """The feature vector of each of ``docs`` (:data:`LEXICAL_FEATURES`, then with ``cosines`` the semantic ones).

    ``lexical`` is the lexical top (best first), ``semantic`` the semantic top (best first), ``cosines`` every
    candidate's cosine in the order of ``docs`` (None: a lexical-only model); ``gate`` the best lexical score under
    which the lexical evidence counts as weak (the fallback's); ``known`` the share of the query's words some tool's
    text has (a request in another language, or in words no tool uses, has few). With ``idf`` (each of the query's
    word terms → its idf, :meth:`~toolcat.reader.search.searcher.Searcher.term_idf`) the coverage column is
    :data:`IDF_COVERAGE`: the matched words' idf over all the query's words' idf.
    """
    terms = set(analyze_words(query))
    n_terms = max(1, len(terms))
    idf_total = sum(idf.get(term, 0.0) for term in terms) if idf is not None else 0.0
    best = lexical[0][1] if lexical else 0.0
    lex: dict[int, tuple[int, float, Sequence[str]]] = {
        doc: (rank, score, hit_terms) for rank, (doc, score, hit_terms) in enumerate(lexical)
    }
    sem = {doc: rank for rank, doc in enumerate(semantic)}
    top_cos = max(cosines, default=0.0) if cosines is not None else 0.0
    weak = 1.0 if best < gate else 0.0
    out = []
    for i, doc in enumerate(docs):
        rank, score, hit_terms = lex.get(doc, _NO_RANK)
        hit = set(hit_terms) & terms
        matched = len(hit)
        if idf is None:
            coverage = matched / n_terms
        else:
            coverage = sum(idf.get(term, 0.0) for term in hit) / idf_total if idf_total > 0 else 0.0
        row = [
            score,
            1.0 if rank >= 0 else 0.0,
            1.0 / (1 + rank) if rank >= 0 else 0.0,
            score / best if best > 0 else 0.0,
            best,
            coverage,
            math.log1p(matched),
            math.log1p(len(terms)),
            known,
            score * math.log1p(len(terms)),
        ]
        if cosines is not None:
            cos = float(cosines[i])
            s_rank = sem.get(doc, -1)
            row += [
                cos,
                cos - top_cos,
                1.0 / (1 + s_rank) if s_rank >= 0 else 0.0,
                cos * weak,
                score * cos,
                cos * (1.0 - known),
                cos * math.log1p(len(terms)),
            ]
        out.append(row)
    return out


def fuse(
    query: str,
    lexical: list[Hit],
    cosines: Sequence[float] | None,
    limit: int,
    model: Model,
    allowed: Callable[[int], bool] | None = None,
    params: tuple[float, float, float, float] = hybrid.FUSION["onnx"],
    pool: Sequence[float] | None = None,
    known: float = 1.0,
    idf: Mapping[str, float] | None = None,
) -> list[Hit]:
    """The best ``limit`` candidates by the learned relevance; the candidates and terms as :func:`hybrid.fuse`'s.

    Without ``cosines`` (a lexical-only model) the candidates are the lexical top alone; ``known`` as for
    :func:`features`; ``idf`` the query's idf, read only by a model of :data:`IDF_COVERAGE` (which needs it).
    """
    if model.idf_coverage and idf is None:
        raise ValueError(f"a model of {IDF_COVERAGE} needs the query's idf")
    _, _, gate, min_cosine = params
    a = hybrid.semantic_weight(lexical, params)
    semantic: list[int] = []
    values: list[float] | None = None
    if cosines is None:
        docs = [doc for doc, _, _ in lexical]
    else:
        semantic, docs, values = hybrid.candidates(lexical, cosines, allowed, min_cosine, pool)
    rows = features(query, lexical, docs, values, semantic, gate, known, idf if model.idf_coverage else None)
    lex: dict[int, tuple[float, Sequence[str]]] = {doc: (score, terms) for doc, score, terms in lexical}
    fused: list[Hit] = []
    for i, (doc, row) in enumerate(zip(docs, rows, strict=True)):
        score, terms = lex.get(doc, hybrid.NO_HIT)
        cosine = values[i] if values is not None else 0.0
        meaning = a * cosine if cosine >= min_cosine else 0.0
        marked = values is not None and meaning > (1 - a) * score
        fused.append((doc, model.score(row), [*terms, hybrid.SEMANTIC_TERM] if marked else list(terms)))
    fused.sort(key=lambda hit: (-hit[1], hit[0]))
    return fused[:limit]


def logit(p: float) -> float:
    """The inverse of the sigmoid (``p`` held inside (0, 1) so the result stays finite)."""
    p = min(max(p, 1e-15), 1.0 - 1e-15)
    return math.log(p / (1.0 - p))


def name_rescored(
    hits: list[Hit], ids: Sequence[str], query_terms: set[str], model: Model, analyze: Callable[[str], list[str]]
) -> list[Hit]:
    """``hits`` (best first) with the first ``len(ids)`` rescored by the model's name weights, re-sorted; the rest follow.

    The name match is :func:`toolcat.reader.search.hybrid.name_match` (only the head's tool ids are read, as for the
    hand-tuned boost); its weights are learned with the rest (``bench/train_fusion.py``).
    """
    head: list[Hit] = []
    for (doc, score, terms), tool_id in zip(hits, ids, strict=False):
        match = hybrid.name_match(query_terms, tool_id, analyze)
        lift = model.name[0] * match + (model.name[1] if match >= hybrid.NAME_MIN else 0.0)
        head.append((doc, 1.0 / (1.0 + math.exp(-(logit(score) + lift))) if lift else score, terms))
    head.sort(key=lambda hit: (-hit[1], hit[0]))
    return head + hits[len(head) :]

"""Tune the fusion of the default tier on the TRAIN split only; report the held-out split beside it.

    python bench/bench_search_tune.py [--sets metatool,bfcl] [--fields id,summary,description,...]
    python bench/bench_search_tune.py --terms [--sets example,github,metatool,bfcl] [--keep DIR]

``--terms`` tunes the learned expansion's fusion instead (``toolcat.reader.search.expansion.fuse``: weight, floor,
candidates), from each query's lexical top 50 and expansion scores kept once per set; objective: mean train R@1 +
MRR over the sets. The shipped values are the build's (``toolcat.build.contributors.index.terms``).

Builds each set once with the default embedder, keeps every query's lexical top 50 and its cosines, and re-fuses
them for a grid of ``(WEIGHT_WEAK, WEIGHT_STRONG, GATE, MIN_COSINE)`` (``toolcat.reader.search.hybrid.fuse``), so a
grid point costs no model call. Each grid point is scored by the mean train MRR over the sets; the table shows
the best points with train and held-out R@1 / R@5 / MRR. The shipped constants are in ``hybrid.FUSION["onnx"]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, open_build, split  # noqa: E402
from bench_search_tiers import SETS, metrics  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.build.contributors.index import terms, texts  # noqa: E402
from toolcat.reader.search import expansion, hybrid  # noqa: E402
from toolcat.reader.search.ranking import IndexReader  # noqa: E402
from toolcat.reader.search.searcher import Searcher  # noqa: E402

GRID = {
    "weak": (0.5, 0.6, 0.7, 0.8, 0.9),
    "strong": (0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    "gate": (0.15, 0.25),
    "floor": (0.1, 0.2),
}


EMBEDDER = ["minilm-onnx"]


def open_semantic(out: Path) -> tuple[Searcher, Any, list[str]]:
    """A build's searcher, its semantic tier (asserted present) and every tool id by doc number."""
    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    tier = searcher.semantic_tier()
    assert tier is not None, searcher._semantic.reason  # noqa: SLF001
    n = searcher._part("tools").n_docs  # noqa: SLF001
    docs = searcher._docs("tools", [(i, 0.0, []) for i in range(n)])  # noqa: SLF001
    return searcher, tier, [str(d["pointer"]["tool_id"]) for d in docs]


def prepare(name: str, tmp: Path) -> dict[str, Any]:
    """One set built with ``--embedder`` (the default's): queries, labels, each query's lexical top 50 and cosines."""
    maker, sample = SETS[name]
    back, queries = maker(tmp / f"{name}-src")
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    out = tmp / f"{name}-build"
    build(tmp / f"{name}-src", out, embedder=EMBEDDER[0])
    searcher, tier, ids = open_semantic(out)
    names = [back.get(i, i) for i in ids]
    lexical = [IndexReader._ranked(searcher, "tools", q, None, hybrid.CANDIDATES) for q, _ in queries]  # noqa: SLF001
    cosines = [tier.scores("tools", q) for q, _ in queries]
    return {"queries": queries, "names": names, "lexical": lexical, "cosines": cosines}


def evaluate(data: dict[str, Any], params: tuple[float, float, float, float]) -> dict[str, tuple[float, float, float]]:
    """R@1, R@5, MRR on the train and the held-out split for one grid point."""
    ranked = [
        [data["names"][doc] for doc, _, _ in hybrid.fuse(lex, cos, 10, None, params)]
        for lex, cos in zip(data["lexical"], data["cosines"], strict=True)
    ]
    queries = data["queries"]
    train = [i for i, (q, _) in enumerate(queries) if split(q) == "train"]
    held = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
    return {"train": metrics(ranked, queries, train), "held": metrics(ranked, queries, held)}


NORM = ["none"]
TERMS_GRID = {"weight": (0.2, 0.3, 0.4, 0.5, 0.6), "floor": (0.0, 0.1, 0.2), "candidates": (50,)}


def prepare_terms(name: str, tmp: Path, keep: Path | None) -> dict[str, Any]:
    """One set built with the learned expansion: each query's lexical top 50, expansion scores, terms."""
    maker, sample = SETS[name]
    back, queries = maker(tmp / f"{name}-src")
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    out = (keep or tmp) / f"{name}-terms"
    if not (out / "catalog.json").is_file():
        build(tmp / f"{name}-src", out, embedder="terms")
    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    part = searcher._part("tools")  # noqa: SLF001
    docs = searcher._docs("tools", [(i, 0.0, []) for i in range(part.n_docs)])  # noqa: SLF001
    ids = [d["pointer"]["tool_id"] for d in docs]
    names = [back.get(i, i) for i in ids]
    denominator = float(part.expand["denominator"])
    lexical = [IndexReader._ranked(searcher, "tools", q, None, 50) for q, _ in queries]  # noqa: SLF001
    scores = [expansion.scores(searcher._expand_terms("tools", q), denominator) for q, _ in queries]  # noqa: SLF001
    return {"queries": queries, "names": names, "ids": ids, "lexical": lexical, "scores": scores}


def evaluate_terms(data: dict[str, Any], params: tuple[float, float, int]) -> dict[str, tuple[float, float, float]]:
    """R@1, R@5, MRR on the train and held-out split for one point (the name match applied as the reader does)."""
    from toolcat.format.analyzer import analyze_words  # noqa: PLC0415

    weight, floor, candidates = params
    ranked = []
    for (query, _), lex, raw in zip(data["queries"], data["lexical"], data["scores"], strict=True):
        sc = raw
        if NORM[0] == "max" and raw:
            top = max(raw.values())
            sc = {d: v / top for d, v in raw.items() if v >= floor} if top > 0 else {}
        fused = expansion.fuse(lex, sc, 10, (weight, floor if NORM[0] != "max" else 0.0, candidates, 1.0))
        head = [data["ids"][doc] for doc, _, _ in fused[: hybrid.NAME_DEPTH]]
        fused = hybrid.name_boosted(fused, head, set(analyze_words(query)), analyze_words)
        ranked.append([data["names"][doc] for doc, _, _ in fused])
    queries = data["queries"]
    train = [i for i, (q, _) in enumerate(queries) if split(q) == "train"]
    held = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
    return {"train": metrics(ranked, queries, train), "held": metrics(ranked, queries, held)}


def tune_terms(sets: list[str], top: int, keep: Path | None) -> None:
    """The expansion's fusion grid (module docstring), best train points first, the shipped point last."""
    shipped = (terms.WEIGHT, terms.FLOOR, terms.CANDIDATES)
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as tmp_name:
        data = {name: prepare_terms(name, Path(tmp_name), keep) for name in sets}
    points = list(itertools.product(*TERMS_GRID.values()))
    if shipped not in points:
        points.append(shipped)
    results = []
    for params in points:
        got = {name: evaluate_terms(d, params) for name, d in data.items()}
        objective = sum(g["train"][0] + g["train"][2] for g in got.values()) / len(got)
        results.append((objective, params, got))
    results.sort(key=lambda r: -r[0])
    header = ["weight, floor, candidates", "train R@1+MRR (mean)"]
    header += [f"{name} {part} R@1/R@5/MRR" for name in sets for part in ("train", "held out")]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for objective, params, got in [*results[:top], *[r for r in results[top:] if r[1] == shipped]]:
        cells = [", ".join(f"{v:g}" for v in params), f"{objective:.3f}"]
        cells += [" / ".join(f"{v:.3f}" for v in got[name][part]) for name in sets for part in ("train", "held")]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="metatool,bfcl")
    parser.add_argument("--fields", default=None, help="texts.EMBED_FIELDS for this run, comma-separated")
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--embedder", default="minilm-onnx", help="the tier to tune (minilm-tools: the tuned MiniLM)")
    parser.add_argument("--terms", action="store_true", help="tune the learned expansion's fusion")
    parser.add_argument("--keep", type=Path, default=None, help="--terms: keep (and reuse) the builds here")
    parser.add_argument(
        "--model", type=Path, default=None, help="--terms: another trained model (bench/train_terms.py)"
    )
    parser.add_argument("--norm", default="none", help="--terms: none, or max (E over the query's best E)")
    args = parser.parse_args()
    NORM[0] = args.norm
    if args.model is not None:
        terms.MODEL_FILE = args.model
        terms.load_model.cache_clear()
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    if args.terms:
        tune_terms([s for s in args.sets.split(",") if s], args.top, args.keep)
        return
    EMBEDDER[0] = args.embedder
    if args.fields:
        texts.EMBED_FIELDS = tuple(f for f in args.fields.split(",") if f)
    print(f"embedded fields: {', '.join(texts.EMBED_FIELDS)}; shipped fusion: {hybrid.FUSION.get('onnx')}\n")
    sets = [s for s in args.sets.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as tmp_name:
        os.environ.setdefault("TOOLCAT_CACHE_DIR", str(Path(tmp_name) / "cache"))
        data = {name: prepare(name, Path(tmp_name)) for name in sets}
    points = [p for p in itertools.product(*GRID.values()) if p[1] <= p[0]]
    if "onnx" in hybrid.FUSION and hybrid.FUSION["onnx"] not in points:
        points.append(hybrid.FUSION["onnx"])
    results = []
    for params in points:
        got = {name: evaluate(d, params) for name, d in data.items()}
        train_mrr = sum(g["train"][2] for g in got.values()) / len(got)
        results.append((train_mrr, params, got))
    results.sort(key=lambda r: -r[0])
    shipped = [r for r in results[args.top :] if r[1] == hybrid.FUSION.get("onnx")]
    header = ["weak, strong, gate, floor", "train MRR (mean)"]
    header += [f"{name} {part} R@1/R@5/MRR" for name in sets for part in ("train", "held out")]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for train_mrr, params, got in [*results[: args.top], *shipped]:
        cells = [", ".join(f"{v:g}" for v in params), f"{train_mrr:.3f}"]
        cells += [" / ".join(f"{v:.3f}" for v in got[name][part]) for name in sets for part in ("train", "held")]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

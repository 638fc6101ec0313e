"""A cross-encoder re-ranker over the first stage's top 20 (issue 33): trained, measured, and its cost.

    python bench/train_reranker.py collect        # build the four sets (default tier), rank every query's top 20
    python bench/train_reranker.py train [--minutes 38 | --steps N --eval-every K] [--layers 3] [--out $TMPDIR/toolcat-rerank/rerank.safetensors]
    python bench/train_reranker.py measure [--adapter PATH]   # held-out table, reranker off / on, and CPU per query

Needs the ``[semantic]`` extra (torch, transformers, the bundled all-MiniLM-L6-v2). Work files go to
``$TMPDIR/toolcat-rerank`` (``--work``).

1. The first stage: each labelled set (bench_search_tiers.SETS: the example's evals, GitHub, 2,000 MetaTool queries
   sampled with seed 0, every BFCL query) built with the default tier (``minilm-onnx``) and ranked by
   ``find_tool``'s engine (``Searcher.rank_tools(query, limit=20)``, no reranker). MetaTool's training queries are
   more of its TRAIN split: at most ``--per-tool`` a tool (seed 0), like bench/train_encoder.py.
2. Training data: TRAIN-split queries only (``bench_search.split``). BFCL tools that a held-out query asks for are
   never a positive or a negative (and a query asking for one is dropped). Validation by tool
   (``train_encoder.val_tool``, 15%): those tools are never trained on; the training queries that ask for one
   choose the checkpoint, the WEIGHT and the DEPTH. Held-out queries choose nothing. A query's group is its right
   tool and the first stage's top-20 mistakes (those ranked above the right tool first), ``--negatives`` of them.
   The text of a tool is what the reranker hook gives it (``rerank.hit_text``: id words, summary, tags).
3. Model: all-MiniLM-L6-v2's first ``--layers`` layers, a (query, tool text) pair in, mean-pooled, a linear head,
   sigmoid out; LoRA (``train_encoder.lora``, rank ``--rank``) on every projection, the rest frozen. Loss: softmax
   cross-entropy over the group plus binary cross-entropy per pair (so the sigmoid is a probability). One thread.
4. Written as float16 safetensors (``adapter.write_adapter``: sorted keys, the same tensors give the same bytes):
   the LoRA pairs and ``head.weight`` / ``head.bias``; :mod:`toolcat.engines.reranker` loads it (torch, or int8
   on onnxruntime through the project's ONNX graph writer). Measured in docs/search.md: it does not pay, and
   ships nothing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import open_build, split  # noqa: E402
from bench_search_tiers import SETS  # noqa: E402
from train_encoder import lora, val_tool  # noqa: E402
from train_terms import parallel_source  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.reader.search import rerank  # noqa: E402
from toolcat.reader.search.searcher import Searcher  # noqa: E402

REPO = BENCH.parent
WORK = Path(tempfile.gettempdir()) / "toolcat-rerank"
OUT = WORK / "rerank.safetensors"  # not shipped: it did not pay for itself (docs/search.md)
GRID_WEIGHTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
GRID_DEPTHS = [10, 20]


def log(*parts: Any) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


# ---------------------------------------------------------------- 1. the first stage


def collect(work: Path, per_tool: int) -> dict[str, Any]:
    """Every set's queries with the first stage's top 20 (label, score, hook text) and every tool's hook text."""
    cache = work / "first.pkl"
    if cache.is_file():
        return pickle.loads(cache.read_bytes())  # type: ignore[no-any-return]  # noqa: S301 - this script's own file
    os.environ.setdefault("TOOLCAT_CACHE_DIR", str(work / "cache"))
    data: dict[str, Any] = {}
    sources = {**SETS, "parallel": (parallel_source, None)}  # BFCL parallel_multiple: training only
    for name, (maker, sample) in sources.items():
        src, out = work / f"{name}-src", work / f"{name}-minilm-onnx"
        back, queries = maker(src)
        evaluated = random.Random(0).sample(queries, sample) if sample and len(queries) > sample else queries
        extra: list[tuple[str, set[str]]] = []
        if sample:  # more TRAIN-split queries for training, at most ``per_tool`` a tool
            seen = {q for q, _ in evaluated}
            by_tool: dict[str, list[tuple[str, set[str]]]] = {}
            for q, gold in queries:
                if split(q) == "train" and q not in seen:
                    by_tool.setdefault(min(gold), []).append((q, gold))
            rng = random.Random(0)
            extra = [x for t in sorted(by_tool) for x in rng.sample(by_tool[t], min(per_tool, len(by_tool[t])))]
        if not (out / "catalog.json").is_file():
            started = time.time()
            build(src, out, embedder="minilm-onnx")
            log(f"{name}: built in {time.time() - started:.0f}s")
        searcher = Searcher(*open_build(out))
        tier = searcher.semantic_tier()
        assert tier is not None
        n = len(tier.matrix("tools"))
        docs = searcher._docs("tools", [(i, 0.0, []) for i in range(n)])  # noqa: SLF001
        texts = {
            back.get(d["pointer"]["tool_id"], d["pointer"]["tool_id"]): rerank.hit_text(d["pointer"]) for d in docs
        }
        rows = []
        started = time.time()
        for q, gold in [*((q, g) for q, g in evaluated), *extra]:
            hits = searcher.rank_tools(q, limit=20)
            top = [(back.get(p["tool_id"], p["tool_id"]), s, rerank.hit_text(p)) for p, s, _ in hits]
            bench = name in SETS and len(rows) < len(evaluated)
            rows.append({"query": q, "gold": set(gold), "split": split(q), "hits": top, "bench": bench})
        log(
            f"{name}: {len(texts)} tools, {len(evaluated)} bench queries + {len(extra)} more train ({time.time() - started:.0f}s)"
        )
        data[name] = {"texts": texts, "rows": rows, "build": str(out), "back": back}
    cache.write_bytes(pickle.dumps(data))
    return data


def partition(
    data: dict[str, Any], val_pct: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]], dict[str, set[str]]]:
    """(training rows, validation rows, tools never trained on) per set; held-out rows are in neither."""
    train, val, banned = {}, {}, {}
    held_bfcl = {g for r in data["bfcl"]["rows"] if r["split"] == "test" for g in r["gold"]}
    for name, d in data.items():
        # BFCL's held-out tools (by function name, in parallel_multiple too): never a positive or a negative
        masked = {t for t in d["texts"] if t in held_bfcl} if name in ("bfcl", "parallel") else set()
        val_tools = {t for t in d["texts"] if val_tool(t, val_pct)} - masked
        banned[name] = masked | val_tools
        train[name], val[name] = [], []
        for r in d["rows"]:
            if r["split"] != "train" or r["gold"] & masked:
                continue
            (val[name] if r["gold"] & val_tools else train[name]).append(r)
    return train, val, banned


# ---------------------------------------------------------------- 2. the model


class Model:
    """MiniLM's first ``layers`` layers over a (query, text) pair, mean-pooled, a linear head; LoRA on every projection."""

    def __init__(self, layers: int, rank: int, alpha: float, max_tokens: int) -> None:
        import torch  # noqa: PLC0415
        from transformers import AutoModel, AutoTokenizer  # noqa: PLC0415

        from toolcat.engines.adapter import TARGETS  # noqa: PLC0415
        from toolcat.engines.embedding import _bundled_minilm  # noqa: PLC0415

        path = str(_bundled_minilm())
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.bert = AutoModel.from_pretrained(path)
        self.bert.encoder.layer = self.bert.encoder.layer[:layers]
        self.bert.config.num_hidden_layers = layers
        for p in self.bert.parameters():
            p.requires_grad_(False)
        self.wrapped: dict[str, Any] = {}
        for i, layer in enumerate(self.bert.encoder.layer):
            for target in TARGETS:
                parent = layer
                *dirs, leaf = target.split(".")
                for part in dirs:
                    parent = getattr(parent, part)
                module = lora(getattr(parent, leaf), rank, alpha)
                setattr(parent, leaf, module)
                self.wrapped[f"encoder.layer.{i}.{target}.weight"] = module
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)
        self.max_tokens, self.rank, self.alpha, self.layers = max_tokens, rank, alpha, layers

    def params(self) -> list[Any]:
        """The trained parameters: the LoRA pairs and the head."""
        return [p for m in self.wrapped.values() for p in (m.A, m.B)] + list(self.head.parameters())

    def logits(self, query: str | list[str], texts: list[str]) -> Any:
        """One logit per (query, text) pair (a query per text, or one for all)."""
        queries = [query] * len(texts) if isinstance(query, str) else query
        batch = self.tokenizer(
            queries,
            texts,
            padding=True,
            truncation="longest_first",
            max_length=self.max_tokens,
            return_tensors="pt",
            return_token_type_ids=False,  # one segment's type: the ONNX graph writer's
        )
        h = self.bert(**batch).last_hidden_state
        mask = batch["attention_mask"][..., None].float()
        pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """The hook's scores: sigmoid of the logits, without gradients."""
        import torch  # noqa: PLC0415

        with torch.no_grad():
            return [float(x) for x in torch.sigmoid(self.logits(query, texts))]

    def state(self) -> dict[str, Any]:
        """The adapter's tensors as written: LoRA pairs (the scale folded into B) and the head."""
        out = {}
        for key, m in self.wrapped.items():
            out[f"{key}.lora_A"] = m.A.detach().clone().numpy()
            out[f"{key}.lora_B"] = (m.B.detach().clone() * (self.alpha / self.rank)).numpy()
        out["head.weight"] = self.head.weight.detach().clone().numpy()
        out["head.bias"] = self.head.bias.detach().clone().numpy()
        return out


def mixed(row: dict[str, Any], extra: list[float], weight: float, depth: int) -> list[str]:
    """The top 10 labels after the hook's mixing (rerank.rerank) at ``weight`` over the first ``depth`` hits."""
    hits = [(i, s, []) for i, (_, s, _) in enumerate(row["hits"])]
    pointers = [{} for _ in hits[:depth]]
    saved = rerank.WEIGHT
    rerank.WEIGHT = weight
    try:
        out = rerank.rerank(row["query"], hits, pointers, lambda _q, _t: extra[:depth])
    finally:
        rerank.WEIGHT = saved
    return [row["hits"][i][0] for i, _, _ in out[:10]]


def metrics(ranked: list[list[str]], golds: list[set[str]]) -> tuple[float, float, float]:
    """R@1, R@5, MRR@10."""
    r1 = r5 = mrr = 0.0
    for top, gold in zip(ranked, golds, strict=True):
        at = next((k for k, label in enumerate(top[:10]) if label in gold), None)
        if at is not None:
            r1, r5, mrr = r1 + (at == 0), r5 + (at < 5), mrr + 1 / (at + 1)
    n = max(1, len(golds))
    return r1 / n, r5 / n, mrr / n


def choose(
    rows: dict[str, list[dict[str, Any]]], extra: dict[str, list[list[float]]]
) -> tuple[float, int, float, dict[str, tuple[float, ...]]]:
    """The (weight, depth) with the best mean R@1 over the sets' ``rows`` (R@5 as a tie-break), and its figures."""
    best: tuple[float, float, int, float, dict[str, tuple[float, ...]]] | None = None
    for depth in GRID_DEPTHS:
        for weight in GRID_WEIGHTS:
            got = {
                name: metrics(
                    [mixed(r, e, weight, depth) for r, e in zip(rs, extra[name], strict=True)], [r["gold"] for r in rs]
                )
                for name, rs in rows.items()
                if rs
            }
            r1 = statistics.mean(v[0] for v in got.values())
            r5 = statistics.mean(v[1] for v in got.values())
            if best is None or (r1, r5) > (best[0], best[1]):
                best = (r1, r5, depth, weight, got)
    assert best is not None
    return best[3], best[2], best[0], best[4]


def score_rows(model: Model, rows: list[dict[str, Any]]) -> list[list[float]]:
    return [model.scores(r["query"], [t for _, _, t in r["hits"]]) if r["hits"] else [] for r in rows]


def train(args: argparse.Namespace) -> None:
    import torch  # noqa: PLC0415

    from toolcat.engines.adapter import write_adapter  # noqa: PLC0415

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    data = collect(args.work, args.per_tool)
    train_rows, val_rows, banned = partition(data, args.val_pct)
    groups = []  # (set, query, [positive text, negative texts...])
    for name, rows in train_rows.items():
        texts = data[name]["texts"]
        for r in rows:
            labels = [label for label, _, _ in r["hits"]]
            right = next((k for k, label in enumerate(labels) if label in r["gold"]), len(labels))
            wrong = [label for label in labels if label not in r["gold"] and label not in banned[name]]
            above = [label for label in labels[:right] if label in wrong]
            negatives = (above + [label for label in wrong if label not in above])[: args.negatives]
            positive = min(g for g in r["gold"] if g in texts)
            if negatives:
                groups.append((name, r["query"], [texts[positive], *(texts[n] for n in negatives)]))
    val = {name: rng.sample(rows, min(args.val_queries, len(rows))) for name, rows in val_rows.items() if name in SETS}
    sizes = {n: sum(g[0] == n for g in groups) for n in data}
    others = sum(v for n, v in sizes.items() if n != "metatool")
    share = {
        n: (v if n != "metatool" else min(v, others * args.metatool_share / (1 - args.metatool_share)))
        for n, v in sizes.items()
    }
    by_set = {n: [g for g in groups if g[0] == n] for n in data}
    names = [n for n in data if by_set[n]]
    log(
        "training groups: "
        + ", ".join(f"{n} {sum(g[0] == n for g in groups)}" for n in data)
        + "; validation queries: "
        + ", ".join(f"{n} {len(v)}" for n, v in val.items())
    )
    model = Model(args.layers, args.rank, args.alpha, args.max_tokens)
    params = model.params()
    log(f"model: {args.layers} layers, {sum(p.numel() for p in params):,} trained parameters")
    optimiser = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    first = {name: [[s for _, s, _ in r["hits"]] for r in rows] for name, rows in val.items()}

    def validate(step: int) -> float:
        model.bert.eval()
        started = time.time()
        extra = {name: score_rows(model, rows) for name, rows in val.items()}
        weight, depth, r1, got = choose(val, extra)
        base = {
            name: metrics([[label for label, _, _ in r["hits"][:10]] for r in rows], [r["gold"] for r in rows])
            for name, rows in val.items()
            if rows
        }
        log(
            f"step {step} validation: weight {weight} depth {depth} mean R@1 {r1:.3f} (first stage"
            f" {statistics.mean(v[0] for v in base.values()):.3f}) "
            + " ".join(f"{n} {v[0]:.3f}/{v[1]:.3f} (first {base[n][0]:.3f}/{base[n][1]:.3f})" for n, v in got.items())
            + f" ({time.time() - started:.0f}s)"
        )
        model.bert.train()
        return r1

    del first
    best = (validate(-1), -1, model.state())
    started = time.time()
    step = 0
    next_eval = started + args.eval_minutes * 60
    model.bert.train()
    while (step < args.steps) if args.steps else (time.time() - started < args.minutes * 60):
        batch = [rng.choice(by_set[n]) for n in rng.choices(names, weights=[share[n] for n in names], k=args.batch)]
        queries = [q for _, q, ts in batch for _ in ts]
        texts = [t for _, _, ts in batch for t in ts]
        logits = model.logits(queries, texts)
        loss = torch.zeros(())
        at = 0
        labels = torch.zeros(len(texts))
        for _, _, ts in batch:
            labels[at] = 1.0
            loss = loss + torch.nn.functional.cross_entropy(
                logits[at : at + len(ts)][None], torch.zeros(1, dtype=torch.long)
            )
            at += len(ts)
        loss = loss / len(batch) + torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 20 == 0:
            log(f"step {step} loss {loss.item():.3f} ({time.time() - started:.0f}s)")
        step += 1
        if (step % args.eval_every == 0) if args.eval_every else (time.time() > next_eval):
            r1 = validate(step)
            if r1 > best[0]:
                best = (r1, step, model.state())
                write_adapter(args.out, best[2], meta(args, best[1]))
            next_eval = time.time() + args.eval_minutes * 60
    r1 = validate(step)
    if r1 > best[0]:
        best = (r1, step, model.state())
    write_adapter(args.out, best[2], meta(args, best[1]))
    log(
        f"kept step {best[1]} (validation mean R@1 {best[0]:.3f}); wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} KB)"
    )


def meta(args: argparse.Namespace, step: int) -> dict[str, str]:
    return {
        "base": "all-MiniLM-L6-v2",
        "layers": str(args.layers),
        "rank": str(args.rank),
        "max_tokens": str(args.max_tokens),
        "step": str(step),
        "trainer": "bench/train_reranker.py",
    }


# ---------------------------------------------------------------- 3. measured


def measure(args: argparse.Namespace) -> None:
    """Held-out R@1 / R@5 / MRR, first stage against reranked (DEPTH 10 and 20, WEIGHT chosen on train), and cost."""
    import torch  # noqa: PLC0415

    from toolcat.engines.reranker import load_reranker, load_reranker_onnx  # noqa: PLC0415

    torch.set_num_threads(1)
    data = collect(args.work, args.per_tool)
    _, val_rows, _ = partition(data, args.val_pct)
    models = {"torch": load_reranker(args.adapter), "onnx int8": load_reranker_onnx(args.adapter, args.work / "graphs")}
    caches: dict[str, dict[tuple[str, str], float]] = {kind: {} for kind in models}

    def cached(kind: str) -> Any:
        cache, model = caches[kind], models[kind]

        def scores(query: str, texts: list[str]) -> list[float]:
            todo = [t for t in texts if (query, t) not in cache]
            if todo:
                cache.update(zip(((query, t) for t in todo), model(query, todo), strict=True))
            return [cache[(query, t)] for t in texts]

        return scores

    started = time.time()
    val = {
        name: random.Random(args.seed).sample(rows, min(args.val_queries, len(rows)))
        for name, rows in val_rows.items()
        if name in SETS
    }
    chosen: dict[tuple[str, int], float] = {}
    for kind in models:
        extra = {
            name: [cached(kind)(r["query"], [t for _, _, t in r["hits"]]) for r in rows] for name, rows in val.items()
        }
        for depth in GRID_DEPTHS:
            saved = GRID_DEPTHS[:]
            GRID_DEPTHS[:] = [depth]
            weight, _, r1, got = choose(val, extra)
            GRID_DEPTHS[:] = saved
            chosen[(kind, depth)] = weight
            saved_weights = GRID_WEIGHTS[:]
            GRID_WEIGHTS[:] = [1.0]  # the reranker's order alone, for the record
            alone = choose(val, extra)[3]
            GRID_WEIGHTS[:] = saved_weights
            log(
                f"validation, {kind}, depth {depth}, reranker alone: "
                + " ".join(f"{n} {v[0]:.3f}/{v[1]:.3f}" for n, v in alone.items())
            )
            log(
                f"validation (train split), {kind}, depth {depth}: weight {weight}, mean R@1 {r1:.3f}; "
                + " ".join(f"{n} {v[0]:.3f}/{v[1]:.3f}" for n, v in got.items())
                + f" ({time.time() - started:.0f}s)"
            )
    rows_out = []
    saved_weight, saved_depth = rerank.WEIGHT, rerank.DEPTH
    for name, d in data.items():
        if name not in SETS:
            continue
        searcher = Searcher(*open_build(Path(d["build"])))
        held = [r for r in d["rows"] if r["bench"] and r["split"] == "test"]
        golds = [r["gold"] for r in held]
        back = d["back"]
        variants: list[tuple[str, str | None, int]] = [("first stage (default tier)", None, 0)]
        variants += [(f"+ reranker ({kind}), depth {depth}", kind, depth) for kind in models for depth in GRID_DEPTHS]
        for label, kind, depth in variants:
            rerank.set_reranker(cached(kind) if kind else None)
            shown = label
            if kind:
                rerank.WEIGHT, rerank.DEPTH = chosen[(kind, depth)], depth
                shown += f", weight {rerank.WEIGHT}"
            ranked = [
                [back.get(p["tool_id"], p["tool_id"]) for p, _, _ in searcher.rank_tools(r["query"], limit=10)]
                for r in held
            ]
            r1, r5, mrr = metrics(ranked, golds)
            rows_out.append(f"| {name} ({len(held)} held out) | {shown} | {r1:.3f} / {r5:.3f} / {mrr:.3f} |")
            log(rows_out[-1])
        rerank.set_reranker(None)
        rerank.WEIGHT, rerank.DEPTH = saved_weight, saved_depth
    print("\n| set | ranking | held-out R@1 / R@5 / MRR@10 |\n|---|---|---|")
    print("\n".join(rows_out))
    # cost: CPU per query for re-scoring the top 20 (and 10) hook texts, one thread, models alternating
    sample = [
        r for d in data.values() for r in d["rows"] if r["bench"] and r["split"] == "test" and len(r["hits"]) >= 20
    ]
    sample = random.Random(0).sample(sample, min(100, len(sample)))
    times: dict[tuple[str, int], list[float]] = {(kind, depth): [] for kind in models for depth in GRID_DEPTHS}
    for model in models.values():
        model(sample[0]["query"], [t for _, _, t in sample[0]["hits"]])  # warm
    for r in sample:
        for depth in GRID_DEPTHS:
            for kind, model in models.items():
                t0 = time.process_time()
                model(r["query"], [t for _, _, t in r["hits"][:depth]])
                times[(kind, depth)].append((time.process_time() - t0) * 1000)
    for (kind, depth), got_times in times.items():
        log(
            f"cost {kind}, 1 thread, top {depth}: CPU ms per query p50 {statistics.median(got_times):.1f},"
            f" p90 {statistics.quantiles(got_times, n=10)[-1]:.1f} ({len(got_times)} held-out queries)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=("collect", "train", "measure"))
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--adapter", type=Path, default=OUT)
    parser.add_argument("--minutes", type=float, default=30.0, help="training wall time")
    parser.add_argument("--eval-minutes", type=float, default=10.0)
    parser.add_argument(
        "--steps",
        type=int,
        default=0,
        help="train this many steps instead of --minutes (seeded, one thread: a run no clock decides)",
    )
    parser.add_argument("--eval-every", type=int, default=0, help="validate every N steps instead of --eval-minutes")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=32.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=4, help="queries a step (each with its group)")
    parser.add_argument("--negatives", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--per-tool", type=int, default=8)
    parser.add_argument("--metatool-share", type=float, default=0.4)
    parser.add_argument("--val-pct", type=int, default=15)
    parser.add_argument("--val-queries", type=int, default=40, help="validation queries a set, at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.phase == "collect":
        data = collect(args.work, args.per_tool)
        train_rows, val_rows, _ = partition(data, args.val_pct)
        for name in data:
            log(f"{name}: {len(train_rows[name])} training, {len(val_rows[name])} validation queries")
    elif args.phase == "train":
        train(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()

"""Fine-tune all-MiniLM-L6-v2 for tool retrieval: a low-rank adapter for ``--embedder minilm-tools`` (docs/search.md).

    python bench/train_encoder.py [--out compiler/engines/minilm_tools.safetensors] [--steps 240] [--rank 8]
    python bench/train_encoder.py --cost    # CPU per 1,000 embedded texts and query p50, minilm-onnx vs minilm-tools

Needs the ``[semantic]`` extra (torch, sentence-transformers' bundled all-MiniLM-L6-v2); ``make build`` never runs
it: the build reads the committed adapter (float16 safetensors) with numpy and merges it into the model's weights
before it writes the ONNX graph (:mod:`toolcat.engines.adapter`).

1. Data: the TRAIN splits only, built exactly as bench/train_terms.py builds them (``train_terms.load_sets``:
   MetaTool, BFCL live_multiple + multiple, BFCL parallel_multiple, the GitHub MCP list, the example's evals;
   ``bench_search.split``; BFCL tools that a held-out query asks for are left out entirely). A tool is a
   document as the build embeds it (``texts.doc_terms_text``, cut at 128 tokens as the build cuts it).
2. Validation by tool: in every catalogue, the tools whose sha256(id) mod 100 < ``--val-pct`` are never trained on
   (not as positives, not as negatives); the training queries that ask for one are the validation queries. The
   checkpoint kept is the one with the best validation R@1 (cosine alone, mean over catalogues): held-out queries
   are never looked at.
3. Guard against memorising MetaTool (199 tools, 14,000 training queries): at most ``--per-tool`` queries a tool,
   and MetaTool's share of the batches capped at ``--metatool-share``.
4. Loss: InfoNCE with in-batch negatives (MultipleNegativesRankingLoss), one mined hard negative per query (a
   tool of the same catalogue that the base model ranks above or near the right one), batches drawn from one
   catalogue at a time, other queries' right tools masked out of a query's negatives.
5. Model: LoRA (rank ``--rank``) on every attention and feed-forward projection of the top ``--layers`` (4 and 5
   of 6), the base frozen. The layers below are run once per text (their output cached in float16; the cached
   path gives sentence-transformers' rows to a cosine of 1.00000, checked at start), so a step costs two layers:
   on 2 shared cores the whole run takes about 30 minutes. Written as float16 ``A``/``B`` pairs
   (``W += B @ A``, the LoRA scale folded into ``B``) in a safetensors file with sorted keys
   (:func:`toolcat.engines.adapter.write_adapter`): the same tensors give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from train_terms import Set, load_sets  # noqa: E402

from toolcat.engines.adapter import TARGETS, write_adapter  # noqa: E402

REPO = BENCH.parent
OUT = REPO / "compiler" / "engines" / "minilm_tools.safetensors"
MAX_TOKENS = 128  # embedding.DOCUMENT_TOKENS: what the build cuts a document at


def val_tool(tool_id: str, pct: int) -> bool:
    """A validation tool: never trained on (sha256 of its id mod 100 < pct)."""
    return int(hashlib.sha256(tool_id.encode()).hexdigest()[:8], 16) % 100 < pct


def lora(linear: Any, rank: int, alpha: float) -> Any:
    """A LoRA-wrapped ``nn.Linear``: the base frozen, ``B`` zero at first (so training starts at MiniLM itself)."""
    import torch  # noqa: PLC0415

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = linear
            for p in self.base.parameters():
                p.requires_grad_(False)
            self.A = torch.nn.Parameter(torch.randn(rank, linear.in_features) / math.sqrt(linear.in_features))
            self.B = torch.nn.Parameter(torch.zeros(linear.out_features, rank))
            self.scale = alpha / rank

        def forward(self, x: Any) -> Any:
            """The base output plus the low-rank update."""
            return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale

    return Wrapped()


def cost(sets_cache: Path, rounds: int = 2) -> None:
    """CPU-seconds to embed 1,000 tool texts as the build does, and a query's CPU p50, base and tuned alternating."""
    import os  # noqa: PLC0415
    import statistics  # noqa: PLC0415

    os.environ.setdefault("TOOLCAT_CACHE_DIR", tempfile.mkdtemp(prefix="train-encoder-cost-"))
    from toolcat.engines.embedding import build_threads, load_embedder  # noqa: PLC0415

    sets = pickle.loads(sets_cache.read_bytes())  # noqa: S301 - this script's own file
    texts = [t for name in ("bfcl", "parallel") for t in sets[name].texts][:1000]
    queries = [q for q, _, _ in sets["bfcl"].queries][:200]
    models = {spec: load_embedder(spec) for spec in ("minilm-onnx", "minilm-tools")}
    for model in models.values():
        model.embed(texts[:8], documents=True)  # graphs built and sessions made before timing
        model.embed(queries[:2])
    print(f"{len(texts)} tool texts, {len(queries)} queries, build threads {build_threads()}")
    for r in range(rounds):
        for spec, model in models.items():
            started = time.process_time()
            model.embed(texts, documents=True)
            build = time.process_time() - started
            times = []
            for q in queries:
                t0 = time.process_time()
                model.embed([q])
                times.append((time.process_time() - t0) * 1000)
            print(
                f"round {r} {spec:13} build {build:.1f} CPU-s / 1,000 texts, query CPU p50 {statistics.median(times):.2f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--layers", default="4,5", help="the layers adapted (those below run once, frozen)")
    parser.add_argument("--val-pool", type=int, default=400, help="a catalogue's validation candidates, at most")
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--scale", type=float, default=20.0, help="InfoNCE logit scale (1 / temperature)")
    parser.add_argument("--val-pct", type=int, default=15)
    parser.add_argument("--per-tool", type=int, default=8, help="MetaTool training queries kept per tool")
    parser.add_argument("--metatool-share", type=float, default=0.25)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-train-encoder-sets.pkl")
    parser.add_argument("--cost", action="store_true", help="measure embedding cost, base against tuned, and stop")
    args = parser.parse_args()
    if args.cost:
        cost(args.cache)
        return

    import torch  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    from toolcat.engines.embedding import _bundled_minilm, load_embedder  # noqa: PLC0415

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    if args.cache.is_file():  # the compiled catalogues (their texts and labelled queries), kept between runs
        sets = pickle.loads(args.cache.read_bytes())  # noqa: S301 - this script's own file
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sets = load_sets(Path(tmp))
        args.cache.write_bytes(pickle.dumps(sets))
    masks = {"bfcl": sets.pop("bfcl_train_mask"), "parallel": sets.pop("parallel_mask")}
    catalogues: dict[str, Set] = sets  # type: ignore[assignment]

    # ---- train / validation tools, training examples, validation queries
    base = load_embedder("minilm-onnx")
    data: dict[str, dict[str, Any]] = {}
    for name, s in catalogues.items():
        masked = set(masks.get(name, set()))  # BFCL's held-out tools: never a positive, negative or candidate
        val = {i for i, tool_id in enumerate(s.ids) if val_tool(tool_id, args.val_pct)} - masked
        train_tools = [i for i in range(len(s.ids)) if i not in masked and i not in val]
        examples, val_queries = [], []
        for text, golds, part in s.queries:
            if part != "train" or set(golds) & masked:
                continue
            if set(golds) & val:
                val_queries.append((text, golds))
            else:
                examples.append((text, golds))
        if name == "metatool":
            by_tool: dict[int, list[tuple[str, list[int]]]] = {}
            for ex in examples:
                by_tool.setdefault(ex[1][0], []).append(ex)
            examples = [
                ex
                for tool in sorted(by_tool)
                for ex in rng.sample(by_tool[tool], min(args.per_tool, len(by_tool[tool])))
            ]
            val_queries = rng.sample(val_queries, min(300, len(val_queries)))
        # hard negatives: the base model's best-ranked wrong training tools (top 5), one drawn per use
        started = time.time()
        doc_vecs = base.embed(s.texts, documents=True)
        q_vecs = base.embed([t for t, _ in examples]) if examples else np.zeros((0, doc_vecs.shape[1]))
        allowed = np.full(len(s.ids), -9.0, dtype=np.float32)
        allowed[train_tools] = 0.0
        hard = []
        for qv, (_, golds) in zip(q_vecs, examples, strict=True):
            scores = doc_vecs @ qv + allowed
            scores[golds] = -9.0
            hard.append([int(i) for i in np.argsort(-scores)[:5]])
        data[name] = {
            "examples": examples,
            "hard": hard,
            "val": val_queries,
            "candidates": [i for i in range(len(s.ids)) if i not in masked],
        }
        print(
            f"{name}: {len(s.ids)} tools ({len(train_tools)} train, {len(val)} validation, {len(masked)} held out),"
            f" {len(examples)} examples, {len(val_queries)} validation queries ({time.time() - started:.0f}s)",
            flush=True,
        )

    # ---- the model: the lower layers frozen and run once (their output cached), LoRA on the top ``--layers``
    model = SentenceTransformer(str(_bundled_minilm()), device="cpu")
    bert = model[0].auto_model
    bert.config._attn_implementation = "eager"  # noqa: SLF001  # an additive float mask, as layer() below passes it
    tokenizer = model.tokenizer
    for p in bert.parameters():
        p.requires_grad_(False)
    top = sorted(int(x) for x in args.layers.split(","))
    first = top[0]
    layers = list(bert.encoder.layer)
    wrapped = {}
    for i in top:
        for path in TARGETS:
            parent = layers[i]
            *dirs, leaf = path.split(".")
            for part in dirs:
                parent = getattr(parent, part)
            module = lora(getattr(parent, leaf), args.rank, args.alpha)
            setattr(parent, leaf, module)
            wrapped[f"encoder.layer.{i}.{path}.weight"] = module
    params = [p for m in wrapped.values() for p in (m.A, m.B)]
    print(f"adapter: {sum(p.numel() for p in params):,} parameters on layers {top}", flush=True)

    def lower(texts: list[str]) -> list[Any]:
        """Each text's hidden states after the frozen layers (float16, its own length)."""
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
        rows: dict[int, Any] = {}
        with torch.no_grad():
            for k in range(0, len(order), 32):
                idx = order[k : k + 32]
                batch = tokenizer(
                    [texts[j] for j in idx], padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
                )
                h = bert.embeddings(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"])
                add = (1.0 - batch["attention_mask"][:, None, None, :].float()) * -1e9
                for layer in layers[:first]:
                    h = layer(h, add)
                    h = h[0] if isinstance(h, tuple) else h
                for r, j in enumerate(idx):
                    rows[j] = h[r, : int(batch["attention_mask"][r].sum())].to(torch.float16).clone()
        return [rows[j] for j in range(len(texts))]

    def upper(states: list[Any]) -> Any:
        """The adapted top layers over cached states, mean-pooled and normalised (what the ONNX graph computes)."""
        width = max(x.shape[0] for x in states)
        h = torch.zeros(len(states), width, states[0].shape[1])
        mask = torch.zeros(len(states), width)
        for r, x in enumerate(states):
            h[r, : x.shape[0]] = x.float()
            mask[r, : x.shape[0]] = 1.0
        add = (1.0 - mask[:, None, None, :]) * -1e9
        for layer in layers[first:]:
            h = layer(h, add)
            h = h[0] if isinstance(h, tuple) else h
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=1)

    def upper_batched(states: list[Any]) -> Any:
        order = sorted(range(len(states)), key=lambda k: states[k].shape[0])
        out = torch.zeros(len(states), states[0].shape[1])
        for k in range(0, len(order), 64):
            idx = order[k : k + 64]
            out[idx] = upper([states[j] for j in idx])
        return out

    # which texts are ever run: training tools used as positives or negatives, validation candidates, queries
    started = time.time()
    for name, d in data.items():
        s = catalogues[name]
        cands = d["candidates"]
        if len(cands) > args.val_pool:  # every validation tool, and a fixed sample of the others
            val_tools = {g for _, golds in d["val"] for g in golds}
            rest = [i for i in cands if i not in val_tools]
            cands = sorted(val_tools | set(random.Random(1).sample(rest, args.val_pool - len(val_tools))))
            d["candidates"] = cands
        used = sorted(
            {g for _, golds in d["examples"] for g in golds} | {h for row in d["hard"] for h in row} | set(cands)
        )
        states = lower([s.texts[i] for i in used])
        d["doc_states"] = dict(zip(used, states, strict=True))
        d["query_states"] = lower([t for t, _ in d["examples"]])
        d["val_states"] = lower([t for t, _ in d["val"]])
        print(
            f"{name}: {len(used)} tools, {len(d['examples']) + len(d['val'])} queries through layers < {first} ({time.time() - started:.0f}s)",
            flush=True,
        )
    with torch.no_grad():  # the cached path gives sentence-transformers' own rows (before any training)
        model.max_seq_length = MAX_TOKENS
        probe = [catalogues["github"].texts[0], "open an issue in a repository"]
        ours, theirs = upper(lower(probe)), model.encode(probe, convert_to_tensor=True, normalize_embeddings=True)
        print(f"cached path vs sentence-transformers: cosine >= {float((ours * theirs).sum(1).min()):.5f}", flush=True)

    def validate() -> dict[str, float]:
        bert.eval()
        got = {}
        with torch.no_grad():
            for name, d in data.items():
                if not d["val"]:
                    continue
                cands = d["candidates"]
                docs = upper_batched([d["doc_states"][i] for i in cands])
                queries = upper_batched(d["val_states"])
                best = (queries @ docs.T).argmax(1).tolist()
                got[name] = sum(cands[t] in golds for t, (_, golds) in zip(best, d["val"], strict=True)) / len(d["val"])
        bert.train()
        return got

    def summary(got: dict[str, float]) -> float:
        return sum(got.values()) / max(1, len(got))

    names = [n for n in data if data[n]["examples"]]
    sizes = {n: len(data[n]["examples"]) for n in names}
    others = sum(v for n, v in sizes.items() if n != "metatool")
    weights = {
        n: (v if n != "metatool" else min(v, others * args.metatool_share / (1 - args.metatool_share)))
        for n, v in sizes.items()
    }
    print("batch shares: " + ", ".join(f"{n} {w / sum(weights.values()):.2f}" for n, w in weights.items()), flush=True)
    optimiser = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / 20) * max(0.0, 1 - step / args.steps)
    )

    def save(best: tuple[float, int, dict[str, Any]]) -> None:
        """Write the best adapter so far (also during training: a run cut short keeps it)."""
        tensors = {}
        for key, (a, b) in best[2].items():
            tensors[f"{key}.lora_A"] = a.numpy()
            tensors[f"{key}.lora_B"] = (b * (args.alpha / args.rank)).numpy()  # the scale folded into B
        meta = {
            "base": "all-MiniLM-L6-v2",
            "rank": str(args.rank),
            "layers": args.layers,
            "step": str(best[1]),
            "trainer": "bench/train_encoder.py",
        }
        write_adapter(args.out, tensors, meta)

    got = validate()
    best = (summary(got), -1, {k: (m.A.detach().clone(), m.B.detach().clone()) for k, m in wrapped.items()})
    print(f"step -1 validation R@1 {summary(got):.3f} " + " ".join(f"{k} {v:.3f}" for k, v in got.items()), flush=True)
    started = time.time()
    bert.train()
    for step in range(args.steps):
        name = rng.choices(names, weights=[weights[n] for n in names])[0]
        d = data[name]
        picks = rng.sample(range(len(d["examples"])), min(args.batch, len(d["examples"])))
        golds = [d["examples"][k][1] for k in picks]
        docs: list[int] = []
        for k, g in zip(picks, golds, strict=True):
            docs.append(rng.choice(g))
            docs.append(rng.choice(d["hard"][k]))
        unique = sorted(set(docs))
        at = {tool: j for j, tool in enumerate(unique)}
        q = upper([d["query_states"][k] for k in picks])
        dv = upper([d["doc_states"][i] for i in unique])
        logits = args.scale * q @ dv.T
        mask = torch.zeros_like(logits)
        target = torch.tensor([at[docs[2 * r]] for r in range(len(picks))])
        for r, g in enumerate(golds):
            for tool in g:
                if tool in at and at[tool] != target[r]:
                    mask[r, at[tool]] = float("-inf")
        loss = torch.nn.functional.cross_entropy(logits + mask, target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 10 == 0:
            print(f"step {step} {name} loss {loss.item():.3f} ({time.time() - started:.0f}s)", flush=True)
        if (step + 1) % args.eval_every == 0 or step == args.steps - 1:
            got = validate()
            print(
                f"step {step} validation R@1 {summary(got):.3f} " + " ".join(f"{k} {v:.3f}" for k, v in got.items()),
                flush=True,
            )
            if summary(got) > best[0]:
                best = (
                    summary(got),
                    step,
                    {k: (m.A.detach().clone(), m.B.detach().clone()) for k, m in wrapped.items()},
                )
                save(best)
    print(f"kept step {best[1]} (validation R@1 {best[0]:.3f})", flush=True)
    save(best)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()

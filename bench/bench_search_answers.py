"""What the search *operations* answer on labelled queries: exact names, the "nothing matches well" cut, top 1.

``bench_search.py`` measures the ranking engine (``rank_tools``). This script measures what an agent gets back
from ``find_tool`` (exact-name hits first, no low-relevance filler) on the same labelled sets, next to the raw
ranking, so a change to the operations can be shown not to lose recall:

* ``example``: the example catalogue's own evals (``catalog_src/evals/*.yaml``);
* ``github``: the GitHub MCP server's 117 tools, each queried by its annotation title (``bench_tokens``);
* ``metatool``: 2,000 sampled MetaTool queries (seed 0), ``bfcl``: every BFCL query (``bench_search``);
* ``livemcp``, ``livemcp-agent`` (report-only; ``TOOLCAT_LIVEMCPBENCH``, bench/livemcp.py): LiveMCPBench's tasks,
  steps and agent-written router queries, or the last alone; the agent's ``server:`` lines reach ``find_tool``.

For each set it prints recall@1, recall@5 and MRR@10 of the raw ranking and of ``find_tool``, how many hits
``find_tool`` returns on average, how many queries get none, and the score distribution of the right tool
(which is what the threshold in :mod:`toolcat.reader.search.searcher` was chosen from).

    python bench/bench_search_answers.py [--sets example,github,metatool,bfcl] [--keep DIR] [--embedder NAME]

``--keep DIR`` keeps the builds in DIR and reuses them on the next run (the reader is what changes).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, bfcl_source, metatool_source, open_build  # noqa: E402
from bench_tokens import CORPUS as MCP_CORPUS  # noqa: E402
from bench_tokens import mcp_source  # noqa: E402
from livemcp import livemcp_agent_source, livemcp_source  # noqa: E402
from livemcp import missing as livemcp_missing  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.reader.search.searcher import Searcher  # noqa: E402

REPO = BENCH.parent
Queries = list[tuple[str, set[str]]]
Maker = Callable[[Path], tuple[dict[str, str], Queries]]


def example_source(root: Path) -> tuple[dict[str, str], Queries]:
    """The example catalogue and its own labelled evals (ids are their own names)."""
    import shutil  # noqa: PLC0415

    shutil.copytree(REPO / "catalog_src", root, dirs_exist_ok=True)
    queries: Queries = []
    for path in sorted((root / "evals").glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]:
            expect = item["expect"]
            queries.append((item["query"], {expect} if isinstance(expect, str) else set(expect)))
    return {}, queries


def github_source(root: Path) -> tuple[dict[str, str], Queries]:
    """The GitHub MCP server's tools, each queried by its annotation title (as bench_tokens does)."""
    snaps = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((MCP_CORPUS / "github-mcp-server" / "toolsnaps").glob("*.json"))
    ]
    _, by_id = mcp_source([("github", t, t["inputSchema"]) for t in snaps], root, "GitHub")
    queries = [(query, {tool_id}) for tool_id, query in sorted(by_id.items())]
    queries.append(("open an issue in a repository", {"github.create_issue"}))
    return {}, queries


SETS: dict[str, tuple[Maker, int | None]] = {
    "example": (example_source, None),
    "github": (github_source, None),
    "metatool": (metatool_source, 2000),
    "bfcl": (bfcl_source, None),
    # report-only, outside ../shared/corpus: TOOLCAT_LIVEMCPBENCH names a LiveMCPBench checkout (bench/livemcp.py)
    "livemcp": (livemcp_source, None),
    "livemcp-agent": (livemcp_agent_source, None),
}
#: The embedder sets are built with (``--embedder``; None: the default tier).
EMBEDDER: list[str | None] = [None]


def prepare(name: str, work: Path) -> tuple[Path, dict[str, str], Queries]:
    """Build a set once (a kept build is reused) and return (build folder, id → label name, queries)."""
    make, sample = SETS[name]
    src, out, saved = work / f"{name}-src", work / f"{name}-build", work / f"{name}-queries.json"
    if out.is_dir() and saved.is_file():
        data = json.loads(saved.read_text(encoding="utf-8"))
        return out, data["back"], [(q, set(g)) for q, g in data["queries"]]
    back, queries = make(src)
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    build(src, out, embedder=EMBEDDER[0])
    saved.write_text(json.dumps({"back": back, "queries": [[q, sorted(g)] for q, g in queries]}), encoding="utf-8")
    return out, back, queries


def rank_of(names: list[str], gold: set[str]) -> int | None:
    return next((i for i, name in enumerate(names[:10]) if name in gold), None)


def metrics(ranks: list[int | None]) -> tuple[float, float, float]:
    n = max(1, len(ranks))
    r1 = sum(1 for r in ranks if r == 0) / n
    r5 = sum(1 for r in ranks if r is not None and r < 5) / n
    mrr = sum(1 / (r + 1) for r in ranks if r is not None) / n
    return r1, r5, mrr


def measure(name: str, work: Path) -> dict[str, Any]:
    out, back, queries = prepare(name, work)
    manifest, fetch = open_build(out)
    searcher = Searcher(manifest, fetch)
    raw_ranks: list[int | None] = []
    op_ranks: list[int | None] = []
    op_sizes: list[int] = []
    empty = 0
    gold_scores: list[float] = []
    top_scores: list[float] = []
    gold_ratio: list[float] = []
    started = time.perf_counter()
    for text, gold in queries:
        hits = searcher.rank_tools(text, limit=10)
        names = [back.get(p["tool_id"], p["tool_id"]) for p, _, _ in hits]
        rank = rank_of(names, gold)
        raw_ranks.append(rank)
        if hits:
            top_scores.append(hits[0][1])
        if rank is not None:
            gold_scores.append(hits[rank][1])
            gold_ratio.append(hits[rank][1] / hits[0][1])
        answer = searcher.find_tool(text, 10)
        matches = [back.get(m["name"], m["name"]) for m in answer.get("matches", [])]
        op_ranks.append(rank_of(matches, gold))
        op_sizes.append(min(5, len(matches)))
        empty += not matches
    exact_hits, exact_total = exact_names(searcher, fetch, manifest)
    elapsed = time.perf_counter() - started
    return {
        "exact": (exact_hits, exact_total),
        "name": name,
        "tools": manifest["counts"]["tools"] + manifest["counts"].get("skills", 0),
        "queries": len(queries),
        "raw": metrics(raw_ranks),
        "op": metrics(op_ranks),
        "shown5": statistics.mean(op_sizes),
        "empty": empty,
        "gold_scores": sorted(gold_scores),
        "top_scores": sorted(top_scores),
        "gold_ratio": sorted(gold_ratio),
        "seconds": elapsed,
    }


def exact_names(
    searcher: Searcher, fetch: Callable[[dict[str, Any]], Any], manifest: dict[str, Any]
) -> tuple[int, int]:
    """Every name of up to 300 tools (id, aliases, skill name), as typed, upper-cased and spaced: top 1 at 1.0?"""
    names: list[tuple[str, str]] = []
    for ref in manifest["lookup"]["refs"]:
        names.extend((name, entry["tool_id"]) for name, entry in fetch(ref)["entries"].items())
    names = random.Random(0).sample(sorted(names), min(300, len(names)))
    hits = total = 0
    for name, tool_id in names:
        for query in dict.fromkeys([name, name.upper(), " ".join(name.replace("_", " ").replace(".", " ").split())]):
            matches = searcher.find_tool(query, 5).get("matches", [])
            total += 1
            hits += bool(matches) and matches[0]["name"] == tool_id and matches[0]["relevance"] == 1.0
    return hits, total


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="example,github,metatool,bfcl")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the builds in this folder")
    parser.add_argument(
        "--embedder", default=None, help="build with this embedder (none: lexical) instead of the default"
    )
    args = parser.parse_args()
    EMBEDDER[0] = args.embedder
    names = [s for s in args.sets.split(",") if s]
    why = livemcp_missing()
    if why is not None and any(n.startswith("livemcp") for n in names):
        names = [n for n in names if not n.startswith("livemcp")]
        print(f"livemcp skipped: {why}")
    if not CORPUS.is_dir() or not MCP_CORPUS.is_dir():
        names = [n for n in names if n == "example"]
        print("corpus not found: only the example catalogue is measured")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows = [measure(name, work) for name in names]
    print("\nSearch operations on labelled queries: raw ranking (rank_tools) vs what find_tool answers\n")
    print(
        "| set | tools | queries | raw R@1 / R@5 / MRR | find_tool R@1 / R@5 / MRR | hits shown (of 5) | no hit "
        "| exact names first at 1.0 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        raw, op = r["raw"], r["op"]
        print(
            f"| {r['name']} | {r['tools']} | {r['queries']} | {raw[0]:.3f} / {raw[1]:.3f} / {raw[2]:.3f} "
            f"| {op[0]:.3f} / {op[1]:.3f} / {op[2]:.3f} | {r['shown5']:.2f} | {r['empty']} "
            f"| {r['exact'][0]} / {r['exact'][1]} |"
        )
    print("\nScore of the right tool when it is in the top 10 (percentiles), and the best score of every query:\n")
    print("| set | right tool p0 / p1 / p5 / p50 | its score / best p0 / p1 / p5 | best score p0 / p1 / p5 / p50 |")
    print("|---|---|---|---|")
    for r in rows:
        g, t, q = r["gold_scores"], r["top_scores"], r["gold_ratio"]
        print(
            f"| {r['name']} | {pct(g, 0):.3f} / {pct(g, 0.01):.3f} / {pct(g, 0.05):.3f} / {pct(g, 0.5):.3f} "
            f"| {pct(q, 0):.3f} / {pct(q, 0.01):.3f} / {pct(q, 0.05):.3f} "
            f"| {pct(t, 0):.3f} / {pct(t, 0.01):.3f} / {pct(t, 0.05):.3f} / {pct(t, 0.5):.3f} |"
        )
    print(f"\n({sum(r['seconds'] for r in rows):.1f}s of queries)")


if __name__ == "__main__":
    main()

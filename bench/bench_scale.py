"""Benchmark builds and cold search at scale: issue 16's target table, measured at 10,000 and 100,000 tools.

For each size, a catalogue from bench/gen_catalog.py (sources and builds reused from
$TMPDIR/toolcat-bench-scale when they did not change):

* full build: wall time and peak RSS, in a fresh process (a build into an empty folder);
* no-change build, and a one-tool edit (one summary) rebuild: wall time and files written,
  in this process (imports are paid once, as in a long CI job or a watch loop);
* cold ``find_tool`` over HTTP from a local host that gzips (as CDNs do): round trips and
  bytes on the wire, after a cold open whose own cost is shown apart.

Sizes: ``TOOLCAT_BENCH_SIZES`` (default ``10000,10000+skills,100000``; the first 100k run builds for
minutes). ``N+skills`` adds the spec-valid skills of the corpus's ``skills-scale`` set (740) to the N generated
tools: the catalogue issue 16 measured its baseline on (skipped with a note where the corpus is absent).
Prints one table, targets beside the figures. Run: ``make bench-scale``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))

from bench_reader import serve  # noqa: E402
from corpus_site_src import CorpusTree, copy_valid_skills  # noqa: E402
from gen_catalog import generate  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.reader import Catalog  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "toolcat-bench-scale"
CORPUS = REPO.parent / "shared" / "corpus"
QUERY = "create a campaign report"
TARGETS = {
    "full build (s)": {"10000": "< 10", "100000": "< 180"},
    "full build peak RSS (MiB)": {"100000": "< 2048"},
    "largest worker's peak RSS (MiB)": {},
    "no-change build (s)": {"10000": "< 0.3"},
    "one-tool edit rebuild (s)": {"10000": "< 2"},
    "files written by a one-tool edit": {"10000": "≤ 50"},
    "cold find_tool round trips (gzip host)": {"10000": "≤ 3", "100000": "≤ 3"},
    "cold find_tool KB on the wire (gzip host)": {"100000": "≤ 150"},
    "cold open KB on the wire (gzip host)": {},
    "index meta KB (raw)": {},
}

FULL_BUILD = """
import resource, sys, time
from pathlib import Path
from toolcat.build import build
started = time.perf_counter()
build(Path(sys.argv[1]), Path(sys.argv[2]))
print(
    time.perf_counter() - started,
    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
)
"""


def _source(size: str) -> Path:
    """``N`` generated tools, or ``N+skills``: the same plus the corpus's spec-valid skills-scale skills."""
    n, _, extra = size.partition("+")
    src = WORK / f"src{n}{'-' + extra if extra else ''}"
    done = src / ("skills" if extra else "_node.yaml")
    if not done.exists():
        shutil.rmtree(src, ignore_errors=True)
        generate(src, int(n))
        if extra:
            copy_valid_skills(CORPUS / "skills-scale", src / "skills", CorpusTree(src))
    return src


def _full_build(src: Path, out: Path) -> tuple[float, float, float]:
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run(
        [sys.executable, "-c", FULL_BUILD, str(src), str(out)], capture_output=True, text=True, check=True
    )
    seconds, rss, worker = done.stdout.split()[-3:]
    return float(seconds), float(rss), float(worker)


def _one_tool_edit(src: Path, out: Path) -> tuple[float, int]:
    """Rebuild after changing one tool's summary; the source is restored (and rebuilt) afterwards."""
    file = min(p for p in src.rglob("*.yaml") if p.name != "_node.yaml" and "skills" not in p.relative_to(src).parts)
    original = file.read_text(encoding="utf-8")
    file.write_text(original.replace("summary: ", "summary: Edited for the benchmark. ", 1), encoding="utf-8")
    try:
        result = build(src, out)
    finally:
        file.write_text(original, encoding="utf-8")
    build(src, out)
    assert result.write is not None  # a changed source always writes
    return result.seconds, result.write.files_written


def _cold_find(out: Path) -> tuple[int, float, float]:
    httpd, url = serve(out, compress=True)
    try:
        with tempfile.TemporaryDirectory() as cache:
            catalog = Catalog.open(url, cache_dir=cache)
            opened = catalog.stats()
            answer = catalog.find_tool(QUERY)
            assert answer.get("ok"), answer
            after = catalog.stats()
    finally:
        httpd.shutdown()
    return (
        after["round_trips"] - opened["round_trips"],
        (after["bytes_downloaded"] - opened["bytes_downloaded"]) / 1024,
        opened["bytes_downloaded"] / 1024,
    )


def _meta_kb(out: Path) -> float:
    manifest_ref = json.loads((out / "catalog.json").read_text())["manifest"]
    manifest = json.loads((out / manifest_ref["path"]).read_text())
    return float(manifest["index"]["bytes"]) / 1024


def measure(size: str) -> dict[str, str]:
    """Every row of the table for a catalogue of ``size`` (``N`` or ``N+skills``)."""
    src = _source(size)
    out = WORK / f"build{size.replace('+', '-')}"
    seconds, rss, worker = _full_build(src, out)
    started = time.perf_counter()
    again = build(src, out)
    no_change = time.perf_counter() - started
    assert again.up_to_date  # the same sources
    edit_seconds, written = _one_tool_edit(src, out)
    trips, find_kb, open_kb = _cold_find(out)
    return {
        "full build (s)": f"{seconds:.1f}",
        "full build peak RSS (MiB)": f"{rss:.0f}",
        "largest worker's peak RSS (MiB)": f"{worker:.0f}",
        "no-change build (s)": f"{no_change:.2f}",
        "one-tool edit rebuild (s)": f"{edit_seconds:.1f}",
        "files written by a one-tool edit": str(written),
        "cold find_tool round trips (gzip host)": str(trips),
        "cold find_tool KB on the wire (gzip host)": f"{find_kb:.0f}",
        "cold open KB on the wire (gzip host)": f"{open_kb:.0f}",
        "index meta KB (raw)": f"{_meta_kb(out):.0f}",
    }


def main() -> None:
    sizes = [s.strip() for s in os.environ.get("TOOLCAT_BENCH_SIZES", "10000,10000+skills,100000").split(",")]
    sizes = [s for s in sizes if s]
    if not (CORPUS / "skills-scale").is_dir() and any("+skills" in s for s in sizes):
        print(f"note: the corpus's skills-scale set is not at {CORPUS}: the +skills columns are skipped")
        sizes = [s for s in sizes if "+skills" not in s]
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    columns = {size: measure(size) for size in sizes}
    print("\nBuilds and cold search at scale (bench/gen_catalog.py catalogues; targets from issue 16)\n")
    labels = [f"{int(s.partition('+')[0]):,} tools{' + skills' if '+' in s else ''}" for s in sizes]
    header = ["measure", *labels, *(f"target {label.replace(' tools', '')}" for label in labels)]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row, target in TARGETS.items():
        figures = [columns[size][row] for size in sizes]
        targets = [target.get(size.partition("+")[0], "") for size in sizes]
        print("| " + " | ".join([row, *figures, *targets]) + " |")
    print(f"\n(measured in {time.perf_counter() - started:.0f}s; builds kept in {WORK})")


if __name__ == "__main__":
    main()

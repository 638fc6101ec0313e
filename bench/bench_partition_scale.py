"""Partitioned against whole tool vectors at scale: the labelled sets padded with ~10,000 distractor tools.

    python bench/bench_partition_scale.py [--sets metatool,bfcl,github] [--pad 10000] [--nprobe 2,4]

The default build partitions only catalogues of more than ``vectors.DEFAULT_PARTITION_MIN`` tools, so a labelled
set's own size says nothing about it. Here each set's tools (bench_search_tiers' sources) are put beside the
``--pad`` tools of a generated catalogue (``gen_catalog.generate``, its namespaces as sibling nodes), built twice
with the default tier: its tool vectors partitioned (the default at this size) and whole (``PARTITION_MIN`` out of
reach). R@1 / R@5 / MRR@10 of the set's labelled queries, on every query and held out, side by side, with the
clusters read per query. The generated tools' rows come from the vector cache after the first run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import split  # noqa: E402
from bench_search_tiers import SETS, metrics, rank  # noqa: E402
from gen_catalog import generate  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.build.contributors import vectors  # noqa: E402
from toolcat.reader.search import semantic  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "toolcat-bench-partition-scale"


def padded(name: str, pad: Path, work: Path) -> tuple[Path, dict[str, str], list[tuple[str, set[str]]]]:
    """The set's source with the generated catalogue's namespaces beside its own; (source, back, queries)."""
    maker, sample = SETS[name]
    src = work / f"{name}-src"
    shutil.rmtree(src, ignore_errors=True)
    back, queries = maker(src)
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    for child in sorted(pad.iterdir()):
        if child.is_dir() and not (src / child.name).exists():
            shutil.copytree(child, src / f"{child.name}")
    return src, back, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="metatool,bfcl,github")
    parser.add_argument("--pad", type=int, default=10_000, help="generated distractor tools beside each set's")
    parser.add_argument("--nprobe", default="", help="also rank the partitioned build reading this many clusters")
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    pad = args.work / f"pad{args.pad}"
    if not (pad / "_node.yaml").is_file():
        generate(pad, args.pad)
    print("| set (tools + distractors) | vectors | R@1 / R@5 / MRR (all) | R@1 / R@5 / MRR (held out) |")
    print("|---|---|---|---|")
    for name in (s for s in args.sets.split(",") if s):
        src, back, queries = padded(name, pad, args.work)
        every = list(range(len(queries)))
        held = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
        runs = []
        for label, threshold in (("whole", 10**9), ("partitioned (default)", None)):
            out = args.work / f"{name}-{label.split()[0]}"
            saved = vectors.PARTITION_MIN
            vectors.PARTITION_MIN = threshold
            try:
                build(src, out, embedder=None)
            finally:
                vectors.PARTITION_MIN = saved
            runs.append((label, rank(out, queries, back)[0]))
            if threshold is None:
                for nprobe in (int(p) for p in args.nprobe.split(",") if p.strip()):
                    semantic.NPROBE = nprobe
                    runs.append((f"partitioned, nprobe {nprobe}", rank(out, queries, back)[0]))
                    semantic.NPROBE = None
        for label, ranked in runs:
            a, h = metrics(ranked, queries, every), metrics(ranked, queries, held)
            print(
                f"| {name} ({len(queries)} queries, {len(held)} held out) | {label} | "
                + " / ".join(f"{x:.3f}" for x in a)
                + " | "
                + " / ".join(f"{x:.3f}" for x in h)
                + " |",
                flush=True,
            )


if __name__ == "__main__":
    main()

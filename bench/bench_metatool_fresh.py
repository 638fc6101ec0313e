"""R@1 / R@5 of find_tool on MetaTool queries that no training step and no reported figure has used.

    python bench/bench_metatool_fresh.py BUILD [--adapter FILE] [--weights FILE]

MetaTool's ``all_clean_data.csv`` holds 20,614 labelled queries. The labelled sets of the benches use 2,000 of them
(``bench_search_tiers.py``: ``random.Random(0).sample``, split 70 / 30 by ``bench_search.split``); the trainers
(``train_encoder.py``, ``train_terms.py``, ``train_fusion.py``) read only queries of the *train* split. So the
test-split queries outside the 2,000 (5,559 distinct texts) were never trained on nor reported: a check, once, of a
choice made while looking at the held-out split (docs/search.md, "Round 3": the soup adapter).

BUILD is a MetaTool build made by ``train_fusion.py --keep DIR`` (``DIR/metatool-minilm-tools``) or by
``bench_search_tiers.py --keep DIR``. ``--adapter`` makes the ``minilm-tools`` spec merge that adapter instead of
the package's (for a build made with another adapter); ``--weights`` ranks with that fusion weights file. One build a
process (the embedder is loaded once); prints its table row. One thread (``OMP_NUM_THREADS=1``).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import metatool_source, open_build, split

from toolcat.engines import embedding
from toolcat.reader.search import fusion_model
from toolcat.reader.search.searcher import Searcher

#: The labelled MetaTool set of the benches: this many queries sampled with random.Random(0) (bench_search_tiers.SETS).
SAMPLE = 2000


def fresh_queries() -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    """(canonical id -> MetaTool name, the test-split queries outside the benches' sample, first label kept)."""
    with tempfile.TemporaryDirectory() as tmp:
        back, queries = metatool_source(Path(tmp))
    sampled = {text for text, _ in random.Random(0).sample(queries, SAMPLE)}
    out: dict[str, set[str]] = {}
    for text, gold in queries:
        if split(text) == "test" and text not in sampled and text not in out:
            out[text] = gold
    return back, list(out.items())


def measure(build: Path, back: dict[str, str], queries: list[tuple[str, set[str]]]) -> tuple[int, int, float]:
    """Right first, right in the top 5, CPU seconds: find_tool(limit=10) of each query on ``build``."""
    searcher = Searcher(*open_build(build))
    first = top5 = 0
    started = time.process_time()
    for text, gold in queries:
        names = [back.get(m["name"], m["name"]) for m in searcher.find_tool(text, 10).get("matches", [])]
        first += bool(names) and names[0] in gold
        top5 += any(name in gold for name in names[:5])
    return first, top5, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "build", type=Path, help="a MetaTool build (train_fusion.py --keep DIR: DIR/metatool-minilm-tools)"
    )
    parser.add_argument("--adapter", type=Path, help="merge this adapter for minilm-tools instead of the package's")
    parser.add_argument("--weights", type=Path, help="rank with this fusion weights file instead of the package's")
    args = parser.parse_args()
    if args.adapter is not None:
        adapter = args.adapter.resolve()
        embedding._adapter = lambda spec: adapter if spec.strip().lower() == "minilm-tools" else None  # noqa: SLF001 - a candidate adapter
    if args.weights is not None:
        fusion_model.WEIGHTS_FILE = args.weights
    back, queries = fresh_queries()
    first, top5, cpu = measure(args.build, back, queries)
    n = len(queries)
    print("\n| build | adapter | weights | queries | R@1 | R@5 | CPU s |\n|---|---|---|---|---|---|---|")
    print(
        f"| {args.build} | {args.adapter or 'the package'} | {args.weights or 'the package'} | {n} "
        f"| {first / n:.4f} ({first}) | {top5 / n:.4f} ({top5}) | {cpu:.0f} |"
    )


if __name__ == "__main__":
    main()
